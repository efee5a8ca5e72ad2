#include <doctest/doctest.h>

#include "app/frame_range.hpp"
#include "core/errors.hpp"
#include "core/frame_list.hpp"

using namespace datadyn;
using namespace datadyn::app;
using F = std::vector<std::int64_t>;

TEST_CASE("frame ranges: the forms render-farm tools use") {
  CHECK(parse_frame_range("7") == F{7});
  CHECK(parse_frame_range("1-5") == F{1, 2, 3, 4, 5});
  CHECK(parse_frame_range("1-10x3") == F{1, 4, 7, 10});
  CHECK(parse_frame_range("1-9x4") == F{1, 5, 9});
  CHECK(parse_frame_range("1,5,10-12") == F{1, 5, 10, 11, 12});
  CHECK(parse_frame_range("10-12,1,5,11") == F{1, 5, 10, 11, 12});  // sorted, no duplicates
  CHECK(parse_frame_range("-3--1") == F{-3, -2, -1});
  CHECK(parse_frame_range("-2-1") == F{-2, -1, 0, 1});
  CHECK(parse_frame_range("1-100").size() == 100);
  // The whole int64 range in three frames: k * step passes INT64_MAX, undefined behaviour in
  // signed arithmetic. The result was right by wraparound, so only the sanitizer build
  // (DATADYN_SANITIZE, which stops at undefined behaviour) fails without the fix.
  CHECK(parse_frame_range("-9000000000000000000-9000000000000000000x9000000000000000000") ==
        F{-9000000000000000000, 0, 9000000000000000000});
}

TEST_CASE("frame ranges: malformed lists name the bad part") {
  for (const char* bad : {"", "a", "1-", "1-x2", "5-1", "1-10x0", "1-10x-2", "1,,2", "1,", "1-5y",
                          "1 - 5", "0-100000000"}) {
    INFO("input: '" << bad << "'");
    CHECK_THROWS_AS(parse_frame_range(bad), UsageError);
  }
  CHECK_THROWS_WITH_AS(parse_frame_range("1,5-2"), doctest::Contains("'5-2': end before start"),
                       UsageError);
}

TEST_CASE("frame ranges: frames_within gives every frame, or checks the requested ones") {
  CHECK(frames_within(4, std::nullopt, "") == F{1, 2, 3, 4});
  CHECK(frames_within(0, std::nullopt, "").empty());
  CHECK(frames_within(10, F{2, 5, 10}, "") == F{2, 5, 10});
  CHECK_THROWS_WITH_AS(frames_within(10, F{5, 11}, " (the scene's frames)"),
                       "--frames: frame 11 is outside 1-10 (the scene's frames)", UsageError);
  CHECK_THROWS_WITH_AS(frames_within(10, F{0, 5}, ""), "--frames: frame 0 is outside 1-10",
                       UsageError);
}

TEST_CASE("frame ranges: a frame list written for a message parses back") {
  for (const F& frames : {F{1, 3, 5}, F{-5, -4, -3, 9}, F{1, 2, 4, 5, 6, 100}, F{-9, -7, -5, 0},
                          F{4, 6, 7, 8, 10, 12}})
    CHECK(parse_frame_range(datadyn::frame_list_text(frames)) == frames);
}
