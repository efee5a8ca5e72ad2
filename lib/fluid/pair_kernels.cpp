#include "fluid/pair_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/simd.hpp"
#include "fluid/compress_store.hpp"

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

// Eight candidates at a time, the neighbours' indices kept by store_kept.
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
    count += store_kept(w + count, static_cast<__mmask16>(keep),
                        _mm512_add_epi32(_mm512_set1_epi32(j), lane));
  }
  return count;
}

// The lanes' sum in sum_lanes' order, from a register holding lanes 0-7.
[[gnu::target("avx512f")]] inline double sum_lanes_avx512(__m512d v) {
  // Masked extracts: GCC 12 warns that the plain one's undefined source (the cast uses it too)
  // is uninitialised.
  const __m256d t = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xf, v, 0),
                                  _mm512_maskz_extractf64x4_pd(0xf, v, 1));
  const __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
  return _mm_cvtsd_f64(u) + _mm_cvtsd_f64(_mm_unpackhi_pd(u, u));
}

// Lanes 0-7 of the candidates from k on: the mask of those below len, and their indices.
struct Lanes {
  __mmask8 mask;
  __m256i lanes;  // all ones in the valid lanes, for the 32-bit masked loads
  __m256i index;
};
[[gnu::target("avx512f")]] inline Lanes load_lanes(const int* index, int k, int len) {
  Lanes l;
  l.mask = static_cast<__mmask8>(len - k >= 8 ? 0xff : (1u << (len - k)) - 1);
  l.lanes =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(len - k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  l.index = _mm256_maskload_epi32(index + k, l.lanes);
  return l;
}

// x and y of the points index[] (x, y interleaved at 2 j), 0 in the lanes outside the mask.
struct Gathered {
  __m512d x, y;
};
[[gnu::target("avx512f")]] inline Gathered gather_xy(const double* p, const Lanes& l) {
  const __m512d zero = _mm512_setzero_pd();
  const __m256i j2 = _mm256_slli_epi32(l.index, 1);
  return {_mm512_mask_i32gather_pd(zero, l.mask, j2, p, 8),
          _mm512_mask_i32gather_pd(zero, l.mask, j2, p + 1, 8)};
}

VelocityLaplacian viscosity_sums_default(const double* pos, const double* vel, const int* index,
                                         int len, double xi, double yi, double ui, double vi,
                                         double re_l, double rl2) {
  double lx[8] = {}, ly[8] = {};
  for (int k = 0; k < len; ++k) {
    const int j = index[k];
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
    const double r2 = dx * dx + dy * dy;
    // Branch-free (0 beyond r_e): which candidates are pairs follows no pattern.
    const double w = r2 < rl2 ? re_l * (1.0 / std::sqrt(r2)) - 1.0 : 0.0;
    lx[k & 7] += (vel[2 * j] - ui) * w;
    ly[k & 7] += (vel[2 * j + 1] - vi) * w;
  }
  return {sum_lanes(lx), sum_lanes(ly)};
}

[[gnu::target("avx512f")]] VelocityLaplacian viscosity_sums_avx512(
    const double* pos, const double* vel, const int* index, int len, double xi, double yi,
    double ui, double vi, double re_l, double rl2) {
  const __m512d one = _mm512_set1_pd(1.0), vrel = _mm512_set1_pd(re_l);
  const __m512d vrl2 = _mm512_set1_pd(rl2);
  const __m512d vx = _mm512_set1_pd(xi), vy = _mm512_set1_pd(yi);
  const __m512d vui = _mm512_set1_pd(ui), vvi = _mm512_set1_pd(vi);
  __m512d lx = _mm512_setzero_pd(), ly = _mm512_setzero_pd();
  for (int k = 0; k < len; k += 8) {
    const Lanes l = load_lanes(index, k, len);
    const Gathered p = gather_xy(pos, l), v = gather_xy(vel, l);
    const __m512d dx = _mm512_sub_pd(p.x, vx), dy = _mm512_sub_pd(p.y, vy);
    const __m512d d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
    const __mmask8 in = _mm512_mask_cmp_pd_mask(l.mask, d2, vrl2, _CMP_LT_OQ);
    const __m512d ir = _mm512_div_pd(one, _mm512_maskz_sqrt_pd(in, d2));
    const __m512d w = _mm512_maskz_sub_pd(in, _mm512_mul_pd(vrel, ir), one);
    // Lanes past len add nothing; lanes beyond r_e add 0 times the velocity difference.
    lx = _mm512_mask_add_pd(lx, l.mask, lx, _mm512_mul_pd(_mm512_sub_pd(v.x, vui), w));
    ly = _mm512_mask_add_pd(ly, l.mask, ly, _mm512_mul_pd(_mm512_sub_pd(v.y, vvi), w));
  }
  return {sum_lanes_avx512(lx), sum_lanes_avx512(ly)};
}

int close_candidates_default(const double* pos, const int* index, int len, double xi, double yi,
                             double dc2, int* close) {
  int count = 0;
  for (int k = 0; k < len; ++k) {
    const int j = index[k];
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
    close[count] = k;
    count += dx * dx + dy * dy < dc2;
  }
  return count;
}

[[gnu::target("avx512f")]] int close_candidates_avx512(const double* pos, const int* index, int len,
                                                       double xi, double yi, double dc2,
                                                       int* close) {
  const __m512d vx = _mm512_set1_pd(xi), vy = _mm512_set1_pd(yi), vdc2 = _mm512_set1_pd(dc2);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0);
  int count = 0;
  for (int k = 0; k < len; k += 8) {
    const Lanes l = load_lanes(index, k, len);
    const Gathered p = gather_xy(pos, l);
    const __m512d dx = _mm512_sub_pd(p.x, vx), dy = _mm512_sub_pd(p.y, vy);
    const __m512d d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
    const __mmask8 hit = _mm512_mask_cmp_pd_mask(l.mask, d2, vdc2, _CMP_LT_OQ);
    if (hit == 0) continue;  // nearly always: pairs this close are rare
    count += store_kept(close + count, static_cast<__mmask16>(hit),
                        _mm512_add_epi32(_mm512_set1_epi32(k), lane));
  }
  return count;
}

