#include "core/tet_gradients.hpp"

#include <doctest/doctest.h>

#include <random>

#include "core/lattice.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {
namespace {

TEST_CASE("tet gradients reproduce the gradient of any linear field and sum to zero") {
  CylinderLatticeSpec c;
  c.rings = 2, c.segments = 7, c.layers = 3;
  TetMesh mesh = cylinder_lattice(c);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.03, 0.03);
  for (Eigen::Index v = 0; v < mesh.vertices.rows(); ++v)
    for (int d = 0; d < 3; ++d) mesh.vertices(v, d) += u(rng);  // irregular, still positive
  const TetGradients g = tet_gradients(mesh);
  const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
  const Eigen::Vector3d a(0.3, -1.7, 2.2);
  const double b = 0.9;
  for (Eigen::Index k = 0; k < mesh.tets.rows(); ++k) {
    INFO("tet " << k);
    const auto& grad = g.gradient[static_cast<std::size_t>(k)];
    // f(x) = a·x + b at the corners; Σ f_a ∇φ_a = a. Rounding of a 3 x 3 inverse on
    // 0.1 m-sized tets: 1e-10 relative to |a| is generous.
    Eigen::Vector3d recovered = Eigen::Vector3d::Zero();
    for (int v = 0; v < 4; ++v)
      recovered +=
          (a.dot(mesh.vertices.row(mesh.tets(k, v)).transpose()) + b) * grad.row(v).transpose();
    CHECK((recovered - a).norm() < 1e-10 * a.norm());
    CHECK(grad.colwise().sum().norm() < 1e-9);  // constants have no gradient
    CHECK(g.volume(k) == doctest::Approx(volumes(k)).epsilon(1e-12));
  }
}

TEST_CASE("a flat tet gets zero gradients and zero volume") {
  TetMesh flat;
  flat.vertices.resize(4, 3);
  flat.vertices << 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0;
  flat.tets.resize(1, 4);
  flat.tets << 0, 1, 2, 3;
  const TetGradients g = tet_gradients(flat);
  CHECK(g.volume(0) == 0.0);
  CHECK(g.gradient[0].isZero());
}

}  // namespace
}  // namespace datadyn
