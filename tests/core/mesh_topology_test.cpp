#include "core/mesh_topology.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "core/mesh_invariants.hpp"

namespace datadyn {
namespace {

// The unit corner tet: volume 1/6, positively oriented.
Points3 unit_tet_points() {
  Points3 x(4, 3);
  x << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  return x;
}

std::vector<std::array<int, 3>> sorted_faces(const Triangles& tris) {
  std::vector<std::array<int, 3>> faces;
  for (Eigen::Index t = 0; t < tris.rows(); ++t) {
    std::array<int, 3> f = {tris(t, 0), tris(t, 1), tris(t, 2)};
    // Rotate so the smallest index is first: keeps the winding, compares as a set of triangles.
    std::rotate(f.begin(), std::min_element(f.begin(), f.end()), f.end());
    faces.push_back(f);
  }
  std::sort(faces.begin(), faces.end());
  return faces;
}

TEST_CASE("tet_volumes: unit tet, inversion, orient_tets_positive") {
  const Points3 x = unit_tet_points();
  Tets tets(2, 4);
  tets << 0, 1, 2, 3,  //
      0, 2, 1, 3;      // two vertices swapped: inverted
  const Eigen::VectorXd v = tet_volumes(x, tets);
  // Exact: the determinant of the identity is computed without rounding.
  CHECK(v(0) == doctest::Approx(1.0 / 6.0).epsilon(1e-15));
  CHECK(v(1) == doctest::Approx(-1.0 / 6.0).epsilon(1e-15));
  const Tets oriented = orient_tets_positive(x, tets);
  CHECK(oriented.row(0) == tets.row(0));  // already positive: untouched
  CHECK(oriented.row(1) == Eigen::RowVector4i(0, 2, 3, 1));
  CHECK(tet_volumes(x, oriented).minCoeff() > 0.0);
}

TEST_CASE("tet_volumes: rigid motions keep volumes, scaling by s multiplies by s^3") {
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Points3 x(20, 3);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = u(rng);
  Tets tets(30, 4);
  std::uniform_int_distribution<int> pick(0, 19);
  for (Eigen::Index k = 0; k < tets.rows(); ++k) {
    std::array<int, 4> t;
    do {
      for (int& c : t) c = pick(rng);
    } while (std::set<int>(t.begin(), t.end()).size() < 4);
    tets.row(k) << t[0], t[1], t[2], t[3];
  }
  const Eigen::VectorXd v = tet_volumes(x, tets);
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  const Eigen::RowVector3d shift(5.0, -3.0, 2.0);
  const Points3 moved = (x * R.transpose()).rowwise() + shift;
  // Differences of coordinates of size ~10 lose ~10 ulps against the unshifted ones; volumes
  // are ~0.1, so an absolute 1e-13 is a margin of ~100 over rounding and far below any volume.
  CHECK((tet_volumes(moved, tets) - v).cwiseAbs().maxCoeff() <= 1e-13);
  for (double s : {1e-6, 1e6}) {
    INFO("scale " << s);
    const Eigen::VectorXd vs = tet_volumes(Points3(s * x), tets);
    CHECK((vs / (s * s * s) - v).cwiseAbs().maxCoeff() <= 1e-14);
  }
}

TEST_CASE("boundary_triangles: one tet gives its four faces, outward") {
  const Points3 x = unit_tet_points();
  Tets tets(1, 4);
  tets << 0, 1, 2, 3;
  const Triangles b = boundary_triangles(tets);
  REQUIRE(b.rows() == 4);
  // Documented order: faces opposite vertex 0, 1, 2, 3.
  CHECK(b.row(0) == Eigen::RowVector3i(1, 2, 3));
  CHECK(b.row(1) == Eigen::RowVector3i(0, 3, 2));
  CHECK(b.row(2) == Eigen::RowVector3i(0, 1, 3));
  CHECK(b.row(3) == Eigen::RowVector3i(0, 2, 1));
  CHECK(test::inward_or_orphan_boundary_triangles(x, tets, b) == 0);
  // Divergence theorem on the boundary returns the volume: exact arithmetic on 0/1 data up to
  // one rounding of 1/3 and 1/6.
  CHECK(test::divergence_volume(x, b) == doctest::Approx(1.0 / 6.0).epsilon(1e-15));
}

TEST_CASE("boundary_triangles: shared faces are interior, order does not matter") {
  // Two tets glued on face (1, 2, 3), the second one mirrored through it.
  Points3 x(5, 3);
  x << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1;
  Tets tets(2, 4);
  tets << 0, 1, 2, 3,  //
      4, 1, 3, 2;
  REQUIRE(tet_volumes(x, tets).minCoeff() > 0.0);
  const Triangles b = boundary_triangles(tets);
  CHECK(b.rows() == 6);
  const test::SurfaceEdgeReport e = test::surface_edges(b);
  CHECK(e.non_two == 0);
  CHECK(e.unpaired_directed == 0);
  CHECK(test::inward_or_orphan_boundary_triangles(x, tets, b) == 0);
  CHECK(test::divergence_volume(x, b) ==
        doctest::Approx(tet_volumes(x, tets).sum()).epsilon(1e-15 * 10));
  // Reversing the tet order gives the same set of (oriented) triangles.
  Tets reversed(2, 4);
  reversed << tets.row(1), tets.row(0);
  CHECK(sorted_faces(boundary_triangles(reversed)) == sorted_faces(b));
  // A face used by three tets (non-manifold) is not a boundary face.
  Tets three(3, 4);
  three << tets, 0, 1, 2, 3;  // duplicate of the first tet
  for (const auto& f : sorted_faces(boundary_triangles(three))) {
    std::array<int, 3> key = f;
    std::sort(key.begin(), key.end());
    CHECK(key != std::array<int, 3>{1, 2, 3});
  }
}

TEST_CASE("vertex_one_ring: sorted, symmetric, without self, empty for unused vertices") {
  Tets tets(2, 4);
  tets << 0, 1, 2, 3,  //
      4, 1, 3, 2;
  const auto ring = vertex_one_ring(tets, 6);  // vertex 5 unused
  REQUIRE(ring.size() == 6);
  CHECK(ring[0] == std::vector<int>{1, 2, 3});
  CHECK(ring[1] == std::vector<int>{0, 2, 3, 4});
  CHECK(ring[4] == std::vector<int>{1, 2, 3});
  CHECK(ring[5].empty());
}

TEST_CASE("mesh_topology: out-of-range indices are programmer errors") {
  Tets tets(1, 4);
  tets << 0, 1, 2, 4;
  CHECK_THROWS_AS(tet_volumes(unit_tet_points(), tets), InternalError);
  CHECK_THROWS_AS(vertex_one_ring(tets, 4), InternalError);
}

}  // namespace
}  // namespace datadyn

