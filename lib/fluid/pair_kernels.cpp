#include "fluid/pair_kernels.hpp"

#include <immintrin.h>

#include <algorithm>

#include "core/simd.hpp"

namespace datadyn::fluid {

namespace {

// Every candidate is written and the cursor advances only for a neighbour: about a third of the
// candidates are, and a branch on it mispredicted so often that it cost more than the distances.
int near_points_default(const double* pts, int j0, int j1, double qx, double qy, double r2,
                        int self, int* w) {
  int* const w0 = w;
  for (int j = j0; j < j1; ++j) {
    const double dx = pts[2 * j] - qx, dy = pts[2 * j + 1] - qy;
    *w = j;
    w += (dx * dx + dy * dy < r2) & (j != self);
  }
  return static_cast<int>(w - w0);
}

// Eight candidates at a time, the neighbours' indices kept by a compressing store.
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

}  // namespace

int near_points(const double* pts, int j0, int j1, double qx, double qy, double r2, int self,
                int* w) {
  static const auto near =
      simd_level() >= SimdLevel::Avx512 ? near_points_avx512 : near_points_default;
  return near(pts, j0, j1, qx, qy, r2, self, w);
}

}  // namespace datadyn::fluid
