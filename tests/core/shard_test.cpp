#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/shard.hpp"

using namespace datadyn;

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

TEST_CASE("shards: shard_part takes the items of shard_range, and the parts join to the whole") {
  std::vector<std::string> items;
  for (int i = 0; i < 11; ++i) items.push_back("item" + std::to_string(i));
  for (int n : {1, 2, 3, 4, 11, 12}) {
    std::vector<std::string> joined;
    for (int k = 1; k <= n; ++k) {
      const auto part = shard_part(items, {k, n});
      const IndexRange r = shard_range(items.size(), {k, n});
      INFO("shard " << k << "/" << n);
      REQUIRE(part.size() == r.size());
      if (!part.empty()) CHECK(part.front() == items[r.begin]);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    CHECK(joined == items);
  }
  CHECK(shard_part(std::vector<int>{}, {2, 3}).empty());
}
