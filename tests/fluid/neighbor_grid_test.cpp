// Cell-grid neighbour search against brute force; lists sorted and thread-count independent.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "fluid/neighbor_grid.hpp"
#include "support/threads.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

// Points in [0, 1]^2 plus a few outside the grid (clamped into border cells), stored in cell order.
Points2 cell_ordered_points(const CellGrid& proto, std::size_t n, unsigned seed, CellGrid& grid) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.1, 1.1);
  Points2 raw(static_cast<Eigen::Index>(n), 2);
  for (Eigen::Index i = 0; i < raw.rows(); ++i) raw.row(i) << u(rng), u(rng);
  raw.row(0) << 5.0, 0.5;   // far outside on the right
  raw.row(1) << 0.5, -3.0;  // far below
  grid = proto;
  grid.bin(raw);
  Points2 sorted(raw.rows(), 2);
  for (std::size_t k = 0; k < n; ++k)
    sorted.row(static_cast<Eigen::Index>(k)) = raw.row(grid.order()[k]);
  return sorted;
}

}  // namespace

TEST_CASE("neighbour lists equal brute force, in increasing index order") {
  const double radius = 0.05;
  const CellGrid proto({0, 0}, {1, 1}, radius);
  for (unsigned seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    CellGrid grid;
    const Points2 pts = cell_ordered_points(proto, 3000, seed, grid);
    // Queries are the points themselves (self excluded).
    NeighborLists lists;
    build_neighbor_lists(pts, {GridSource{&grid, &pts, 0}}, radius, 0, lists);
    REQUIRE(lists.size() == 3000);
    std::size_t pairs = 0;
    for (Eigen::Index i = 0; i < pts.rows(); ++i) {
      std::vector<int> expected;
      for (Eigen::Index j = 0; j < pts.rows(); ++j)
        if (j != i && (pts.row(j) - pts.row(i)).squaredNorm() < radius * radius)
          expected.push_back(static_cast<int>(j));
      const std::vector<int> got(lists.index.begin() + lists.begin(static_cast<std::size_t>(i)),
                                 lists.index.begin() + lists.end(static_cast<std::size_t>(i)));
      CHECK(got == expected);  // also checks the order: brute force lists are increasing
      pairs += got.size();
    }
    CHECK(pairs > 3000);  // the test exercises real neighbourhoods (~7 per point)
  }
}

TEST_CASE("neighbour lists do not depend on the thread count") {
  const CellGrid proto({0, 0}, {1, 1}, 0.03);
  CellGrid grid;
  const Points2 pts = cell_ordered_points(proto, 20000, 7, grid);
  NeighborLists one, two;
  test::with_threads(1, [&] {
    build_neighbor_lists(pts, {GridSource{&grid, &pts, 0}}, 0.03, 0, one);
  });
  test::with_threads(4, [&] {
    build_neighbor_lists(pts, {GridSource{&grid, &pts, 0}}, 0.03, 0, two);
  });
  CHECK(one.offset == two.offset);
  CHECK(one.index == two.index);
}
