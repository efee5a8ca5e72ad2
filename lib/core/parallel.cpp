#include "core/parallel.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "core/check.hpp"

namespace datadyn {

void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& body) {
  DATADYN_CHECK_GT(grain, std::size_t{0});
  if (n == 0) return;
  if (n <= grain) {
    body(0, n);
    return;
  }
  // simple_partitioner splits down to `grain` exactly: chunk bounds do not depend on threads.
  const std::size_t chunks = (n + grain - 1) / grain;
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, chunks, 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t c = r.begin(); c != r.end(); ++c) {
          const std::size_t b = c * grain;
          body(b, b + grain < n ? b + grain : n);
        }
      },
      tbb::simple_partitioner());
}

}  // namespace datadyn
