// The sphere and the ground plane: particles inside are moved to the surface plus the margin along
// the closed-form direction, those outside or not movable stay, and the penetration count takes
// the surface itself, not the margin.

#include <doctest/doctest.h>

#include <cmath>

#include "cloth/colliders.hpp"
#include "cloth/miniature.hpp"

using namespace datadyn::cloth;
using datadyn::Points3;

namespace {

ClothParams scene() {
  ClothParams p;
  p.sphere.enabled = true;
  p.sphere.center = {0.0, 1.0, 0.0};
  p.sphere.radius = 0.5;
  p.ground.enabled = true;
  p.ground.height = 0.0;
  p.collision_margin = 0.01;
  return p;
}

}  // namespace

TEST_CASE("colliders: particles inside are moved to the surface plus the margin") {
  const ClothParams p = scene();
  Points3 x(6, 3);
  x << 0.3, 1.4, 0.0,   // 0: inside the sphere, 0.5 from its centre along (3, 4, 0)/5
      0.0, 1.0, 0.0,    // 1: at the centre
      0.2, -0.3, 0.1,   // 2: below the ground
      0.0, 1.505, 0.0,  // 3: within the margin above the sphere's top
      2.0, 0.5, 0.0,    // 4: outside both
      0.1, 1.1, 0.0;    // 5: inside the sphere, but not movable (pinned)
  std::vector<char> contact(6, 0);
  CHECK(count_collider_penetrations(p, x) == 4);  // 0, 1, 2, 5; 3 is outside the surface
  project_to_colliders(p, x, {0, 1, 2, 3, 4}, &contact);
  const double r = 0.51;  // radius + margin
  // Along the ray from the centre: 0.51 (3, 4, 0)/5 from (0, 1, 0).
  CHECK(x(0, 0) == doctest::Approx(0.306).epsilon(1e-12));
  CHECK(x(0, 1) == doctest::Approx(1.408).epsilon(1e-12));
  CHECK(x(1, 1) == doctest::Approx(1.0 + r).epsilon(1e-12));  // no ray: straight up
  CHECK(x(1, 0) == 0.0);
  CHECK(x(2, 1) == 0.01);  // on the ground plus the margin, x and z kept
  CHECK(x(2, 0) == 0.2);
  CHECK(x(2, 2) == 0.1);
  CHECK(x(3, 1) == doctest::Approx(1.0 + r).epsilon(1e-12));
  CHECK(x(4, 0) == 2.0);
  CHECK(x(4, 1) == 0.5);
  CHECK(x(5, 0) == 0.1);  // not listed: left where it was
  CHECK(x(5, 1) == 1.1);
  CHECK(contact == std::vector<char>{kOnSphere, kOnSphere, kOnGround, kOnSphere, 0, 0});
  CHECK(count_collider_penetrations(p, x) == 1);  // only the pinned one
}

TEST_CASE("colliders: a disabled collider moves nothing and counts nothing") {
  ClothParams p = scene();
  p.sphere.enabled = false;
  p.ground.enabled = false;
  Points3 x(1, 3);
  x << 0.0, -1.0, 0.0;
  CHECK(count_collider_penetrations(p, x) == 0);
  project_to_colliders(p, x, {0}, nullptr);
  CHECK(x(0, 1) == -1.0);
}

TEST_CASE("colliders: a miniature's grid, pins and colliders scaled back are its target's") {
  ClothParams target = scene();
  target.nx = target.ny = 13;  // 12 cells: miniatures of factor 2, 3 and 4
  for (int f : {2, 3, 4}) {
    CAPTURE(f);
    const ClothParams back = target_of_miniature(miniature_params(target, f), f);
    CHECK(back.nx == target.nx);
    CHECK(back.ny == target.ny);
    // Divided by f and multiplied back: exact for powers of two, within a rounding for 3.
    const double tol = f == 3 ? 4e-16 : 0.0;
    CHECK((back.origin - target.origin).cwiseAbs().maxCoeff() <= tol);
    CHECK((back.sphere.center - target.sphere.center).cwiseAbs().maxCoeff() <= tol);
    CHECK(std::abs(back.sphere.radius - target.sphere.radius) <= tol);
    CHECK(std::abs(back.ground.height - target.ground.height) <= tol);
    CHECK(std::abs(back.collision_margin - target.collision_margin) <= tol);
  }
}
