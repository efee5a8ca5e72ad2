#pragma once
/// @file
/// The scene's colliders, a sphere and the ground plane (Lee, Oh, Lee 2019's collision scene):
/// a particle inside is moved to the surface plus a margin, along the ray from the sphere's centre
/// or straight up from the ground. The solver does it after every global solve; upscale does it
/// to every upscaled frame, whose interpolated or predicted surface can cut through a collider
/// its miniature only touched at its own particles.

#include <vector>

#include "cloth/cloth_params.hpp"
#include "core/types.hpp"

namespace datadyn::cloth {

/// Where project_to_colliders put a particle: bit 1 on the sphere, bit 2 on the ground.
enum ColliderContact : char { kOnSphere = 1, kOnGround = 2 };

/// Moves each particle listed in `movable` that lies within p.collision_margin of the inside of
/// an enabled collider to its surface plus the margin (a particle at the sphere's centre goes up).
/// ORs ColliderContact bits into (*contact)[i] when `contact` is given.
void project_to_colliders(const ClothParams& p, Points3& x, const std::vector<int>& movable,
                          std::vector<char>* contact);

/// Particles strictly inside the sphere or below the ground (the margin not counted): how often
/// a surface passes through its colliders.
long count_collider_penetrations(const ClothParams& p, const Points3& x);

}  // namespace datadyn::cloth
