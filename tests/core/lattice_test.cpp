#include "core/lattice.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/errors.hpp"
#include "core/mesh_invariants.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {
namespace {

// Volumes: each tet volume is a 3 by 3 determinant of coordinate differences (~10 flops, relative
// error a few ulps); a sum of #K positive terms adds at most #K ulps. For the meshes here
// (#K < 10^4) 1e-12 relative is a bound with a wide margin that still catches a missing or
// doubled tet (relative error >= 1/#K > 1e-4).
constexpr double kVolumeTol = 1e-12;

// Invariants every lattice must satisfy: positive tets, conforming (Euler characteristic of a
// ball, no face in three tets), closed outward boundary of a sphere, symmetric 1-ring.
void check_ball_mesh(const TetMesh& mesh, double expected_volume) {
  const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
  CHECK(volumes.minCoeff() > 0.0);
  CHECK(volumes.sum() == doctest::Approx(expected_volume).epsilon(kVolumeTol));

  const test::TetComplexCounts counts = test::tet_complex_counts(mesh.tets);
  CHECK(counts.vertices == mesh.vertices.rows());  // every vertex is used
  CHECK(counts.faces_used_more_than_twice == 0);
  // V - E + F - T = 1 for a triangulated ball. A non-conforming split (mismatched face
  // diagonals) adds faces and edges and breaks this.
  CHECK(counts.euler() == 1);

  const Triangles boundary = boundary_triangles(mesh.tets);
  const test::SurfaceEdgeReport edges = test::surface_edges(boundary);
  CHECK(edges.non_two == 0);            // closed: every edge in exactly two triangles
  CHECK(edges.unpaired_directed == 0);  // consistently oriented
  // Euler characteristic of the boundary surface: 2 for a sphere.
  CHECK(edges.vertices - edges.edges + boundary.rows() == 2);
  // Outward: divergence theorem on the boundary gives the (positive) volume, same rounding
  // argument as above.
  CHECK(test::divergence_volume(mesh.vertices, boundary) ==
        doctest::Approx(expected_volume).epsilon(kVolumeTol));
  CHECK(test::inward_or_orphan_boundary_triangles(mesh.vertices, mesh.tets, boundary) == 0);

  const auto ring = vertex_one_ring(mesh.tets, static_cast<int>(mesh.vertices.rows()));
  int asymmetric = 0;
  for (int i = 0; i < static_cast<int>(ring.size()); ++i)
    for (int j : ring[static_cast<std::size_t>(i)]) {
      const auto& rj = ring[static_cast<std::size_t>(j)];
      asymmetric += !std::binary_search(rj.begin(), rj.end(), i);
    }
  CHECK(asymmetric == 0);
}

// Neighbour count of lattice vertex (i, j, k) for a set of lattice offsets: the offsets d with
// (i, j, k) + d inside the box.
int neighbours_in_box(int i, int j, int k, int nx, int ny, int nz,
                      const std::vector<Eigen::Vector3i>& offsets) {
  int n = 0;
  for (const auto& d : offsets) {
    const int a = i + d.x(), b = j + d.y(), c = k + d.z();
    n += a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz;
  }
  return n;
}

TEST_CASE("box_lattice: counts, positions, volumes and boundary for 5 and 6 tets per cell") {
  for (int per_cell : {5, 6}) {
    BoxLatticeSpec spec;
    spec.nx = 4;
    spec.ny = 3;
    spec.nz = 5;
    spec.min_corner = Eigen::Vector3d(-1.0, 0.5, 2.0);
    spec.max_corner = Eigen::Vector3d(2.0, 1.5, 3.5);
    spec.tets_per_cell = per_cell;
    INFO("tets per cell " << per_cell);
    const TetMesh mesh = box_lattice(spec);
    const int cells = 3 * 2 * 4;
    REQUIRE(mesh.vertices.rows() == 4 * 3 * 5);
    REQUIRE(mesh.tets.rows() == per_cell * cells);
    // Vertex (i, j, k) is row i + nx (j + ny k); spacing (1, 0.5, 0.375). Exact up to one
    // rounding of min + i h.
    const Eigen::Vector3d h(1.0, 0.5, 0.375);
    for (int k = 0; k < 5; ++k)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 4; ++i) {
          const Eigen::Vector3d expected =
              spec.min_corner + Eigen::Vector3d(i, j, k).cwiseProduct(h);
          CHECK((mesh.vertices.row(i + 4 * (j + 3 * k)).transpose() - expected).norm() <=
                1e-15 * 4);
        }
    const double box_volume = 3.0 * 1.0 * 1.5;
    check_ball_mesh(mesh, box_volume);

    // Per-tet volumes in closed form: Kuhn tets are all cell / 6; the 5-split has four corner
    // tets of cell / 6 and a central tet of cell / 3.
    const double cell = box_volume / cells;
    const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
    for (Eigen::Index t = 0; t < mesh.tets.rows(); ++t) {
      const bool central = per_cell == 5 && t % 5 == 4;
      CHECK(volumes(t) == doctest::Approx(central ? cell / 3 : cell / 6).epsilon(kVolumeTol));
    }

    // Boundary: 2 triangles per boundary face of a cell, and every lattice point on the box
    // surface is a boundary vertex.
    const Triangles boundary = boundary_triangles(mesh.tets);
    CHECK(boundary.rows() == 2 * 2 * (3 * 2 + 2 * 4 + 3 * 4));
    CHECK(test::surface_edges(boundary).vertices == 4 * 3 * 5 - 2 * 1 * 3);
  }
}

