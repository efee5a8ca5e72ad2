#include "core/tet_gradients.hpp"

#include <Eigen/LU>

namespace datadyn {

TetGradients tet_gradients(const TetMesh& mesh) {
  TetGradients out;
  const Eigen::Index k_count = mesh.tets.rows();
  out.gradient.resize(static_cast<std::size_t>(k_count));
  out.volume.resize(k_count);
  for (Eigen::Index k = 0; k < k_count; ++k) {
    Eigen::Matrix3d dm;
    for (int c = 0; c < 3; ++c)
      dm.col(c) =
          (mesh.vertices.row(mesh.tets(k, c + 1)) - mesh.vertices.row(mesh.tets(k, 0))).transpose();
    const double det = dm.determinant();
    out.volume(k) = det / 6.0;
    auto& g = out.gradient[static_cast<std::size_t>(k)];
    g.setZero();
    if (det != 0.0) {
      const Eigen::Matrix3d inv = dm.inverse();
      g.bottomRows<3>() = inv;
      g.row(0) = -inv.colwise().sum();
    }
  }
  return out;
}

}  // namespace datadyn
