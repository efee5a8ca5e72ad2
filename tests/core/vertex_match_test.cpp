#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/vertex_match.hpp"

using namespace datadyn;

namespace {

/// A jittered n x n x n lattice of spacing 1: no two points closer than 0.6.
Points3 lattice(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.2, 0.2);
  Points3 p(n * n * n, 3);
  for (int i = 0; i < n * n * n; ++i)
    p.row(i) << i % n + jitter(rng), (i / n) % n + jitter(rng), i / (n * n) + jitter(rng);
  return p;
}

}  // namespace

TEST_CASE("vertex match: a permuted copy with vertices split at seams finds every original") {
  const Points3 points = lattice(6, 7);
  // The reference: every point once in a shuffled order, then 20 of them again (a seam split in
  // the DCC mesh, welded in the simulation), each moved by float32-like rounding (1e-7).
  std::vector<int> order(static_cast<std::size_t>(points.rows()));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  for (int k = 0; k < 20; ++k) order.push_back(order[static_cast<std::size_t>(k * 7)]);
  Points3 reference(static_cast<Eigen::Index>(order.size()), 3);
  std::uniform_real_distribution<double> rounding(-1e-7, 1e-7);
  for (std::size_t j = 0; j < order.size(); ++j)
    reference.row(static_cast<Eigen::Index>(j)) =
        points.row(order[j]) + Eigen::RowVector3d(rounding(rng), rounding(rng), rounding(rng));
  const VertexMatch m = match_vertices(points, reference, 1e-4);
  CHECK(m.point == order);
  CHECK(m.unmatched == 0);
  CHECK(m.unreached == 0);
  CHECK(m.first_unmatched == -1);
  CHECK(m.ambiguous == 0);
  // The same at 1e6 times the size with the tolerance scaled alike (the hash cells scale too).
  const VertexMatch big = match_vertices(points * 1e6, reference * 1e6, 1e2);
  CHECK(big.point == order);
}

TEST_CASE("vertex match: the tolerance decides, and what is left over is counted") {
  Points3 points(4, 3);
  points << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  Points3 reference(3, 3);
  // Within the tolerance of point 1, just beyond it of point 2, far from everything.
  reference << 1 + 0.9e-3, 0, 0, 0, 1 + 1.1e-3, 0, 5, 5, 5;
  const VertexMatch m = match_vertices(points, reference, 1e-3);
  CHECK(m.point == std::vector<int>{1, -1, -1});
  CHECK(m.unmatched == 2);
  CHECK(m.unreached == 3);  // points 0, 2 and 3
  CHECK(m.first_unmatched == 1);
  CHECK(m.first_unmatched_distance == doctest::Approx(1.1e-3).epsilon(1e-9));  // to point 2
  // Nothing to match against: every vertex unmatched, at no finite distance.
  const VertexMatch none = match_vertices(Points3(0, 3), reference, 1e-3);
  CHECK(none.unmatched == 3);
  CHECK(std::isinf(none.first_unmatched_distance));
}

TEST_CASE("vertex match: of two points within the tolerance the nearer wins, ties the lower") {
  Points3 points(3, 3);
  points << 0, 0, 0, 2e-4, 0, 0, -2e-4, 0, 0;  // points 1 and 2 equally far from the origin
  Points3 reference(2, 3);
  reference << 1.5e-4, 0, 0, 0, 0, 0;
  CHECK(match_vertices(points, reference, 1e-3).point == std::vector<int>{1, 0});
  Points3 twins(2, 3);
  twins << 2e-4, 0, 0, -2e-4, 0, 0;  // the tie: both 2e-4 from the origin
  Points3 origin = Points3::Zero(1, 3);
  CHECK(match_vertices(twins, origin, 1e-3).point == std::vector<int>{0});
  CHECK(match_vertices(twins.colwise().reverse(), origin, 1e-3).point == std::vector<int>{0});
  // Both within the tolerance: counted as ambiguous (the other one's motion is in no vertex).
  const VertexMatch m = match_vertices(points, reference, 1e-3);
  CHECK(m.ambiguous == 2);
  CHECK(m.first_ambiguous == 0);
  CHECK(match_vertices(points, reference, 1e-4).ambiguous == 0);  // each alone within 1e-4
}

TEST_CASE("welding merges vertices closer than the tolerance and keeps the others") {
  Points3 p(6, 3);
  p << 0, 0, 0,      //
      1, 0, 0,       //
      0, 0, 0.4e-6,  // 0's twin, 0.4 µm away
      1, 0, 0,       // 1's exact twin
      0, 0, 2e-6,    // 2 µm from 0: its own vertex
      1e-6, 1, -3;   //
  const auto w = weld_vertices(p, 1e-6);
  CHECK(w.index == std::vector<int>{0, 1, 0, 1, 2, 3});
  REQUIRE(w.points.rows() == 4);
  for (Eigen::Index v = 0; v < p.rows(); ++v)
    CHECK((w.points.row(w.index[static_cast<std::size_t>(v)]) - p.row(v)).norm() < 1e-6);
  // Cells of the hash grid do not split twins across a cell boundary (0.5 tolerance rounds up
  // on one side and down on the other).
  Points3 q(2, 3);
  q << 0.49e-6, 0, 0, 0.51e-6, 0, 0;
  CHECK(weld_vertices(q, 1e-6).points.rows() == 1);
}

TEST_CASE("welding joins a vertex to the nearest merged vertex, whichever cell it is in") {
  // a and b are 1.5 tolerances apart, so both stay; c is within the tolerance of both and
  // nearer b (0.6 against 0.9). Hashed by rounding, a's cell was searched first and took c.
  Points3 p(3, 3);
  p << 0, 0, 0,      //
      1.5e-6, 0, 0,  //
      0.9e-6, 0, 0;
  CHECK(weld_vertices(p, 1e-6).index == std::vector<int>{0, 1, 1});
  // Far from the origin (a character placed 1 km out, in millimetres) the same.
  Points3 far = p;
  far.col(1).array() += 1e6;
  CHECK(weld_vertices(far, 1e-6).index == std::vector<int>{0, 1, 1});
}
