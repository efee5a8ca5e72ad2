#pragma once
/// @file
/// The vector instruction set that hand-written kernels may use (the build itself targets plain
/// x86-64). Every kernel that dispatches on it gives the same bits at every level - its lanes hold
/// independent sums, each added in one fixed order without fused multiply-adds - so the level
/// changes speed only. The environment variable DATADYN_SIMD (baseline, avx2, avx512) caps it,
/// e.g. to check that claim on one machine or to match an older one.

#include <optional>
#include <string_view>

namespace datadyn {

enum class SimdLevel { Baseline = 0, Avx2 = 1, Avx512 = 2 };

/// Whether this CPU (and its OS) runs code of that level.
bool simd_level_supported(SimdLevel level);

/// "baseline", "avx2" or "avx512"; nullopt for anything else.
std::optional<SimdLevel> parse_simd_level(std::string_view name);
/// The name parse_simd_level reads back.
const char* simd_level_name(SimdLevel level);

/// The widest supported level, capped by DATADYN_SIMD when it names a level (read once; tools
/// refuse a value that names none before any work, see app::Tool).
SimdLevel simd_level();

}  // namespace datadyn
