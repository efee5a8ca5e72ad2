#pragma once
/// @file
/// Frame lists as render-farm tools write them: `1-100`, `1-100x2` (every 2nd frame), `1,5,10-20`,
/// negative frames (`-5--1`). The result is sorted ascending without duplicates.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace datadyn::app {

/// Parses a frame list. Throws UsageError naming the bad part and what was expected.
std::vector<std::int64_t> parse_frame_range(const std::string& text);

/// The frames of a run of `count` frames numbered from 1: all of them, or the `requested` ones
/// (as parse_frame_range gives them) when each lies in 1..count. Throws UsageError
/// "--frames: frame F is outside 1-<count>" followed by `context` otherwise.
std::vector<std::int64_t> frames_within(std::int64_t count,
                                        const std::optional<std::vector<std::int64_t>>& requested,
                                        const std::string& context);

}  // namespace datadyn::app
