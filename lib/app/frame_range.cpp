#include "app/frame_range.hpp"

#include <algorithm>
#include <charconv>

#include "core/errors.hpp"

namespace datadyn::app {

namespace {

constexpr std::int64_t kMaxFrames = 10'000'000;  // a guard against "1-1e12" typos

[[noreturn]] void fail(const std::string& text, const std::string& part, const std::string& why) {
  throw UsageError("--frames '" + text + "': '" + part + "': " + why +
                   " (expected e.g. 1-100, 1-100x2 or 1,5,10-20)");
}

/// Reads a possibly negative integer at s[pos...]; advances pos.
bool read_int(const std::string& s, std::size_t& pos, std::int64_t& out) {
  const char* begin = s.data() + pos;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc() || ptr == begin) return false;
  pos += static_cast<std::size_t>(ptr - begin);
  return true;
}

}  // namespace

std::vector<std::int64_t> parse_frame_range(const std::string& text) {
  std::vector<std::int64_t> frames;
  if (text.empty()) fail(text, text, "empty");
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    if (part.empty()) fail(text, part, "empty item");
    std::size_t pos = 0;
    std::int64_t a = 0, b = 0, step = 1;
    if (!read_int(part, pos, a)) fail(text, part, "not a frame number");
    b = a;
    if (pos < part.size() && part[pos] == '-') {
      ++pos;
      if (!read_int(part, pos, b)) fail(text, part, "no end frame after '-'");
      if (pos < part.size() && part[pos] == 'x') {
        ++pos;
        if (!read_int(part, pos, step) || step <= 0) fail(text, part, "step after 'x' must be > 0");
      }
    }
    if (pos != part.size()) fail(text, part, "unexpected '" + part.substr(pos) + "'");
    if (b < a) fail(text, part, "end before start");
    // b >= a, so the unsigned difference is exact even across the int64 range.
    const std::uint64_t span = static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
    if (span / static_cast<std::uint64_t>(step) + frames.size() >=
        static_cast<std::uint64_t>(kMaxFrames))
      fail(text, part, "more than 10,000,000 frames");
    // In unsigned arithmetic: k * step may pass INT64_MAX on its way from a negative a to b.
    for (std::uint64_t k = 0; k <= span / static_cast<std::uint64_t>(step); ++k)
      frames.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(a) +
                                                 k * static_cast<std::uint64_t>(step)));
    start = comma + 1;
  }
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  return frames;
}

std::vector<std::int64_t> frames_within(std::int64_t count,
                                        const std::optional<std::vector<std::int64_t>>& requested,
                                        const std::string& context) {
  if (requested) {
    for (std::int64_t f : *requested)
      if (f < 1 || f > count)
        throw UsageError("--frames: frame " + std::to_string(f) + " is outside 1-" +
                         std::to_string(count) + context);
    return *requested;
  }
  std::vector<std::int64_t> all;
  for (std::int64_t f = 1; f <= count; ++f) all.push_back(f);
  return all;
}

}  // namespace datadyn::app
