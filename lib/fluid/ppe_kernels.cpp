#include "fluid/ppe_kernels.hpp"

#include <immintrin.h>

#include <algorithm>

#include "fluid/compress_store.hpp"

namespace datadyn::fluid {

namespace {

/// Σ_e val[e] v[col[e]] over e in [e0, e1), in four interleaved partial sums combined in a fixed
/// order: one running sum makes every product wait for the previous add (29 adds in a row per
/// PPE row), four let the core overlap them (a fifth faster in a micro-benchmark of this
/// product). The rounding depends on the row only.
inline double sparse_row_dot(const double* val, const int* col, int e0, int e1, const double* v) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int e = e0;
  for (; e + 4 <= e1; e += 4) {
    s0 += val[e] * v[col[e]];
    s1 += val[e + 1] * v[col[e + 1]];
    s2 += val[e + 2] * v[col[e + 2]];
    s3 += val[e + 3] * v[col[e + 3]];
  }
  for (; e < e1; ++e) s0 += val[e] * v[col[e]];
  return (s0 + s1) + (s2 + s3);
}

/// sparse_row_dot with the four partial sums as the lanes of one AVX2 register and v gathered:
/// the same products added in the same order (no fused multiply-add), so bitwise the same sum.
[[gnu::target("avx2")]] inline double sparse_row_dot_avx2(const double* val, const int* col, int e0,
                                                          int e1, const double* v) {
  // The masked gather with a zero source: the plain one reads an undefined register, which GCC
  // warns about.
  const __m256d zero = _mm256_setzero_pd(), all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  __m256d s = zero;
  int e = e0;
  for (; e + 4 <= e1; e += 4) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + e));
    s = _mm256_add_pd(
        s, _mm256_mul_pd(_mm256_loadu_pd(val + e), _mm256_mask_i32gather_pd(zero, v, c, all, 8)));
  }
  alignas(32) double lane[4];
  _mm256_store_pd(lane, s);
  double s0 = lane[0];
  for (; e < e1; ++e) s0 += val[e] * v[col[e]];
  return (s0 + lane[1]) + (lane[2] + lane[3]);
}

/// q[i] = A_i . v for the rows [i0, i1) of the CSR matrix (outer, col, val); returns Σ q[i] v[i].
template <double (*RowDot)(const double*, const int*, int, int, const double*)>
[[gnu::always_inline]] inline double rows_with(const int* outer, const int* col, const double* val,
                                               std::size_t i0, std::size_t i1, const double* v,
                                               double* q) {
  double s = 0;
  for (std::size_t i = i0; i < i1; ++i) {
    const double acc = RowDot(val, col, outer[i], outer[i + 1], v);
    q[i] = acc;
    s += acc * v[i];
  }
  return s;
}

double product_rows_default(const int* outer, const int* col, const double* val, std::size_t i0,
                            std::size_t i1, const double* v, double* q) {
  return rows_with<sparse_row_dot>(outer, col, val, i0, i1, v, q);
}

[[gnu::target("avx2")]] double product_rows_avx2(const int* outer, const int* col,
                                                 const double* val, std::size_t i0, std::size_t i1,
                                                 const double* v, double* q) {
  return rows_with<sparse_row_dot_avx2>(outer, col, val, i0, i1, v, q);
}

/// ap[r] = Σ_k v[e0 + k kAggregate + r] xc[col[...]] for r < kAggregate: one slice of A P xc,
/// stored column-major (PpeSolver::RowChunk), each row's sum in its entries' order.
void ap_slice_default(const double* v, const int* col, int e0, int e1, const double* xc,
                      double* ap) {
  constexpr int agg = static_cast<int>(kSliceRows);
  std::fill(ap, ap + agg, 0.0);
  for (int e = e0; e < e1; e += agg)
    for (int r = 0; r < agg; ++r) ap[r] += v[e + r] * xc[col[e + r]];
}

