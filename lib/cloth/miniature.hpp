#pragma once
/// @file
/// The miniature cloth of Lee, Oh, Lee 2019 (sec. 3.1, fig. 2; sec. 4.1, eqs. 5-8): down-sampling
/// keeps every f-th particle of the target grid in each direction, down-scaling divides positions
/// by f, so every miniature spring has the rest length of the target spring it stands for and the
/// miniature is f times smaller. Masses, spring constants and the time step are the target's;
/// eq. 8 then asks for external forces scaled by 1/f.
///
/// Wind on the miniature (the paper leaves it open): a miniature triangle has the area of one
/// target triangle, but stands for f^2 of them, and its particles move at 1/f of the target's
/// speed. We keep the per-particle force of eq. 8: the Wejchert-Haumann force is computed on the
/// miniature triangle (area = one target triangle, the target's per-triangle area) with the
/// relative velocity of the target (f v' - v_wind), and then scaled by 1/f like gravity. So a
/// miniature particle feels 1/f of the wind force a target particle feels in the same motion.

#include "cloth/cloth_params.hpp"
#include "core/types.hpp"

namespace datadyn::cloth {

/// Whether a target grid has a miniature of factor f: (nx - 1) and (ny - 1) divisible by f.
bool has_miniature(const ClothParams& target, int factor);

/// The miniature's parameters: grid (nx - 1)/f + 1 by (ny - 1)/f + 1 with the target's spacing,
/// origin, colliders and margin divided by f, force_scale / f, velocity_scale * f.
/// @pre has_miniature(target, factor), factor >= 1
ClothParams miniature_params(const ClothParams& target, int factor);

/// What upscaling needs of a miniature's target: `mini` with the grid (nx - 1) f + 1 by
/// (ny - 1) f + 1, and its origin, sphere centre and radius, ground height and margin times f
/// (miniature_params divides them). Forces, wind and the self-collision thickness stay the
/// miniature's.
ClothParams target_of_miniature(ClothParams mini, int factor);

/// DSDS of one target frame: particle (f r, f c) divided by f becomes miniature particle (r, c).
/// @param target #nx*ny by 3, m; returns #mx*my by 3 in miniature metres
Points3 downsample_downscale(const Eigen::Ref<const Points3>& target, int nx, int ny, int factor);

}  // namespace datadyn::cloth