// Branch-free: every candidate is weighted (0 outside a radius) and written to the next slot of
// each pair list, whose cursor advances only for a pair. Which candidates are pairs follows no
// pattern, and the mispredicted branches cost more than the weights.
DensitySums density_pairs_default(const double* pos, const int* cand, const std::int32_t* solid,
                                  int len, double xi, double yi, double re_d, double re_l,
                                  double rd2, double rl2, const double* vel, double ui, double vi,
                                  int* grad_index, double* grad_x, double* grad_y, int* lap_index,
                                  double* lap_w) {
  DensitySums s;
  double n[8] = {}, div[8] = {}, cxx[8] = {}, cxy[8] = {}, cyy[8] = {};
  for (int k = 0; k < len; ++k) {
    const int j = cand[k], lane = k & 7;
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
    const double r2 = dx * dx + dy * dy, inv_r = 1.0 / std::sqrt(r2);
    const bool solid_or_fluid = solid[j] != 0;
    const bool in_d = r2 < rd2;
    const double w = in_d ? re_d * inv_r - 1.0 : 0.0;
    n[lane] += w;
    const double gw = in_d && solid_or_fluid ? w * inv_r * inv_r : 0.0;
    const double gx = dx * gw, gy = dy * gw;
    grad_index[s.grad] = j;
    grad_x[s.grad] = gx;
    grad_y[s.grad] = gy;
    s.grad += in_d && solid_or_fluid;
    if (vel) div[lane] += (vel[2 * j] - ui) * gx + (vel[2 * j + 1] - vi) * gy;
    cxx[lane] += gx * dx;
    cxy[lane] += gx * dy;
    cyy[lane] += gy * dy;
    lap_index[s.lap] = j;
    lap_w[s.lap] = re_l * inv_r - 1.0;
    s.lap += r2 < rl2 && solid_or_fluid;
  }
  s.n = sum_lanes(n);
  s.div = sum_lanes(div);
  s.cxx = sum_lanes(cxx);
  s.cxy = sum_lanes(cxy);
  s.cyy = sum_lanes(cyy);
  return s;
}

