#include "fluid/neighbor_grid.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"

namespace datadyn::fluid {

namespace {

/// Writes to w, in increasing order, the points j in [j0, j1) of pts (x, y interleaved) closer
/// than sqrt(r2) to (qx, qy), other than `self`; returns how many. Every candidate is written and
/// the cursor advances only for a neighbour: about a third of the candidates are, and a branch on
/// it mispredicted so often that it cost more than the distances.
int near_points(const double* pts, int j0, int j1, double qx, double qy, double r2, int self,
                int* w) {
  int* const w0 = w;
  for (int j = j0; j < j1; ++j) {
    const double dx = pts[2 * j] - qx, dy = pts[2 * j + 1] - qy;
    *w = j;
    w += (dx * dx + dy * dy < r2) & (j != self);
  }
  return static_cast<int>(w - w0);
}

/// near_points eight candidates at a time: the same distances (no fused multiply-add), so the
/// same points, kept by a compressing store of their indices.
[[gnu::target("avx512f")]] int near_points_avx512(const double* pts, int j0, int j1, double qx,
                                                  double qy, double r2, int self, int* w) {
  const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512d vqx = _mm512_set1_pd(qx), vqy = _mm512_set1_pd(qy), vr2 = _mm512_set1_pd(r2);
  int count = 0;
  for (int j = j0; j < j1; j += 8) {
    // The last round's missing points are neither loaded (masked loads do not touch memory past
    // the array) nor kept.
    const int t = std::min(8, j1 - j);
    const __mmask8 lo_mask = static_cast<__mmask8>(t >= 4 ? 0xff : (1u << (2 * t)) - 1);
    const __mmask8 hi_mask = static_cast<__mmask8>(t <= 4 ? 0 : (1u << (2 * (t - 4))) - 1);
    const __m512d lo = _mm512_maskz_loadu_pd(lo_mask, pts + 2 * j);
    const __m512d hi = _mm512_maskz_loadu_pd(hi_mask, pts + 2 * j + 8);
    const __m512d dx = _mm512_sub_pd(_mm512_permutex2var_pd(lo, even, hi), vqx);
    const __m512d dy = _mm512_sub_pd(_mm512_permutex2var_pd(lo, odd, hi), vqy);
    const __m512d d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
    unsigned keep = _mm512_cmp_pd_mask(d2, vr2, _CMP_LT_OQ) & ((1u << t) - 1);
    if (self >= j && self < j + t) keep &= ~(1u << (self - j));
    _mm512_mask_compressstoreu_epi32(w + count, static_cast<__mmask16>(keep),
                                     _mm512_add_epi32(_mm512_set1_epi32(j), lane));
    count += __builtin_popcount(keep);
  }
  return count;
}

int near_points_dispatch(const double* pts, int j0, int j1, double qx, double qy, double r2,
                         int self, int* w) {
  static const auto near =
      simd_level() >= SimdLevel::Avx512 ? near_points_avx512 : near_points;
  return near(pts, j0, j1, qx, qy, r2, self, w);
}

}  // namespace

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
  for (std::size_t i = 0; i < n; ++i) {
    const int c = cell_of(points.row(static_cast<Eigen::Index>(i)).transpose());
    cell_[i] = c;
    ++start_[static_cast<std::size_t>(c) + 1];
  }
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
            count += near_points_dispatch(pts, src.first + b, src.first + e, qx, qy, r2, self,
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
