#include "core/shard.hpp"

#include <charconv>

#include "core/errors.hpp"

namespace datadyn {

Shard parse_shard(const std::string& text) {
  const auto fail = [&](const std::string& why) -> Shard {
    throw UsageError("--shard '" + text + "': " + why +
                     " (expected K/N with 1 <= K <= N, e.g. 3/10)");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return fail("no '/'");
  Shard s;
  const char* b = text.data();
  auto r1 = std::from_chars(b, b + slash, s.index);
  auto r2 = std::from_chars(b + slash + 1, b + text.size(), s.count);
  if (r1.ec != std::errc() || r1.ptr != b + slash || r2.ec != std::errc() ||
      r2.ptr != b + text.size())
    return fail("K and N must be integers");
  if (s.count < 1) return fail("N must be >= 1");
  if (s.index < 1 || s.index > s.count) return fail("K must be between 1 and N");
  return s;
}

IndexRange shard_range(std::size_t items, const Shard& s) {
  const auto k = static_cast<unsigned long long>(s.index);
  const auto n = static_cast<unsigned long long>(s.count);
  const auto m = static_cast<unsigned long long>(items);
  return {static_cast<std::size_t>(m * (k - 1) / n), static_cast<std::size_t>(m * k / n)};
}

}  // namespace datadyn
