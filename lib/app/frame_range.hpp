#pragma once
/// @file
/// Frame lists as render-farm tools write them: `1-100`, `1-100x2` (every 2nd frame), `1,5,10-20`,
/// negative frames (`-5--1`). The result is sorted ascending without duplicates.

#include <cstdint>
#include <string>
#include <vector>

namespace datadyn::app {

/// Parses a frame list. Throws UsageError naming the bad part and what was expected.
std::vector<std::int64_t> parse_frame_range(const std::string& text);

}  // namespace datadyn::app
