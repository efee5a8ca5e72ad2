#include "cloth/colliders.hpp"

namespace datadyn::cloth {

void project_to_colliders(const ClothParams& p, Points3& x, const std::vector<int>& movable,
                          std::vector<char>* contact) {
  const double margin = p.collision_margin;
  for (int i : movable) {
    if (p.sphere.enabled) {
      const Eigen::Vector3d d = x.row(i).transpose() - p.sphere.center;
      const double r = p.sphere.radius + margin;
      const double len = d.norm();
      if (len < r) {
        const Eigen::Vector3d n = len > 0.0 ? Eigen::Vector3d(d / len) : Eigen::Vector3d::UnitY();
        x.row(i) = (p.sphere.center + r * n).transpose();
        if (contact) (*contact)[static_cast<std::size_t>(i)] |= kOnSphere;
      }
    }
    if (p.ground.enabled && x(i, 1) < p.ground.height + margin) {
      x(i, 1) = p.ground.height + margin;
      if (contact) (*contact)[static_cast<std::size_t>(i)] |= kOnGround;
    }
  }
}

long count_collider_penetrations(const ClothParams& p, const Points3& x) {
  long inside = 0;
  const double r2 = p.sphere.radius * p.sphere.radius;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const bool in_sphere =
        p.sphere.enabled && (x.row(i).transpose() - p.sphere.center).squaredNorm() < r2;
    const bool below = p.ground.enabled && x(i, 1) < p.ground.height;
    if (in_sphere || below) ++inside;
  }
  return inside;
}

}  // namespace datadyn::cloth
