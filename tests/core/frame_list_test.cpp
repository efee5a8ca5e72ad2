#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "core/frame_list.hpp"

using datadyn::frame_list_text;
using F = std::vector<std::int64_t>;

TEST_CASE("frame lists: runs of one step, left to right") {
  CHECK(frame_list_text(F{}).empty());
  CHECK(frame_list_text(F{7}) == "7");
  CHECK(frame_list_text(F{1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 60}) == "1-8,15-17,60");
  CHECK(frame_list_text(F{-3, -2, 0, 2, 3}) == "-3--2,0,2-3");
  // Every second frame, as `--frames 1-9x2` gives them; dd-cache merge reported such shards'
  // frames as "1-9", which reads as all nine.
  CHECK(frame_list_text(F{1, 3, 5, 7, 9}) == "1-9x2");
  CHECK(frame_list_text(F{1, 3, 5, 7, 9, 20, 21}) == "1-9x2,20-21");
  CHECK(frame_list_text(F{4, 6}) == "4,6");
  CHECK(frame_list_text(F{1, 2}) == "1-2");
}
