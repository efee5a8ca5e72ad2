#pragma once
// Runs a function on a given number of TBB threads, also on a machine with fewer cores.

#include <cstddef>
#include <utility>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

namespace datadyn::test {

/// Runs `fn` (in the calling thread) in an arena of `threads` slots, with TBB allowed that many
/// threads. The determinism tests compare one thread with several: a global limit alone only
/// caps the default arena, which a one-core runner sizes to one thread, and both runs would then
/// be serial.
template <class F>
auto with_threads(int threads, F&& fn) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  return arena.execute(std::forward<F>(fn));
}

}  // namespace datadyn::test