/// The slice's 16 rows as the lanes of two registers, xc gathered: the same products added in the
/// same order per row (this file is compiled without fused multiply-add), so the same bits.
[[gnu::target("avx512f")]] void ap_slice_avx512(const double* v, const int* col, int e0, int e1,
                                                const double* xc, double* ap) {
  static_assert(kSliceRows == 16);
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (int e = e0; e < e1; e += 16) {
    const __m512i c = _mm512_loadu_si512(col + e);
    // Masked gathers and extracts: GCC 12 warns about the plain ones' undefined sources.
    const __m512d z = _mm512_setzero_pd();
    const __m512d xlo =
        _mm512_mask_i32gather_pd(z, 0xff, _mm512_maskz_extracti64x4_epi64(0xf, c, 0), xc, 8);
    const __m512d xhi =
        _mm512_mask_i32gather_pd(z, 0xff, _mm512_maskz_extracti64x4_epi64(0xf, c, 1), xc, 8);
    lo = _mm512_add_pd(lo, _mm512_mul_pd(_mm512_loadu_pd(v + e), xlo));
    hi = _mm512_add_pd(hi, _mm512_mul_pd(_mm512_loadu_pd(v + e + 8), xhi));
  }
  _mm512_storeu_pd(ap, lo);
  _mm512_storeu_pd(ap + 8, hi);
}

/// The strong couplings of a row among its entries [e0, e1) (columns inner, values val): those
/// with lo <= c < hi and v² >= strong2 A_cc, in order, their columns to col and values to dval;
/// returns how many. Branch-free: every entry is written to the next slot, and the cursor
/// advances only for a strong one (which of a row's ~28 couplings are strong follows the
/// particles' arrangement, no pattern a branch predictor learns). col and dval need room for
/// e1 - e0.
int strong_couplings_default(const int* inner, const double* val, int e0, int e1,
                             const double* diag, double strong2, int lo, int hi, int* col,
                             double* dval) {
  int n = 0;
  for (int e = e0; e < e1; ++e) {
    const int c = inner[e];
    const double v = val[e];
    col[n] = c;
    dval[n] = v;
    n += (c >= lo) & (c < hi) & (v * v >= strong2 * diag[c]);
  }
  return n;
}

/// Eight entries at a time, A_cc gathered, the strong ones kept by store_kept: the same
/// comparisons in the same arithmetic, so the same couplings.
[[gnu::target("avx512f")]] int strong_couplings_avx512(const int* inner, const double* val, int e0,
                                                       int e1, const double* diag, double strong2,
                                                       int lo, int hi, int* col, double* dval) {
  const __m512d vs = _mm512_set1_pd(strong2), zero = _mm512_setzero_pd();
  const __m256i vlo = _mm256_set1_epi32(lo - 1), vhi = _mm256_set1_epi32(hi);
  const __m512i zero16 = _mm512_setzero_si512();
  int n = 0;
  for (int e = e0; e < e1; e += 8) {
    const int left = e1 - e;
    const __mmask8 m = static_cast<__mmask8>(left >= 8 ? 0xff : (1u << left) - 1);
    const __m256i lanes =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i c = _mm256_maskload_epi32(inner + e, lanes);
    const __m256i in_range =
        _mm256_and_si256(_mm256_cmpgt_epi32(c, vlo), _mm256_cmpgt_epi32(vhi, c));
    const __mmask8 range =
        static_cast<__mmask8>(_mm256_movemask_ps(_mm256_castsi256_ps(in_range))) & m;
    const __m512d v = _mm512_maskz_loadu_pd(m, val + e);
    const __m512d d = _mm512_mask_i32gather_pd(zero, range, c, diag, 8);
    const __mmask8 strong =
        _mm512_mask_cmp_pd_mask(range, _mm512_mul_pd(v, v), _mm512_mul_pd(vs, d), _CMP_GE_OQ);
    // The masked insert: GCC 12 warns that the plain cast's undefined upper half is uninitialised.
    store_kept(col + n, strong, _mm512_mask_inserti64x4(zero16, 0xff, zero16, c, 0));
    n += store_kept(dval + n, strong, v);
  }
  return n;
}

}  // namespace

double product_rows(SimdLevel level, const int* outer, const int* col, const double* val,
                    std::size_t i0, std::size_t i1, const double* v, double* q) {
  const auto rows = level >= SimdLevel::Avx2 ? product_rows_avx2 : product_rows_default;
  return rows(outer, col, val, i0, i1, v, q);
}

void ap_slice(SimdLevel level, const double* v, const int* col, int e0, int e1, const double* xc,
              double* ap) {
  const auto slice = level >= SimdLevel::Avx512 ? ap_slice_avx512 : ap_slice_default;
  slice(v, col, e0, e1, xc, ap);
}

int strong_couplings(SimdLevel level, const int* inner, const double* val, int e0, int e1,
                     const double* diag, double strong2, int lo, int hi, int* col, double* dval) {
  const auto find = level >= SimdLevel::Avx512 ? strong_couplings_avx512 : strong_couplings_default;
  return find(inner, val, e0, e1, diag, strong2, lo, hi, col, dval);
}

}  // namespace datadyn::fluid
