// A rigged mesh as a simulation body: its canonical order, weights carried inside, vertices near
// the bones.

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "flesh/skinned_body.hpp"

using namespace datadyn;
using namespace datadyn::flesh;

TEST_CASE("the canonical order of a surface does not depend on the order it was listed in") {
  // An octahedron, then the same with its vertices shuffled, its faces shuffled and each face
  // started at another corner (as two exports of one mesh may list it): both give the same
  // positions and triangles in canonical order, every face keeping its winding.
  Points3 p(6, 3);
  p << 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1;
  Triangles t(8, 3);
  t << 0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5;
  const std::vector<int> shuffle{4, 0, 5, 2, 1, 3};  // new vertex k is old shuffle[k]
  std::vector<int> position(6);
  Points3 q(6, 3);
  for (int k = 0; k < 6; ++k) {
    q.row(k) = p.row(shuffle[static_cast<std::size_t>(k)]);
    position[static_cast<std::size_t>(shuffle[static_cast<std::size_t>(k)])] = k;
  }
  const std::vector<int> faces{5, 2, 7, 0, 3, 6, 1, 4};
  Triangles u(8, 3);
  for (int f = 0; f < 8; ++f)
    for (int c = 0; c < 3; ++c)
      u(f, c) = position[static_cast<std::size_t>(t(faces[static_cast<std::size_t>(f)],
                                                    (c + f) % 3))];  // started at corner f % 3
  const auto canonical = [](const Points3& x, const Triangles& tris) {
    const CanonicalOrder o = canonical_order(x, tris);
    Points3 y(x.rows(), 3);
    for (Eigen::Index v = 0; v < x.rows(); ++v)
      y.row(o.vertex[static_cast<std::size_t>(v)]) = x.row(v);
    Triangles out(tris.rows(), 3);
    for (Eigen::Index k = 0; k < tris.rows(); ++k)
      for (int c = 0; c < 3; ++c)
        out(k, c) =
            o.vertex[static_cast<std::size_t>(tris(o.triangle[static_cast<std::size_t>(k)],
                                                   (c + o.turn[static_cast<std::size_t>(k)]) % 3))];
    return std::pair{y, out};
  };
  const auto [y1, t1] = canonical(p, t);
  const auto [y2, t2] = canonical(q, u);
  CHECK(y1 == y2);
  CHECK(t1 == t2);
  // By position: x first, then y, then z; each triangle starts at its lowest vertex, and the
  // triangles come in order; the winding is the input's (outward normals stay outward).
  for (Eigen::Index v = 1; v < 6; ++v)
    CHECK(std::make_tuple(y1(v - 1, 0), y1(v - 1, 1), y1(v - 1, 2)) <
          std::make_tuple(y1(v, 0), y1(v, 1), y1(v, 2)));
  for (Eigen::Index k = 0; k < 8; ++k) {
    CHECK(t1(k, 0) < t1(k, 1));
    CHECK(t1(k, 0) < t1(k, 2));
    if (k > 0)
      CHECK(std::make_tuple(t1(k - 1, 0), t1(k - 1, 1), t1(k - 1, 2)) <
            std::make_tuple(t1(k, 0), t1(k, 1), t1(k, 2)));
    const Eigen::Vector3d a = y1.row(t1(k, 0)), b = y1.row(t1(k, 1)), c = y1.row(t1(k, 2));
    CHECK((b - a).cross(c - a).dot(a + b + c) > 0);  // outward, as every input face
  }
}

TEST_CASE("a face with a vertex twice has one canonical turn whichever corner it starts at") {
  // (a, a, b) listed from each of its corners. Turning it to start at its first lowest corner
  // gave (a, a, b) from two of them and (a, b, a) from the third; the least turn is (a, a, b).
  Points3 p(2, 3);
  p << 0, 0, 0, 1, 0, 0;
  for (const auto& [x, y, z] : {std::tuple{0, 0, 1}, std::tuple{0, 1, 0}, std::tuple{1, 0, 0}}) {
    Triangles t(1, 3);
    t << x, y, z;
    const CanonicalOrder o = canonical_order(p, t);
    std::array<int, 3> turned{};
    for (int c = 0; c < 3; ++c)
      turned[static_cast<std::size_t>(c)] =
          o.vertex[static_cast<std::size_t>(t(0, (c + o.turn[0]) % 3))];
    INFO(x << y << z);
    CHECK(turned == std::array<int, 3>{0, 0, 1});
  }
}

TEST_CASE("interior points take the normalised weights of the nearest surface vertex") {
  Points3 surface(3, 3);
  surface << 0, 0, 0, 1, 0, 0, 0, 1, 0;
  Eigen::MatrixXd W(3, 2);
  W << 0.9, 0.0,  // a file's row summing to 0.9
      0.3, 0.9,   // and one summing to 1.2
      0.0, 1.0;
  Points3 points(3, 3);
  points << 0.1, 0.1, 0.2,  // nearest 0
      1, 0, 0,              // vertex 1 itself
      0.2, 0.7, 0;          // nearest 2
  const Eigen::MatrixXd w = nearest_vertex_weights(surface, W, points);
  CHECK(w(0, 0) == doctest::Approx(1.0));
  CHECK(w(0, 1) == 0.0);
  CHECK(w(1, 0) == doctest::Approx(0.25));  // 0.3 / 1.2
  CHECK(w(1, 1) == doctest::Approx(0.75));
  CHECK(w(2, 1) == doctest::Approx(1.0));
  for (Eigen::Index i = 0; i < 3; ++i) CHECK(w.row(i).sum() == doctest::Approx(1.0));
}

TEST_CASE("vertices near a bone are those within the radius of its segment") {
  // Bone 0 a root at (0, 0, 0); bone 1 from it to (0, 1, 0); bone 2 from there to (1, 1, 0).
  const std::vector<Eigen::Vector3d> joints = {Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0, 1, 0),
                                               Eigen::Vector3d(1, 1, 0)};
  const std::vector<int> parents = {-1, 0, 1};
  Points3 p(5, 3);
  p << 0.05, 0.5, 0,  // 0.05 from bone 1's middle
      0, -0.05, 0,    // 0.05 beyond the root joint
      0.5, 1.05, 0,   // 0.05 above bone 2
      0.5, 0.5, 0,    // 0.5 from bones 1 and 2
      0.03, 0.04, 0;  // 0.03 from bone 1 (0.05 from the root joint)
  CHECK(near_bones(p, joints, parents, 0.06) == std::vector<bool>{true, true, true, false, true});
  CHECK(near_bones(p, joints, parents, 0.04) ==
        std::vector<bool>{false, false, false, false, true});
  CHECK(near_bones(p, joints, parents, 0.5) == std::vector<bool>{true, true, true, true, true});
}