TEST_CASE("orient_outward turns an inward closed surface and its texture corners, and only it") {
  // A tetrahedron's surface, outward (counter-clockwise seen from outside).
  datadyn::Points3 x(4, 3);
  x << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  datadyn::Triangles outward(4, 3);
  outward << 0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3;
  datadyn::Triangles corners(4, 3);
  corners << 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;
  datadyn::Triangles t = outward, c = corners;
  CHECK_FALSE(datadyn::orient_outward(x, t, c));
  CHECK(t == outward);
  CHECK(c == corners);
  // Wound inward: every triangle turned back, each corner keeping its texture index.
  datadyn::Triangles inward = outward;
  inward.col(1).swap(inward.col(2));
  datadyn::Triangles inward_corners = corners;
  inward_corners.col(1).swap(inward_corners.col(2));
  CHECK(datadyn::orient_outward(x, inward, inward_corners));
  CHECK(inward == outward);
  CHECK(inward_corners == corners);
  // Without texture corners.
  datadyn::Triangles none;
  inward.col(1).swap(inward.col(2));
  CHECK(datadyn::orient_outward(x, inward, none));
  CHECK(inward == outward);
  CHECK(none.rows() == 0);
  // An open surface has no inside: the face away from the origin alone, wound towards it (a
  // negative signed volume, which flipped it), stays as it is.
  datadyn::Triangles open(1, 3);
  open << 1, 3, 2;
  const datadyn::Triangles before = open;
  CHECK_FALSE(datadyn::orient_outward(x, open, none));
  CHECK(open == before);
}
