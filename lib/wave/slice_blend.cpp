#include "wave/slice_blend.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::wave {

void blend_slices(const std::vector<const Grid2*>& slices, const SliceLayout& layout,
                  BlendMethod method, std::vector<float>& out) {
  DATADYN_CHECK(!slices.empty());
  DATADYN_CHECK_GT(layout.spacing, 0.0);
  const Grid2Spec& spec = slices.front()->spec;
  for (const Grid2* s : slices) DATADYN_CHECK(s->spec == spec);
  const std::size_t layer = spec.size();
  DATADYN_CHECK_EQ(out.size(), layout.nz * layer);
  const long last = static_cast<long>(slices.size()) - 1;
  const auto slice = [&](long k) {
    return slices[static_cast<std::size_t>(std::clamp(k, 0L, last))];
  };
  // One layer per task: each layer is written by exactly one task, so the result does not depend
  // on the thread count.
  parallel_for(layout.nz, 1, [&](std::size_t z0, std::size_t z1) {
    for (std::size_t iz = z0; iz < z1; ++iz) {
      const double z = layout.origin_z + layout.voxel * static_cast<double>(iz);
      const double s =
          std::clamp((z - layout.first_z) / layout.spacing, 0.0, static_cast<double>(last));
      const long k = std::min(static_cast<long>(std::floor(s)), std::max(last - 1, 0L));
      const double u = last == 0 ? 0.0 : s - static_cast<double>(k);
      float* dst = out.data() + iz * layer;
      if (method == BlendMethod::Linear || last == 0) {
        const auto& a = slice(k)->values;
        const auto& b = slice(k + 1)->values;
        const float wa = static_cast<float>(1.0 - u), wb = static_cast<float>(u);
        for (std::size_t n = 0; n < layer; ++n) dst[n] = wa * a[n] + wb * b[n];
      } else {
        // Catmull-Rom weights for p_{k-1}, p_k, p_{k+1}, p_{k+2}.
        const double u2 = u * u, u3 = u2 * u;
        const float w0 = static_cast<float>(0.5 * (-u3 + 2 * u2 - u));
        const float w1 = static_cast<float>(0.5 * (3 * u3 - 5 * u2 + 2));
        const float w2 = static_cast<float>(0.5 * (-3 * u3 + 4 * u2 + u));
        const float w3 = static_cast<float>(0.5 * (u3 - u2));
        const auto& p0 = slice(k - 1)->values;
        const auto& p1 = slice(k)->values;
        const auto& p2 = slice(k + 1)->values;
        const auto& p3 = slice(k + 2)->values;
        for (std::size_t n = 0; n < layer; ++n)
          dst[n] = w0 * p0[n] + w1 * p1[n] + w2 * p2[n] + w3 * p3[n];
      }
    }
  });
}

}  // namespace datadyn::wave
