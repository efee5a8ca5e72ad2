#include "cloth/miniature.hpp"

#include <algorithm>

#include "cloth/self_collision.hpp"
#include "core/check.hpp"

namespace datadyn::cloth {

bool has_miniature(const ClothParams& target, int factor) {
  return factor >= 1 && (target.nx - 1) % factor == 0 && (target.ny - 1) % factor == 0 &&
         (target.nx - 1) / factor >= 1 && (target.ny - 1) / factor >= 1;
}

ClothParams miniature_params(const ClothParams& target, int factor) {
  DATADYN_CHECK(has_miniature(target, factor));
  const double f = factor;
  ClothParams m = target;
  m.nx = (target.nx - 1) / factor + 1;
  m.ny = (target.ny - 1) / factor + 1;
  m.origin = target.origin / f;  // spacing stays: rest lengths are the target's
  m.sphere.center = target.sphere.center / f;
  m.sphere.radius = target.sphere.radius / f;
  m.ground.height = target.ground.height / f;
  m.collision_margin = target.collision_margin / f;
  // Scaled like every length, but not below the spacing (the rest lengths are kept): a thinner
  // sheet has gaps between its particles that another layer passes through.
  m.self_collision.thickness = std::max(self_thickness(target) / f, target.spacing);
  m.force_scale = target.force_scale / f;        // eq. 8
  m.velocity_scale = target.velocity_scale * f;  // wind sees the target's velocity
  return m;
}

ClothParams target_of_miniature(ClothParams mini, int factor) {
  const double f = factor;
  mini.nx = (mini.nx - 1) * factor + 1;
  mini.ny = (mini.ny - 1) * factor + 1;
  mini.origin *= f;
  mini.sphere.center *= f;
  mini.sphere.radius *= f;
  mini.ground.height *= f;
  mini.collision_margin *= f;
  return mini;
}

Points3 downsample_downscale(const Eigen::Ref<const Points3>& target, int nx, int ny, int factor) {
  DATADYN_CHECK_EQ(target.rows(), static_cast<Eigen::Index>(nx) * ny);
  DATADYN_CHECK_EQ((nx - 1) % factor, 0);
  DATADYN_CHECK_EQ((ny - 1) % factor, 0);
  const int mx = (nx - 1) / factor + 1, my = (ny - 1) / factor + 1;
  Points3 m(static_cast<Eigen::Index>(mx) * my, 3);
  for (int r = 0; r < my; ++r)
    for (int c = 0; c < mx; ++c)
      m.row(r * mx + c) = target.row(factor * r * nx + factor * c) / factor;
  return m;
}

}  // namespace datadyn::cloth
