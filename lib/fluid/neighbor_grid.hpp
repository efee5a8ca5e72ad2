#pragma once
/// @file
/// Cell-grid neighbour search for 2D particles (the bucket method of MPS codes, Koshizuka's
/// textbook "粒子法" ch. 2): points are binned into square cells of the search radius, so the
/// neighbours of a point are among the 3 × 3 cells around its own.

#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::fluid {

/// A fixed grid of square cells over a rectangle; points outside it are clamped into the border
/// cells (clamping keeps neighbouring points in neighbouring cells, so searches stay exact).
class CellGrid {
 public:
  CellGrid() = default;
  /// @param min_corner, max_corner  the rectangle (metres), max > min componentwise
  /// @param cell_size               side of a cell (metres), >= the largest search radius
  CellGrid(const Eigen::Vector2d& min_corner, const Eigen::Vector2d& max_corner, double cell_size);

  int nx() const { return nx_; }
  int ny() const { return ny_; }
  double cell_size() const { return h_; }
  /// Row-major cell id cx + nx cy of a point (clamped into the grid).
  int cell_of(const Eigen::Vector2d& p) const;

  /// Bins `points` (#N by 2): afterwards order() lists the point indices sorted by cell id (stable:
  /// equal cells keep their index order) and cell_begin(c)..cell_end(c) is the slice of order()
  /// in cell c.
  void bin(const Eigen::Ref<const Points2>& points);
  const std::vector<int>& order() const { return order_; }
  int cell_begin(int c) const { return start_[static_cast<std::size_t>(c)]; }
  int cell_end(int c) const { return start_[static_cast<std::size_t>(c) + 1]; }

  /// Calls f(b, e) for the slices [b, e) of order() that hold the 3 × 3 cells around p: one per
  /// row of cells, in increasing cell id (so, for points stored in cell order, in increasing
  /// index order).
  template <class F>
  void for_each_candidate_run(const Eigen::Vector2d& p, F&& f) const {
    const int c = cell_of(p);
    const int cx = c % nx_, cy = c / nx_;
    const int x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < nx_ ? cx + 1 : nx_ - 1;
    const int y0 = cy > 0 ? cy - 1 : 0, y1 = cy + 1 < ny_ ? cy + 1 : ny_ - 1;
    for (int y = y0; y <= y1; ++y)
      f(start_[static_cast<std::size_t>(y * nx_ + x0)],
        start_[static_cast<std::size_t>(y * nx_ + x1 + 1)]);
  }

  /// Calls f(k) for k in the slices of order() of the 3 × 3 cells around p, cell by cell in
  /// increasing cell id (so, for points stored in cell order, in increasing index order).
  template <class F>
  void for_each_candidate_slot(const Eigen::Vector2d& p, F&& f) const {
    for_each_candidate_run(p, [&](int b, int e) {
      for (int k = b; k < e; ++k) f(k);
    });
  }

 private:
  Eigen::Vector2d min_ = Eigen::Vector2d::Zero();
  double h_ = 1.0, inv_h_ = 1.0;
  int nx_ = 1, ny_ = 1;
  std::vector<int> start_;  // nx ny + 1 offsets into order_
  std::vector<int> order_;
  std::vector<int> cell_;  // cell of each point, scratch
};

/// Neighbour lists in compressed rows: the neighbours of query q are
/// index[offset[q] .. offset[q + 1]).
struct NeighborLists {
  std::vector<int> offset{0};
  std::vector<int> index;
  std::size_t size() const { return offset.size() - 1; }
  int begin(std::size_t q) const { return offset[q]; }
  int end(std::size_t q) const { return offset[q + 1]; }
};

/// A set of points binned in a grid and stored in cell order: slot k of the grid's order() is
/// row `first + k` of `points`, the caller's particle `first + k`.
struct GridSource {
  const CellGrid* grid = nullptr;
  const Points2* points = nullptr;  ///< every particle, #N by 2 (metres)
  int first = 0;                    ///< row of the grid's slot 0
};

/// For each query point q (rows of `queries`, metres) the indices of every source point within
/// `radius` (metres, < the grid's cell size), sources in the order given, each in increasing
/// index order; a query that is itself source point `self_first + q` of the first source is not
/// its own neighbour. Runs in parallel over fixed chunks of queries: the lists do not depend on
/// the thread count. Where the CPU has AVX-512 (and DATADYN_SIMD allows it) the candidates are
/// tested eight at a time and the neighbours kept by a compressing store: the same lists, in a
/// third less time than one candidate at a time (a third of the candidates are neighbours).
void build_neighbor_lists(const Eigen::Ref<const Points2>& queries,
                          const std::vector<GridSource>& sources, double radius, int self_first,
                          NeighborLists& out);

}  // namespace datadyn::fluid