TEST_CASE("box_lattice: 1-ring sizes match the lattice stencils") {
  const int n = 4;  // interior points of both parities: indices 1..2
  for (int per_cell : {5, 6}) {
    BoxLatticeSpec spec;
    spec.nx = spec.ny = spec.nz = n;
    spec.tets_per_cell = per_cell;
    const TetMesh mesh = box_lattice(spec);
    const auto ring = vertex_one_ring(mesh.tets, static_cast<int>(mesh.vertices.rows()));
    // Stencils.
    // 6 tets (Kuhn): edges along every nonzero 0/1 vector and its negative: 14 directions.
    // 5 tets with alternating parity: a vertex with (i + j + k) even is a corner of the central
    // tet in every cell around it, so it connects along the 6 axis directions and the 12 face
    // diagonals (±1, ±1, 0), ...; a vertex with odd parity is the apex of a corner tet in every
    // cell and connects along the 6 axis directions only.
    std::vector<Eigen::Vector3i> axis, diagonal, kuhn;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c) {
          const int nonzero = (a != 0) + (b != 0) + (c != 0);
          const Eigen::Vector3i d(a, b, c);
          if (nonzero == 1) axis.push_back(d);
          if (nonzero == 2) diagonal.push_back(d);
          // Kuhn edges: d or -d has all entries in {0, 1}.
          if (nonzero > 0 && ((a >= 0 && b >= 0 && c >= 0) || (a <= 0 && b <= 0 && c <= 0)))
            kuhn.push_back(d);
        }
    REQUIRE(axis.size() == 6);
    REQUIRE(diagonal.size() == 12);
    REQUIRE(kuhn.size() == 14);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          int expected = 0;
          if (per_cell == 6) {
            expected = neighbours_in_box(i, j, k, n, n, n, kuhn);
          } else {
            expected = neighbours_in_box(i, j, k, n, n, n, axis);
            if ((i + j + k) % 2 == 0) expected += neighbours_in_box(i, j, k, n, n, n, diagonal);
          }
          INFO("per cell " << per_cell << " vertex " << i << " " << j << " " << k);
          CHECK(ring[static_cast<std::size_t>(i + n * (j + n * k))].size() ==
                static_cast<std::size_t>(expected));
        }
    // The derived numbers for a few vertices, written out.
    auto size = [&](int i, int j, int k) {
      return ring[static_cast<std::size_t>(i + n * (j + n * k))].size();
    };
    if (per_cell == 5) {
      CHECK(size(0, 0, 0) == 6);   // even corner: 3 axis + 3 face diagonals
      CHECK(size(3, 0, 0) == 3);   // odd corner: 3 axis edges only
      CHECK(size(1, 1, 2) == 18);  // even interior: 6 axis + 12 face diagonals
      CHECK(size(1, 1, 1) == 6);   // odd interior: 6 axis
    } else {
      CHECK(size(0, 0, 0) == 7);  // +x, +y, +z, +xy, +xz, +yz, +xyz
      CHECK(size(3, 0, 0) == 4);  // -x, +y, +z, +yz
      CHECK(size(1, 1, 1) == 14);
    }
  }
}

