#include "core/voxel_lattice.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "core/mesh_invariants.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {
namespace {

// A closed UV sphere, outward oriented: the poles and `rings - 1` rings of `segments` points.
SurfaceMesh uv_sphere(const Eigen::Vector3d& centre, double r, int rings, int segments) {
  SurfaceMesh s;
  const int n = 2 + (rings - 1) * segments;
  s.vertices.resize(n, 3);
  s.vertices.row(0) = (centre + Eigen::Vector3d(0, r, 0)).transpose();
  s.vertices.row(n - 1) = (centre - Eigen::Vector3d(0, r, 0)).transpose();
  for (int i = 1; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {
      const double theta = std::numbers::pi * i / rings, phi = 2 * std::numbers::pi * j / segments;
      s.vertices.row(1 + (i - 1) * segments + j) =
          (centre + r * Eigen::Vector3d(std::sin(theta) * std::cos(phi), std::cos(theta),
                                        std::sin(theta) * std::sin(phi)))
              .transpose();
    }
  auto ring = [&](int i, int j) { return 1 + (i - 1) * segments + (j % segments); };
  std::vector<Eigen::Vector3i> tris;
  for (int j = 0; j < segments; ++j) {
    tris.emplace_back(0, ring(1, j + 1), ring(1, j));
    tris.emplace_back(n - 1, ring(rings - 1, j), ring(rings - 1, j + 1));
    for (int i = 1; i + 1 < rings; ++i) {
      tris.emplace_back(ring(i, j), ring(i, j + 1), ring(i + 1, j + 1));
      tris.emplace_back(ring(i, j), ring(i + 1, j + 1), ring(i + 1, j));
    }
  }
  s.triangles.resize(static_cast<Eigen::Index>(tris.size()), 3);
  for (std::size_t t = 0; t < tris.size(); ++t)
    s.triangles.row(static_cast<Eigen::Index>(t)) = tris[t].transpose();
  return s;
}

// The unit cube [0, 1]^3 as 12 outward triangles; without_face drops the two of the face x = 1.
SurfaceMesh unit_cube(bool without_face = false) {
  SurfaceMesh s;
  s.vertices.resize(8, 3);
  for (int v = 0; v < 8; ++v) s.vertices.row(v) << (v & 1), ((v >> 1) & 1), ((v >> 2) & 1);
  const int all[12][3] = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6},   // z = 0, z = 1
                          {0, 1, 5}, {0, 5, 4}, {2, 6, 7}, {2, 7, 3},   // y = 0, y = 1
                          {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};  // x = 0, x = 1
  const int count = without_face ? 10 : 12;
  s.triangles.resize(count, 3);
  for (int t = 0; t < count; ++t) s.triangles.row(t) << all[t][0], all[t][1], all[t][2];
  return s;
}

// A point is in a tet when its four barycentric coordinates are >= -eps (eps: rounding of a
// 3 x 3 solve on unit-sized coordinates, 1e-12 with a wide margin).
bool inside_some_tet(const TetMesh& m, const Eigen::Vector3d& p) {
  for (Eigen::Index k = 0; k < m.tets.rows(); ++k) {
    Eigen::Matrix3d e;
    const Eigen::Vector3d x0 = m.vertices.row(m.tets(k, 0));
    for (int c = 0; c < 3; ++c) e.col(c) = m.vertices.row(m.tets(k, c + 1)).transpose() - x0;
    const Eigen::Vector3d b = e.lu().solve(p - x0);
    if (b.minCoeff() >= -1e-12 && b.sum() <= 1 + 1e-12) return true;
  }
  return false;
}

TEST_CASE("winding number: 1 inside and 0 outside a closed surface, 5/6 at an open cube's centre") {
  // Solid angles summed over <= 2,000 triangles, each atan2 good to a few ulps: 1e-10 is a wide
  // bound that still tells 1 from any fraction a missed or doubled triangle would give.
  const SurfaceMesh sphere = uv_sphere(Eigen::Vector3d(0.2, -0.1, 0.3), 1.0, 24, 32);
  REQUIRE(test::divergence_volume(sphere.vertices, sphere.triangles) > 0);  // outward
  CHECK(winding_number(sphere, Eigen::Vector3d(0.2, -0.1, 0.3)) ==
        doctest::Approx(1).epsilon(1e-10));
  CHECK(winding_number(sphere, Eigen::Vector3d(0.7, 0.3, 0.1)) ==
        doctest::Approx(1).epsilon(1e-10));
  CHECK(std::abs(winding_number(sphere, Eigen::Vector3d(1.5, 0, 0))) < 1e-10);
  CHECK(std::abs(winding_number(sphere, Eigen::Vector3d(-3, 7, 2))) < 1e-10);
  // Each face of a cube subtends 4π/6 from its centre: without one face the number is 5/6.
  CHECK(winding_number(unit_cube(true), Eigen::Vector3d(0.5, 0.5, 0.5)) ==
        doctest::Approx(5.0 / 6.0).epsilon(1e-12));
  CHECK(winding_number(unit_cube(), Eigen::Vector3d(0.5, 0.5, 0.5)) ==
        doctest::Approx(1).epsilon(1e-12));
}

TEST_CASE("voxel lattice of a cube: every cell, conforming, the cube's volume") {
  // 0.3 m cells: ceil(1 / 0.3) = 4 per axis, centred, so the cell centres (0.05 .. 0.95) are all
  // inside and the lattice spans [-0.1, 1.1]^3.
  VoxelLatticeSpec spec;
  spec.cell_size = 0.3;
  spec.fill = VoxelFill::Inside;
  const VoxelLattice v = voxel_lattice(unit_cube(), spec);
  CHECK(v.cells_inside == 64);
  CHECK(v.cells_surface == 0);
  CHECK(v.components == 1);
  CHECK(v.mesh.vertices.rows() == 125);
  CHECK(v.mesh.tets.rows() == 64 * 5);
  const Eigen::VectorXd vol = tet_volumes(v.mesh.vertices, v.mesh.tets);
  CHECK(vol.minCoeff() > 0);
  CHECK(vol.sum() == doctest::Approx(1.2 * 1.2 * 1.2).epsilon(1e-12));  // rounding only
}

TEST_CASE(
    "voxel lattice of a sphere: inside cells approach its volume and cover keeps every vertex") {
  const Eigen::Vector3d centre(0.05, 0.1, -0.02);
  const double r = 0.5;
  const SurfaceMesh sphere = uv_sphere(centre, r, 24, 32);
  VoxelLatticeSpec spec;
  spec.cell_size = 0.05;
  spec.fill = VoxelFill::Inside;
  const VoxelLattice inside = voxel_lattice(sphere, spec);
  const double h3 = std::pow(spec.cell_size, 3);
  const double cells_volume = inside.cells_inside * h3;
  const Eigen::VectorXd vol = tet_volumes(inside.mesh.vertices, inside.mesh.tets);
  CHECK(vol.minCoeff() > 0);
  CHECK(vol.sum() == doctest::Approx(cells_volume).epsilon(1e-12));
  // Cells whose centre is inside: the volume of the sphere to within the boundary layer. The
  // error is at most the volume of cells the surface passes through, 4π r² × h √3 (a shell one
  // cell diagonal thick), and in practice a few per cent; 5 % is measured-loose, 4π r² h √3 / V
  // = 52 % would be too loose to catch a wrong sign or offset of half a cell (15 %).
  const double sphere_volume = 4.0 / 3.0 * std::numbers::pi * r * r * r;
  CHECK(cells_volume == doctest::Approx(sphere_volume).epsilon(0.05));
  // Conforming: no face shared by three tets, and a solid ball (V - E + F - T = 1).
  const test::TetComplexCounts counts = test::tet_complex_counts(inside.mesh.tets);
  CHECK(counts.faces_used_more_than_twice == 0);
  CHECK(counts.euler() == 1);
  CHECK(inside.components == 1);

  spec.fill = VoxelFill::Cover;
  const VoxelLattice cover = voxel_lattice(sphere, spec);
  CHECK(cover.cells_surface > 0);
  CHECK(cover.cells_inside + cover.cells_surface > inside.cells_inside);
  int outside = 0;
  for (Eigen::Index i = 0; i < sphere.vertices.rows(); ++i)
    outside += !inside_some_tet(cover.mesh, sphere.vertices.row(i).transpose());
  CHECK(outside == 0);
}

TEST_CASE("voxel lattice keeps the largest of two separate bodies") {
  SurfaceMesh two = uv_sphere(Eigen::Vector3d::Zero(), 0.5, 12, 16);
  const SurfaceMesh small = uv_sphere(Eigen::Vector3d(2, 0, 0), 0.25, 12, 16);
  const Eigen::Index nv = two.vertices.rows(), nt = two.triangles.rows();
  two.vertices.conservativeResize(nv + small.vertices.rows(), 3);
  two.vertices.bottomRows(small.vertices.rows()) = small.vertices;
  two.triangles.conservativeResize(nt + small.triangles.rows(), 3);
  two.triangles.bottomRows(small.triangles.rows()) = small.triangles.array() + static_cast<int>(nv);
  VoxelLatticeSpec spec;
  spec.cell_size = 0.1;
  const VoxelLattice v = voxel_lattice(two, spec);
  CHECK(v.components == 2);
  CHECK(v.cells_dropped > 0);
  CHECK(v.mesh.vertices.col(0).maxCoeff() < 1.0);  // nothing of the small sphere at x = 2
  spec.largest_component = false;
  const VoxelLattice both = voxel_lattice(two, spec);
  CHECK(both.cells_dropped == 0);
  CHECK(both.cells_inside + both.cells_surface ==
        v.cells_inside + v.cells_surface + v.cells_dropped);
}

TEST_CASE("voxel lattice of an open cube still fills its interior") {
  // The missing face x = 1 (a 1 x 1 square) seen from (0.875, 0.5, 0.5), on its axis at
  // d = 0.125, subtends 4 atan(a b / (d sqrt(a^2 + b^2 + d^2))) with half-sides a = b = 0.5, so
  // the winding number there is 1 - that / 4π = 0.61: the cells next to the hole stay inside,
  // where a ray-parity test would flip with the ray's direction.
  const SurfaceMesh open = unit_cube(true);
  const double a = 0.5, d = 0.125;
  const double hole = 4 * std::atan(a * a / (d * std::sqrt(2 * a * a + d * d)));
  CHECK(winding_number(open, Eigen::Vector3d(0.875, 0.5, 0.5)) ==
        doctest::Approx(1 - hole / (4 * std::numbers::pi)).epsilon(1e-12));
  VoxelLatticeSpec spec;
  spec.cell_size = 0.25;
  spec.fill = VoxelFill::Inside;
  const VoxelLattice v = voxel_lattice(open, spec);
  CHECK(v.cells_inside == 64);
  CHECK(inside_some_tet(v.mesh, Eigen::Vector3d(0.5, 0.5, 0.5)));
}

}  // namespace
}  // namespace datadyn
