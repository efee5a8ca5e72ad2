#pragma once
// What a cache's arrays take before compression, to compare with a dry run's figure.

#include <cstdint>

#include "io/array.hpp"
#include "io/cache.hpp"

namespace datadyn::test {

/// The bytes of every sequence's float32 points/position, as written (before compression).
inline std::uintmax_t position_bytes(const io::CacheReader& cache) {
  std::uintmax_t bytes = 0;
  for (const auto& name : cache.sequence_names())
    bytes += io::element_count(cache.sequence(name).shape("points/position")) * sizeof(float);
  return bytes;
}

}  // namespace datadyn::test
