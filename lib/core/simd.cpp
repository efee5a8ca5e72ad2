#include "core/simd.hpp"

#include <algorithm>
#include <cstdlib>

namespace datadyn {

bool simd_level_supported(SimdLevel level) {
  switch (level) {
    case SimdLevel::Baseline:
      return true;
    case SimdLevel::Avx2:
      return __builtin_cpu_supports("avx2");
    case SimdLevel::Avx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
}

std::optional<SimdLevel> parse_simd_level(std::string_view name) {
  if (name == "baseline") return SimdLevel::Baseline;
  if (name == "avx2") return SimdLevel::Avx2;
  if (name == "avx512") return SimdLevel::Avx512;
  return std::nullopt;
}

SimdLevel simd_level() {
  static const SimdLevel level = [] {
    SimdLevel best = SimdLevel::Baseline;
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512})
      if (simd_level_supported(l)) best = l;
    const char* cap = std::getenv("DATADYN_SIMD");
    const auto capped = cap ? parse_simd_level(cap) : std::nullopt;
    return capped ? std::min(best, *capped) : best;
  }();
  return level;
}

}  // namespace datadyn