TEST_CASE("box_lattice: smallest box (one cell)") {
  for (int per_cell : {5, 6}) {
    BoxLatticeSpec spec;
    spec.tets_per_cell = per_cell;
    spec.max_corner = Eigen::Vector3d(1e-3, 2e-3, 3e-3);  // millimetre box: scale independence
    const TetMesh mesh = box_lattice(spec);
    CHECK(mesh.vertices.rows() == 8);
    CHECK(mesh.tets.rows() == per_cell);
    check_ball_mesh(mesh, 6e-9);
    CHECK(boundary_triangles(mesh.tets).rows() == 12);
  }
}

TEST_CASE("box_lattice: invalid specs are programmer errors") {
  BoxLatticeSpec spec;
  spec.nx = 1;
  CHECK_THROWS_AS(box_lattice(spec), InternalError);
  spec.nx = 2;
  spec.tets_per_cell = 4;
  CHECK_THROWS_AS(box_lattice(spec), InternalError);
  spec.tets_per_cell = 5;
  spec.max_corner = Eigen::Vector3d(1.0, 0.0, 1.0);  // zero extent in y
  CHECK_THROWS_AS(box_lattice(spec), InternalError);
}

TEST_CASE("cylinder_lattice: counts, volume of the inscribed prism, closed outward boundary") {
  struct Case {
    int rings, segments, layers;
  };
  for (const Case c : {Case{1, 3, 1}, Case{2, 12, 4}, Case{3, 16, 5}}) {
    CylinderLatticeSpec spec;
    spec.radius = 0.3;
    spec.height = 1.7;
    spec.rings = c.rings;
    spec.segments = c.segments;
    spec.layers = c.layers;
    spec.base = Eigen::Vector3d(0.25, -1.0, 2.0);
    INFO("rings " << c.rings << " segments " << c.segments << " layers " << c.layers);
    const TetMesh mesh = cylinder_lattice(spec);
    const int per_section = 1 + c.rings * c.segments;
    CHECK(mesh.vertices.rows() == (c.layers + 1) * per_section);
    const int disk_triangles = c.segments * (2 * c.rings - 1);
    CHECK(mesh.tets.rows() == 3 * disk_triangles * c.layers);

    // Regular n-gon inscribed in the circle: area (n / 2) r^2 sin(2π / n).
    const double n = c.segments;
    const double volume =
        spec.height * 0.5 * n * spec.radius * spec.radius * std::sin(2.0 * std::numbers::pi / n);
    check_ball_mesh(mesh, volume);

    // Boundary: the two disks and two triangles per side quad; every boundary vertex lies on
    // the outer ring or a cap. Positions: sin/cos to 1 ulp, 1e-14 m margin on metre-sized data.
    const Triangles boundary = boundary_triangles(mesh.tets);
    CHECK(boundary.rows() == 2 * disk_triangles + 2 * c.segments * c.layers);
    CHECK(test::surface_edges(boundary).vertices == 2 * per_section + (c.layers - 1) * c.segments);
    for (Eigen::Index t = 0; t < boundary.rows(); ++t)
      for (int k = 0; k < 3; ++k) {
        const Eigen::Vector3d x = mesh.vertices.row(boundary(t, k));
        const double r = std::hypot(x.x() - spec.base.x(), x.z() - spec.base.z());
        const bool cap = std::abs(x.y() - spec.base.y()) <= 1e-14 ||
                         std::abs(x.y() - spec.base.y() - spec.height) <= 1e-14;
        CHECK((cap || std::abs(r - spec.radius) <= 1e-14));
      }
    // All vertices inside the cylinder.
    for (Eigen::Index v = 0; v < mesh.vertices.rows(); ++v) {
      const Eigen::Vector3d x = mesh.vertices.row(v);
      CHECK(std::hypot(x.x() - spec.base.x(), x.z() - spec.base.z()) <= spec.radius + 1e-14);
      CHECK(x.y() >= spec.base.y());
      CHECK(x.y() <= spec.base.y() + spec.height);
    }
  }
}

TEST_CASE("cylinder_lattice: invalid specs are programmer errors") {
  CylinderLatticeSpec spec;
  spec.segments = 2;
  CHECK_THROWS_AS(cylinder_lattice(spec), InternalError);
  spec.segments = 8;
  spec.radius = 0.0;
  CHECK_THROWS_AS(cylinder_lattice(spec), InternalError);
}

}  // namespace
}  // namespace datadyn
