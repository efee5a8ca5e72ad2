#pragma once
// The vector levels this CPU runs, for tests that compare a kernel's levels bit for bit.

#include <vector>

#include "core/simd.hpp"

namespace datadyn::test {

inline std::vector<SimdLevel> supported_simd_levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512})
    if (simd_level_supported(l)) out.push_back(l);
  return out;
}

}  // namespace datadyn::test
