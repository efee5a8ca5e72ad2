#include "fluid/neighbor_grid.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "fluid/pair_kernels.hpp"

namespace datadyn::fluid {

CellGrid::CellGrid(const Eigen::Vector2d& min_corner, const Eigen::Vector2d& max_corner,
                   double cell_size)
    : min_(min_corner), h_(cell_size), inv_h_(1.0 / cell_size) {
  DATADYN_CHECK(cell_size > 0);
  DATADYN_CHECK((max_corner.array() > min_corner.array()).all());
  nx_ = static_cast<int>(std::floor((max_corner.x() - min_corner.x()) * inv_h_)) + 1;
  ny_ = static_cast<int>(std::floor((max_corner.y() - min_corner.y()) * inv_h_)) + 1;
  start_.assign(static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_) + 1, 0);
}

int CellGrid::cell_of(const Eigen::Vector2d& p) const {
  // Clamp in floating point first: a far-away point must not overflow the int conversion.
  const double fx = std::clamp((p.x() - min_.x()) * inv_h_, 0.0, static_cast<double>(nx_ - 1));
  const double fy = std::clamp((p.y() - min_.y()) * inv_h_, 0.0, static_cast<double>(ny_ - 1));
  return static_cast<int>(fx) + nx_ * static_cast<int>(fy);
}

void CellGrid::bin(const Eigen::Ref<const Points2>& points) {
  const std::size_t n = static_cast<std::size_t>(points.rows());
  cell_.resize(n);
  order_.resize(n);
  std::fill(start_.begin(), start_.end(), 0);
  // The cells in parallel (they are most of the work), the counting sort on one thread.
  parallel_for(n, 1024, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      cell_[i] = cell_of(points.row(static_cast<Eigen::Index>(i)).transpose());
  });
  for (std::size_t i = 0; i < n; ++i) ++start_[static_cast<std::size_t>(cell_[i]) + 1];
  for (std::size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
  // Stable counting sort: a running cursor per cell, filled in index order.
  std::vector<int> cursor(start_.begin(), start_.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    order_[static_cast<std::size_t>(cursor[static_cast<std::size_t>(cell_[i])]++)] =
        static_cast<int>(i);
}

void build_neighbor_lists(const Eigen::Ref<const Points2>& queries,
                          const std::vector<GridSource>& sources, double radius, int self_first,
                          NeighborLists& out) {
  const std::size_t n = static_cast<std::size_t>(queries.rows());
  for (const auto& s : sources) DATADYN_CHECK(radius <= s.grid->cell_size());
  constexpr std::size_t grain = 256;
  const std::size_t chunks = (n + grain - 1) / grain;
  std::vector<std::vector<int>> chunk_index(chunks);
  out.offset.assign(n + 1, 0);
  const double r2 = radius * radius;
  const SimdLevel level = simd_level();
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      std::vector<int>& local = chunk_index[c];
      local.resize(grain * 48);
      int count = 0;
      const std::size_t q1 = std::min(n, (c + 1) * grain);
      for (std::size_t q = c * grain; q < q1; ++q) {
        const Eigen::Index qi = static_cast<Eigen::Index>(q);
        const double qx = queries(qi, 0), qy = queries(qi, 1);
        const int before = count;
        for (std::size_t s = 0; s < sources.size(); ++s) {
          const GridSource& src = sources[s];
          const double* pts = src.points->data();
          const int self = s == 0 ? self_first + static_cast<int>(q) : -1;
          src.grid->for_each_candidate_run({qx, qy}, [&](int b, int e) {
            const std::size_t need = static_cast<std::size_t>(count + e - b);
            if (need > local.size()) local.resize(2 * need);
            count += near_points(level, pts, src.first + b, src.first + e, qx, qy, r2, self,
                                 local.data() + count);
          });
        }
        out.offset[q + 1] = count - before;
      }
      local.resize(static_cast<std::size_t>(count));
    }
  });
  for (std::size_t q = 0; q < n; ++q) out.offset[q + 1] += out.offset[q];
  out.index.resize(static_cast<std::size_t>(out.offset[n]));
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
      std::copy(chunk_index[c].begin(), chunk_index[c].end(),
                out.index.begin() + out.offset[c * grain]);
  });
}

}  // namespace datadyn::fluid