// Eight candidates at a time, each sum in a register's lanes, the pairs kept by store_kept.
[[gnu::target("avx512f")]] DensitySums density_pairs_avx512(
    const double* pos, const int* cand, const std::int32_t* solid, int len, double xi, double yi,
    double re_d, double re_l, double rd2, double rl2, const double* vel, double ui, double vi,
    int* grad_index, double* grad_x, double* grad_y, int* lap_index, double* lap_w) {
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d vx = _mm512_set1_pd(xi), vy = _mm512_set1_pd(yi);
  const __m512d vred = _mm512_set1_pd(re_d), vrel = _mm512_set1_pd(re_l);
  const __m512d vrd2 = _mm512_set1_pd(rd2), vrl2 = _mm512_set1_pd(rl2);
  const __m512d vui = _mm512_set1_pd(ui), vvi = _mm512_set1_pd(vi);
  __m512d n = _mm512_setzero_pd(), div = n, cxx = n, cxy = n, cyy = n;
  DensitySums s;
  for (int k = 0; k < len; k += 8) {
    const Lanes l = load_lanes(cand, k, len);
    const __mmask8 m = l.mask;
    const Gathered p = gather_xy(pos, l);
    const __m512d dx = _mm512_sub_pd(p.x, vx), dy = _mm512_sub_pd(p.y, vy);
    const __m512d d2 = _mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy));
    // The masked square root: GCC 12 warns that the plain one's undefined source is
    // uninitialised.
    const __m512d ir = _mm512_div_pd(one, _mm512_maskz_sqrt_pd(m, d2));
    const __m256i sol = _mm256_mask_i32gather_epi32(
        _mm256_setzero_si256(), reinterpret_cast<const int*>(solid), l.index, l.lanes, 4);
    const __mmask8 solid_or_fluid = _mm512_mask_cmpneq_epi64_mask(
        m, _mm512_maskz_cvtepi32_epi64(m, sol), _mm512_setzero_si512());
    const __mmask8 in_d = _mm512_mask_cmp_pd_mask(m, d2, vrd2, _CMP_LT_OQ);
    const __mmask8 grad = in_d & solid_or_fluid;
    const __mmask8 lap = _mm512_mask_cmp_pd_mask(solid_or_fluid, d2, vrl2, _CMP_LT_OQ);
    const __m512d w = _mm512_maskz_sub_pd(in_d, _mm512_mul_pd(vred, ir), one);
    const __m512d gw = _mm512_maskz_mul_pd(grad, _mm512_mul_pd(w, ir), ir);
    const __m512d gx = _mm512_mul_pd(dx, gw), gy = _mm512_mul_pd(dy, gw);
    n = _mm512_mask_add_pd(n, m, n, w);
    cxx = _mm512_mask_add_pd(cxx, m, cxx, _mm512_mul_pd(gx, dx));
    cxy = _mm512_mask_add_pd(cxy, m, cxy, _mm512_mul_pd(gx, dy));
    cyy = _mm512_mask_add_pd(cyy, m, cyy, _mm512_mul_pd(gy, dy));
    if (vel) {
      const Gathered v = gather_xy(vel, l);
      const __m512d du = _mm512_sub_pd(v.x, vui), dv = _mm512_sub_pd(v.y, vvi);
      div = _mm512_mask_add_pd(div, m, div,
                               _mm512_add_pd(_mm512_mul_pd(du, gx), _mm512_mul_pd(dv, gy)));
    }
    // The masked forms: GCC 12 warns that the plain ones' undefined sources are uninitialised.
    const __m512i zero16 = _mm512_setzero_si512();
    const __m512i j16 = _mm512_mask_inserti64x4(zero16, 0xff, zero16, l.index, 0);
    store_kept(grad_index + s.grad, grad, j16);
    store_kept(grad_x + s.grad, grad, gx);
    s.grad += store_kept(grad_y + s.grad, grad, gy);
    store_kept(lap_index + s.lap, lap, j16);
    s.lap += store_kept(lap_w + s.lap, lap, _mm512_sub_pd(_mm512_mul_pd(vrel, ir), one));
  }
  s.n = sum_lanes_avx512(n);
  s.div = sum_lanes_avx512(div);
  s.cxx = sum_lanes_avx512(cxx);
  s.cxy = sum_lanes_avx512(cxy);
  s.cyy = sum_lanes_avx512(cyy);
  return s;
}

}  // namespace

double sum_lanes(const double lane[8]) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

VelocityLaplacian viscosity_sums(SimdLevel level, const double* pos, const double* vel,
                                 const int* index, int len, double xi, double yi, double ui,
                                 double vi, double re_l, double rl2) {
  const auto sums = level >= SimdLevel::Avx512 ? viscosity_sums_avx512 : viscosity_sums_default;
  return sums(pos, vel, index, len, xi, yi, ui, vi, re_l, rl2);
}

int close_candidates(SimdLevel level, const double* pos, const int* index, int len, double xi,
                     double yi, double dc2, int* close) {
  const auto find = level >= SimdLevel::Avx512 ? close_candidates_avx512 : close_candidates_default;
  return find(pos, index, len, xi, yi, dc2, close);
}

DensitySums density_pairs(SimdLevel level, const double* pos, const int* cand,
                          const std::int32_t* solid, int len, double xi, double yi, double re_d,
                          double re_l, double rd2, double rl2, const double* vel, double ui,
                          double vi, int* grad_index, double* grad_x, double* grad_y,
                          int* lap_index, double* lap_w) {
  const auto pairs = level >= SimdLevel::Avx512 ? density_pairs_avx512 : density_pairs_default;
  return pairs(pos, cand, solid, len, xi, yi, re_d, re_l, rd2, rl2, vel, ui, vi, grad_index, grad_x,
               grad_y, lap_index, lap_w);
}

int near_points(SimdLevel level, const double* pts, int j0, int j1, double qx, double qy, double r2,
                int self, int* w) {
  const auto near = level >= SimdLevel::Avx512 ? near_points_avx512 : near_points_default;
  return near(pts, j0, j1, qx, qy, r2, self, w);
}

}  // namespace datadyn::fluid
