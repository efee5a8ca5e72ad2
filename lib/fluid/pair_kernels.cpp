#include "fluid/pair_kernels.hpp"

#include <immintrin.h>

#include <algorithm>

#include <Eigen/Core>

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

// The inverse distances in one vectorised pass after the squares (Eigen's packet square root and
// division, two at a time): the divider is what the pair loops wait for.
void pair_distances_default(const double* pos, const int* index, int len, double xi, double yi,
                            double* r2, double* inv_r) {
  for (int k = 0; k < len; ++k) {
    const int j = index[k];
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
    r2[k] = dx * dx + dy * dy;
  }
  Eigen::Map<Eigen::ArrayXd>(inv_r, len) =
      Eigen::Map<const Eigen::ArrayXd>(r2, len).sqrt().inverse();
}

// Eight at a time with gathered positions. (Four at a time in AVX2 made the pair loops slower.)
[[gnu::target("avx512f")]] void pair_distances_avx512(const double* pos, const int* index, int len,
                                                      double xi, double yi, double* r2,
                                                      double* inv_r) {
  const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
  const __m512d vx = _mm512_set1_pd(xi), vy = _mm512_set1_pd(yi);
  for (int k = 0; k < len; k += 8) {
    const __mmask8 m = static_cast<__mmask8>(len - k >= 8 ? 0xff : (1u << (len - k)) - 1);
    const __m256i lanes =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(len - k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i j2 = _mm256_slli_epi32(_mm256_maskload_epi32(index + k, lanes), 1);
    const __m512d dx = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, pos, 8), vx);
    const __m512d dy = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, pos + 1, 8), vy);
    const __m512d d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
    _mm512_mask_storeu_pd(r2 + k, m, d2);
    // The masked square root: GCC 12 warns that the plain one's undefined source is
    // uninitialised.
    _mm512_mask_storeu_pd(inv_r + k, m, _mm512_div_pd(one, _mm512_maskz_sqrt_pd(m, d2)));
  }
}

// Branch-free: every candidate is weighted (0 outside a radius) and written to the next slot of
// each pair list, whose cursor advances only for a pair. Which candidates are pairs follows no
// pattern, and the mispredicted branches cost more than the weights.
DensitySums density_pairs_default(const double* pos, const int* cand, const std::int32_t* solid,
                                  int len, double xi, double yi, const double* r2,
                                  const double* inv_r, double re_d, double re_l, double rd2,
                                  double rl2, const double* vel, double ui, double vi,
                                  int* grad_index, double* grad_x, double* grad_y, int* lap_index,
                                  double* lap_w, double*) {
  DensitySums s;
  for (int k = 0; k < len; ++k) {
    const int j = cand[k];
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
    const bool solid_or_fluid = solid[j] != 0;
    const bool in_d = r2[k] < rd2;
    const double w = in_d ? re_d * inv_r[k] - 1.0 : 0.0;
    s.n += w;
    const double gw = in_d && solid_or_fluid ? w * inv_r[k] * inv_r[k] : 0.0;
    const double gx = dx * gw, gy = dy * gw;
    grad_index[s.grad] = j;
    grad_x[s.grad] = gx;
    grad_y[s.grad] = gy;
    s.grad += in_d && solid_or_fluid;
    if (vel) s.div += (vel[2 * j] - ui) * gx + (vel[2 * j + 1] - vi) * gy;
    s.cxx += gx * dx;
    s.cxy += gx * dy;
    s.cyy += gy * dy;
    lap_index[s.lap] = j;
    lap_w[s.lap] = re_l * inv_r[k] - 1.0;
    s.lap += r2[k] < rl2 && solid_or_fluid;
  }
  return s;
}

