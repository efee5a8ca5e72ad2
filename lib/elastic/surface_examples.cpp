#include "elastic/surface_examples.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include <Eigen/LU>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "core/check.hpp"
#include "core/tet_gradients.hpp"

namespace datadyn::elastic {

SurfacePoseFit particles_from_surface_pose(const TetMesh& mesh, const Embedding& embedding,
                                           const Points3& pose, double smoothness) {
  DATADYN_CHECK_EQ(pose.rows(), embedding.particles.rows());
  DATADYN_CHECK_GT(smoothness, 0.0);
  const Eigen::Index n = mesh.vertices.rows();
  using Triplet = Eigen::Triplet<double>;

  // EᵀE from the barycentric rows of the embedding.
  std::vector<Triplet> ete;
  for (Eigen::Index r = 0; r < embedding.particles.rows(); ++r)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        ete.emplace_back(embedding.particles(r, a), embedding.particles(r, b),
                         embedding.weights(r, a) * embedding.weights(r, b));
  // S = JᵀJ, J x_c = ∇x_c(tet a) − ∇x_c(tet b) for every face shared by tets a and b: zero
  // exactly when x_c is affine over the mesh.
  const std::vector<Eigen::Matrix<double, 4, 3>> grads = tet_gradients(mesh).gradient;
  std::vector<std::pair<std::array<int, 3>, int>> faces;
  for (Eigen::Index t = 0; t < mesh.tets.rows(); ++t) {
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f;
      for (int a = 0, m = 0; a < 4; ++a)
        if (a != skip) f[static_cast<std::size_t>(m++)] = mesh.tets(t, a);
      std::sort(f.begin(), f.end());
      faces.emplace_back(f, static_cast<int>(t));
    }
  }
  std::sort(faces.begin(), faces.end());
  std::vector<Triplet> jt;
  Eigen::Index row = 0;
  for (std::size_t i = 0; i + 1 < faces.size(); ++i) {
    if (faces[i].first != faces[i + 1].first) continue;
    const int ta = faces[i].second, tb = faces[i + 1].second;
    for (int c = 0; c < 3; ++c) {
      for (int v = 0; v < 4; ++v) {
        jt.emplace_back(row + c, mesh.tets(ta, v), grads[static_cast<std::size_t>(ta)](v, c));
        jt.emplace_back(row + c, mesh.tets(tb, v), -grads[static_cast<std::size_t>(tb)](v, c));
      }
    }
    row += 3;
  }
  Eigen::SparseMatrix<double> e2(n, n), jump(row, n);
  e2.setFromTriplets(ete.begin(), ete.end());
  jump.setFromTriplets(jt.begin(), jt.end());
  const Eigen::SparseMatrix<double> lap = jump.transpose() * jump;
  const double lambda = smoothness * e2.diagonal().sum() / std::max(lap.diagonal().sum(), 1e-300);

  // Right-hand side: Eᵀ v (the regulariser pulls towards any affine map, not towards the rest).
  Points3 rhs = Points3::Zero(n, 3);
  for (Eigen::Index r = 0; r < embedding.particles.rows(); ++r)
    for (int a = 0; a < 4; ++a)
      rhs.row(embedding.particles(r, a)) += embedding.weights(r, a) * pose.row(r);

  SurfacePoseFit fit;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver(e2 + lambda * lap);
  fit.solved = solver.info() == Eigen::Success;
  if (!fit.solved) return fit;
  const Eigen::MatrixXd rhs_dense = rhs;
  const Eigen::MatrixXd x = solver.solve(rhs_dense);
  fit.particles = x;

  double sum = 0.0;
  for (Eigen::Index r = 0; r < embedding.particles.rows(); ++r) {
    Eigen::RowVector3d p = Eigen::RowVector3d::Zero();
    for (int a = 0; a < 4; ++a)
      p += embedding.weights(r, a) * fit.particles.row(embedding.particles(r, a));
    const double dist = (p - pose.row(r)).norm();
    sum += dist * dist;
    fit.max_residual = std::max(fit.max_residual, dist);
  }
  fit.rms_residual = std::sqrt(sum / static_cast<double>(std::max<Eigen::Index>(pose.rows(), 1)));
  return fit;
}

}  // namespace datadyn::elastic
