#include <doctest/doctest.h>

#include "app/frame_range.hpp"
#include "app/shard.hpp"
#include "core/errors.hpp"

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

TEST_CASE("shards: parse K/N") {
  CHECK(parse_shard("1/1").index == 1);
  CHECK(parse_shard("3/10").count == 10);
  for (const char* bad : {"", "1", "0/4", "5/4", "1/0", "-1/4", "a/b", "1/4x", "1//4", " 1/4"}) {
    INFO("input: '" << bad << "'");
    CHECK_THROWS_AS(parse_shard(bad), UsageError);
  }
}

TEST_CASE("shards: contiguous, deterministic, covering every item exactly once") {
  for (std::size_t items : {0u, 1u, 7u, 15u, 100u, 1001u}) {
    for (int n : {1, 2, 3, 4, 7, 16}) {
      std::size_t next = 0, smallest = items, largest = 0;
      for (int k = 1; k <= n; ++k) {
        const IndexRange r = shard_range(items, {k, n});
        INFO("items " << items << " shard " << k << "/" << n);
        CHECK(r.begin == next);  // contiguous and in order
        CHECK(r.end >= r.begin);
        next = r.end;
        smallest = std::min(smallest, r.size());
        largest = std::max(largest, r.size());
      }
      CHECK(next == items);            // together they cover everything
      CHECK(largest - smallest <= 1);  // near-equal parts
    }
  }
  // Same inputs, same split.
  CHECK(shard_range(1000, {3, 7}).begin == shard_range(1000, {3, 7}).begin);
  CHECK(shard_range(10, {2, 3}).begin == 3);
  CHECK(shard_range(10, {2, 3}).end == 6);
}
