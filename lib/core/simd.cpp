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

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx2:
      return "avx2";
    case SimdLevel::Avx512:
      return "avx512";
    case SimdLevel::Baseline:
      break;
  }
  return "baseline";
}

std::optional<SimdLevel> parse_simd_level(std::string_view name) {
  for (SimdLevel l : {SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512})
    if (name == simd_level_name(l)) return l;
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
