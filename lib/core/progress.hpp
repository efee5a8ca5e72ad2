#pragma once
/// @file
/// How a long-running kernel reports progress without printing (OpenVDB's interrupter idea): the
/// caller passes a callback, the kernel calls it after each unit of work. The callback may throw
/// to cancel (the tools throw RunError on SIGINT/SIGTERM); kernels must be exception-safe.

#include <cstddef>
#include <functional>

namespace datadyn {

/// Called with (units done, units in total) after each unit of work.
using ProgressCallback = std::function<void(std::size_t done, std::size_t total)>;

}  // namespace datadyn
