#pragma once
/// @file
/// Frame lists in the form render-farm tools write them (`1-8,15-23,60`, `1-99x2`), for messages
/// and reports. app::parse_frame_range reads them back.

#include <cstdint>
#include <string>
#include <vector>

namespace datadyn {

/// Ascending frames as runs of one step each, left to right: "1-8,15-17,60" (step 1), "1-9x2"
/// (every second frame), "-3--2". Two frames more than one apart stay two frames ("4,6").
std::string frame_list_text(const std::vector<std::int64_t>& frames);

}  // namespace datadyn
