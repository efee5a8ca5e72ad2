#pragma once
/// @file
/// Deterministic parallel loops. The work is cut into fixed chunks of `grain` items that do not
/// depend on the thread count, so a loop whose chunks write disjoint outputs, and a reduction
/// whose partial results are combined in chunk order, give the same bits on 1 or N threads.
/// The thread count is set by the caller (tools: `--threads`, a tbb::global_control).

#include <cstddef>
#include <functional>
#include <vector>

namespace datadyn {

/// Calls body(begin, end) for the chunks [0, grain), [grain, 2 grain), ... of [0, n), in parallel.
/// @pre grain > 0
void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& body);

/// Reduction with a fixed combination order: partial(begin, end) runs per chunk in parallel, then
/// the partial results are folded left to right with combine. Bitwise reproducible.
template <class T, class Partial, class Combine>
T parallel_reduce(std::size_t n, std::size_t grain, T init, Partial partial, Combine combine) {
  const std::size_t chunks = grain == 0 ? 0 : (n + grain - 1) / grain;
  std::vector<T> parts(chunks, init);
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      const std::size_t b = c * grain;
      parts[c] = partial(b, b + grain < n ? b + grain : n);
    }
  });
  T result = init;
  for (const T& p : parts) result = combine(result, p);
  return result;
}

}  // namespace datadyn
