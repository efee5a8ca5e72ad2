#pragma once
/// @file
/// The 1-minute load average, which benchmarks print before and after their runs: the cores are
/// shared, and a figure measured under load is read with it.

#include <fstream>
#include <string>

namespace datadyn::bench {

/// The first field of /proc/loadavg, or "unknown".
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

}  // namespace datadyn::bench
