#pragma once
/// @file
/// The vector kernels of the PPE solver (PpeSolver in mps_solver.hpp), each in a scalar version
/// and one for AVX2 or AVX-512, picked by the `level` argument (callers pass core's simd_level()).
/// Every level adds the same products in the same order without fused multiply-add (this file is
/// compiled with -ffp-contract=off), so every level gives the same bits.

#include <cstddef>

#include "core/simd.hpp"

namespace datadyn::fluid {

/// Rows of A P per slice in ap_slice (PpeSolver::kAggregate).
inline constexpr int kSliceRows = 16;

/// q[i] = A_i . v for the rows [i0, i1) of the CSR matrix (outer, col, val); returns Σ q[i] v[i].
/// Each row's sum runs in four interleaved partial sums (entry e to sum e mod 4 from the row's
/// first entry, the rest after the last multiple of four to the first sum), combined as
/// (s0 + s1) + (s2 + s3); the products over i are added in row order. AVX2 and up run the four
/// sums as the lanes of one register. (The product is bound by its gathers: single-precision
/// values were no faster.)
double product_rows(SimdLevel level, const int* outer, const int* col, const double* val,
                    std::size_t i0, std::size_t i1, const double* v, double* q);

/// One slice of A P xc: ap[r] = Σ_k v[e0 + 16 k + r] xc[col[e0 + 16 k + r]] for r < 16, the
/// slice's rows stored column-major in [e0, e1) (e1 - e0 a multiple of 16), each row's sum in
/// its entries' order. AVX-512 runs the 16 rows as the lanes of two registers.
void ap_slice(SimdLevel level, const double* v, const int* col, int e0, int e1, const double* xc,
              double* ap);

/// The strong couplings of a row among its entries [e0, e1) (columns inner, values val): those
/// with lo <= c < hi and v² >= strong2 diag[c], in order; their columns to col and values to
/// dval; returns how many. col and dval need room for e1 - e0. AVX-512 tests eight entries at a
/// time.
int strong_couplings(SimdLevel level, const int* inner, const double* val, int e0, int e1,
                     const double* diag, double strong2, int lo, int hi, int* col, double* dval);

}  // namespace datadyn::fluid
