#pragma once
/// @file
/// Numbers as text for the text formats (OBJ, USDA, XDMF), private to lib/io: the shortest text
/// that reads back to the same value, so text outputs round-trip exactly.

#include <charconv>
#include <cstdint>
#include <string>

namespace datadyn::io::text {

/// Appends the shortest text of `v` that reads back exactly: as a float32 when `v` is one (cache
/// positions are float32, "0.1" rather than "0.10000000149011612"), else as a float64.
inline void append_number(std::string& out, double v) {
  char buf[32];
  const float f = static_cast<float>(v);
  const auto r = static_cast<double>(f) == v ? std::to_chars(buf, buf + sizeof buf, f)
                                             : std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

inline void append_number(std::string& out, float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

inline void append_integer(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace datadyn::io::text
