#pragma once
/// @file
/// Particles to a density grid, Chiba et al. 2011 eq. 3: V(x) = Σ_i W(|x − r_i|) with the MPS
/// weight W(r) = r_e / r − 1 for 0 < r ≤ r_e and 0 beyond.

#include "core/types.hpp"
#include "wave/grid2.hpp"

namespace datadyn::wave {

struct DensityParams {
  double influence_radius = 0.05;  ///< r_e, metres
  /// W is singular at r = 0; distances below r_min are read as r_min, with
  /// r_min = min_radius_fraction * spacing. Bias of the grid total against the integral
  /// N π r_e² (the integral of W over its disk) is about r_min / r_e.
  double min_radius_fraction = 0.25;
};

/// V on `grid` from particle positions.
/// @param positions #N by 2 particle positions (metres).
/// @note Σ V · spacing² ≈ N π r_e² for particles at least r_e inside the grid (the integral of W
/// over a disk of radius r_e is π r_e²); tests check this.
Grid2 density_grid(const Eigen::Ref<const Points2>& positions, const Grid2Spec& grid,
                   const DensityParams& params);

}  // namespace datadyn::wave
