#pragma once
/// @file
/// Keeping the chosen lanes of a register at the next free slots of an array, for the AVX-512
/// kernels. The compressing store to memory (vpcompressd/vcompresspd with a memory operand) is
/// slow on AMD Zen 4: on an EPYC of that family it made the neighbour search 2.4x slower than the
/// scalar loop (docs/tools/mps-gen.md, Speed). Compressing into a register and storing its first
/// popcount lanes under a mask writes the same elements, and nothing past them, at one or two
/// instructions' cost on every AVX-512 CPU.

#include <immintrin.h>

namespace datadyn::fluid {

/// Writes the lanes of `v` (of lanes 0-7) that `keep` selects to w[0], w[1], ... in lane order;
/// returns how many.
[[gnu::target("avx512f")]] inline int store_kept(int* w, __mmask16 keep, __m512i v) {
  const int n = __builtin_popcount(keep);
  _mm512_mask_storeu_epi32(w, static_cast<__mmask16>((1u << n) - 1),
                           _mm512_maskz_compress_epi32(keep, v));
  return n;
}

[[gnu::target("avx512f")]] inline int store_kept(double* w, __mmask8 keep, __m512d v) {
  const int n = __builtin_popcount(keep);
  _mm512_mask_storeu_pd(w, static_cast<__mmask8>((1u << n) - 1), _mm512_maskz_compress_pd(keep, v));
  return n;
}

}  // namespace datadyn::fluid