// Eight candidates at a time: the weights and moments into `terms`, the pairs kept by
// compressing stores; then the four sums one term after another, in the scalar code's order.
[[gnu::target("avx512f")]] DensitySums density_pairs_avx512(
    const double* pos, const int* cand, const std::int32_t* solid, int len, double xi, double yi,
    const double* r2, const double* inv_r, double re_d, double re_l, double rd2, double rl2,
    const double* vel, double ui, double vi, int* grad_index, double* grad_x, double* grad_y,
    int* lap_index, double* lap_w, double* terms) {
  const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
  const __m512d vx = _mm512_set1_pd(xi), vy = _mm512_set1_pd(yi);
  const __m512d vred = _mm512_set1_pd(re_d), vrel = _mm512_set1_pd(re_l);
  const __m512d vrd2 = _mm512_set1_pd(rd2), vrl2 = _mm512_set1_pd(rl2);
  double* tw = terms;
  double* txx = terms + len;
  double* txy = terms + 2 * len;
  double* tyy = terms + 3 * len;
  double* tdiv = terms + 4 * len;
  const __m512d vui = _mm512_set1_pd(ui), vvi = _mm512_set1_pd(vi);
  DensitySums s;
  for (int k = 0; k < len; k += 8) {
    const __mmask8 m = static_cast<__mmask8>(len - k >= 8 ? 0xff : (1u << (len - k)) - 1);
    const __m256i lanes =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(len - k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i j = _mm256_maskload_epi32(cand + k, lanes);
    const __m256i j2 = _mm256_slli_epi32(j, 1);
    const __m512d dx = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, pos, 8), vx);
    const __m512d dy = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, pos + 1, 8), vy);
    const __m512d d2 = _mm512_maskz_loadu_pd(m, r2 + k);
    const __m512d ir = _mm512_maskz_loadu_pd(m, inv_r + k);
    const __m256i sol = _mm256_mask_i32gather_epi32(
        _mm256_setzero_si256(), reinterpret_cast<const int*>(solid), j, lanes, 4);
    const __mmask8 solid_or_fluid = _mm512_mask_cmpneq_epi64_mask(
        m, _mm512_maskz_cvtepi32_epi64(m, sol), _mm512_setzero_si512());
    const __mmask8 in_d = _mm512_mask_cmp_pd_mask(m, d2, vrd2, _CMP_LT_OQ);
    const __mmask8 grad = in_d & solid_or_fluid;
    const __mmask8 lap = _mm512_mask_cmp_pd_mask(solid_or_fluid, d2, vrl2, _CMP_LT_OQ);
    const __m512d w = _mm512_maskz_sub_pd(in_d, _mm512_mul_pd(vred, ir), one);
    const __m512d gw = _mm512_maskz_mul_pd(grad, _mm512_mul_pd(w, ir), ir);
    const __m512d gx = _mm512_mul_pd(dx, gw), gy = _mm512_mul_pd(dy, gw);
    _mm512_mask_storeu_pd(tw + k, m, w);
    _mm512_mask_storeu_pd(txx + k, m, _mm512_mul_pd(gx, dx));
    _mm512_mask_storeu_pd(txy + k, m, _mm512_mul_pd(gx, dy));
    _mm512_mask_storeu_pd(tyy + k, m, _mm512_mul_pd(gy, dy));
    if (vel) {
      const __m512d du = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, vel, 8), vui);
      const __m512d dv = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, j2, vel + 1, 8), vvi);
      _mm512_mask_storeu_pd(tdiv + k, m,
                            _mm512_add_pd(_mm512_mul_pd(du, gx), _mm512_mul_pd(dv, gy)));
    }
    // The masked forms: GCC 12 warns that the plain ones' undefined sources are uninitialised.
    const __m512i zero16 = _mm512_setzero_si512();
    const __m512i j16 = _mm512_mask_inserti64x4(zero16, 0xff, zero16, j, 0);
    _mm512_mask_compressstoreu_epi32(grad_index + s.grad, grad, j16);
    _mm512_mask_compressstoreu_pd(grad_x + s.grad, grad, gx);
    _mm512_mask_compressstoreu_pd(grad_y + s.grad, grad, gy);
    s.grad += __builtin_popcount(grad);
    _mm512_mask_compressstoreu_epi32(lap_index + s.lap, lap, j16);
    _mm512_mask_compressstoreu_pd(lap_w + s.lap, lap, _mm512_sub_pd(_mm512_mul_pd(vrel, ir), one));
    s.lap += __builtin_popcount(lap);
  }
  for (int k = 0; k < len; ++k) {
    s.n += tw[k];
    s.cxx += txx[k];
    s.cxy += txy[k];
    s.cyy += tyy[k];
  }
  if (vel)
    for (int k = 0; k < len; ++k) s.div += tdiv[k];
  return s;
}

}  // namespace

DensitySums density_pairs(SimdLevel level, const double* pos, const int* cand,
                          const std::int32_t* solid, int len, double xi, double yi,
                          const double* r2, const double* inv_r, double re_d, double re_l,
                          double rd2, double rl2, const double* vel, double ui, double vi,
                          int* grad_index, double* grad_x, double* grad_y, int* lap_index,
                          double* lap_w, double* terms) {
  const auto pairs = level >= SimdLevel::Avx512 ? density_pairs_avx512 : density_pairs_default;
  return pairs(pos, cand, solid, len, xi, yi, r2, inv_r, re_d, re_l, rd2, rl2, vel, ui, vi,
               grad_index, grad_x, grad_y, lap_index, lap_w, terms);
}

int near_points(SimdLevel level, const double* pts, int j0, int j1, double qx, double qy, double r2,
                int self, int* w) {
  const auto near = level >= SimdLevel::Avx512 ? near_points_avx512 : near_points_default;
  return near(pts, j0, j1, qx, qy, r2, self, w);
}

void pair_distances(SimdLevel level, const double* pos, const int* index, int len, double xi,
                    double yi, double* r2, double* inv_r) {
  const auto distances =
      level >= SimdLevel::Avx512 ? pair_distances_avx512 : pair_distances_default;
  distances(pos, index, len, xi, yi, r2, inv_r);
}

}  // namespace datadyn::fluid
