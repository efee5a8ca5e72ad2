#pragma once
/// @file
/// `--shard K/N`: the K-th (1-based, as Slurm's $SLURM_ARRAY_TASK_ID with --array=1-N) of N
/// contiguous, near-equal parts of a list of work items. Deterministic: the parts depend only on
/// the item count and N, and together they cover every item exactly once, in order.

#include <cstddef>
#include <string>
#include <vector>

namespace datadyn {

struct Shard {
  int index = 1;  ///< K, 1-based
  int count = 1;  ///< N >= 1
};

/// Parses "K/N" with 1 <= K <= N. Throws UsageError on anything else.
Shard parse_shard(const std::string& text);

/// Half-open index range [begin, end) of shard `s` over `items` items:
/// begin = floor(items (K-1) / N), end = floor(items K / N). Empty when items < N for some K.
struct IndexRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};
IndexRange shard_range(std::size_t items, const Shard& s);

/// Shard `s`'s part of `items`: items[shard_range(items.size(), s)], in order. Every tool splits
/// its work (simulations, runs, frames) through this, so shards merge into the single run's output.
template <class T>
std::vector<T> shard_part(const std::vector<T>& items, const Shard& s) {
  const IndexRange r = shard_range(items.size(), s);
  return std::vector<T>(items.begin() + static_cast<std::ptrdiff_t>(r.begin),
                        items.begin() + static_cast<std::ptrdiff_t>(r.end));
}

}  // namespace datadyn
