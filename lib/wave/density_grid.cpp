#include "wave/density_grid.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace datadyn::wave {

Grid2 density_grid(const Eigen::Ref<const Points2>& positions, const Grid2Spec& grid,
                   const DensityParams& params) {
  DATADYN_CHECK_GT(params.influence_radius, 0.0);
  DATADYN_CHECK_GT(grid.spacing, 0.0);
  Grid2 out{grid, std::vector<float>(grid.size(), 0.0f)};
  const double re = params.influence_radius;
  const double rmin = std::max(params.min_radius_fraction * grid.spacing, 1e-12);
  const double inv_h = 1.0 / grid.spacing;
  const auto nx = static_cast<long>(grid.nx), ny = static_cast<long>(grid.ny);
  // Scatter in particle order: each particle adds to the samples within r_e. Sequential, so the
  // float sums are the same on every run.
  for (Eigen::Index p = 0; p < positions.rows(); ++p) {
    const Eigen::Vector2d r = positions.row(p).transpose();
    const Eigen::Vector2d g = (r - grid.origin) * inv_h;
    const long i0 = std::max(0L, static_cast<long>(std::ceil(g.x() - re * inv_h)));
    const long i1 = std::min(nx - 1, static_cast<long>(std::floor(g.x() + re * inv_h)));
    const long j0 = std::max(0L, static_cast<long>(std::ceil(g.y() - re * inv_h)));
    const long j1 = std::min(ny - 1, static_cast<long>(std::floor(g.y() + re * inv_h)));
    for (long j = j0; j <= j1; ++j) {
      for (long i = i0; i <= i1; ++i) {
        const double d =
            (grid.position(static_cast<std::size_t>(i), static_cast<std::size_t>(j)) - r).norm();
        if (d > re) continue;
        out.values[static_cast<std::size_t>(j * nx + i)] +=
            static_cast<float>(re / std::max(d, rmin) - 1.0);
      }
    }
  }
  return out;
}

}  // namespace datadyn::wave
