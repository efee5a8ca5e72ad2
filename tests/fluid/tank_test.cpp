// Tank discretisation: wall and dummy layers against closed-form distances, obstacles, the domain
// test, shape errors, and initial water placement.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "fluid/database.hpp"
#include "fluid/tank.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

double distance_to_box(const Eigen::Vector2d& p, const Eigen::Vector2d& lo,
                       const Eigen::Vector2d& hi) {
  const Eigen::Vector2d d = (lo - p).cwiseMax(p - hi).cwiseMax(Eigen::Vector2d::Zero());
  return d.norm();
}

double distance_to_segment(const Eigen::Vector2d& p, const Eigen::Vector2d& a,
                           const Eigen::Vector2d& b) {
  const Eigen::Vector2d d = b - a;
  const double t = std::clamp((p - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
  return (a + t * d - p).norm();
}

}  // namespace

TEST_CASE("rectangular tank: 2 wall + 2 dummy layers, matching the distance to the box") {
  TankShape shape;
  shape.vertices = {{0, 0}, {1, 0}, {1, 0.5}, {0, 0.5}};
  const double l0 = 0.05;
  const Tank tank(shape, l0);
  // Expected: every lattice point below the rim and outside the box, classified by its exact
  // Euclidean distance to the box (the wetted boundary of an open box is its whole outline below
  // the rim).
  int walls = 0, dummies = 0;
  for (int j = -6; j < 10; ++j) {
    for (int i = -6; i < 26; ++i) {
      const Eigen::Vector2d p(l0 * (i + 0.5), l0 * (j + 0.5));
      if (p.y() >= 0.5 || (p.x() > 0 && p.x() < 1 && p.y() > 0)) continue;
      const double d = distance_to_box(p, {0, 0}, {1, 0.5});
      if (d < 2 * l0)
        ++walls;
      else if (d < 4 * l0)
        ++dummies;
    }
  }
  const auto& types = tank.boundary_types();
  CHECK(std::count(types.begin(), types.end(), ParticleType::Wall) == walls);
  CHECK(std::count(types.begin(), types.end(), ParticleType::Dummy) == dummies);
  CHECK(walls == 2 * 20 + 2 * 2 * 10 + 2 * 3);  // bottom, two sides, two rounded corners
  for (Eigen::Index k = 0; k < tank.boundary_positions().rows(); ++k)
    CHECK_FALSE(tank.contains(tank.boundary_positions().row(k).transpose()));

  CHECK(tank.contains({0.5, 0.25}));
  CHECK(tank.contains({0.5, 3.0}));  // open top: splashes above the rim are inside
  CHECK_FALSE(tank.contains({1.2, 3.0}));
  CHECK_FALSE(tank.contains({-0.01, 0.25}));
  CHECK(tank.depth({-0.075, 0.25}, tank.depth_search()) == doctest::Approx(0.075).epsilon(1e-9));
  CHECK(tank.depth({0.5, 0.25}, tank.depth_search()) == 0.0);
  CHECK(std::isinf(tank.depth({-1.0, 0.25}, tank.depth_search())));
}

TEST_CASE("a sloping beach is lined with wall particles without gaps") {
  TankShape shape;
  shape.vertices = {{0, 0}, {2, 0}, {2, 0.6}, {0, 0.6}};
  shape.obstacles = {{{0.9, 0.0}, {2.0, 0.0}, {2.0, 0.33}}};
  const double l0 = 0.02;
  const Tank tank(shape, l0);
  const Points2& b = tank.boundary_positions();
  // No boundary particle in the water, none further than 4 l0 from the wetted boundary.
  const Eigen::Vector2d s0(0.9, 0.0), s1(2.0, 0.33);
  for (Eigen::Index k = 0; k < b.rows(); ++k) {
    const Eigen::Vector2d p = b.row(k).transpose();
    CHECK_FALSE(tank.contains(p));
    const double d = std::min(
        {distance_to_segment(p, s0, s1), distance_to_segment(p, {0, 0}, {0.9, 0}),
         distance_to_segment(p, {0, 0}, {0, 0.6}), distance_to_segment(p, {2, 0.33}, {2, 0.6})});
    CHECK(d < 4 * l0 + 1e-9);
  }
  // Along the slope, every point has a wall particle within one spacing (no gap to leak through).
  for (int k = 0; k <= 100; ++k) {
    const Eigen::Vector2d q = s0 + (s1 - s0) * (k / 100.0);
    double best = 1e9;
    for (Eigen::Index i = 0; i < b.rows(); ++i)
      if (tank.boundary_types()[static_cast<std::size_t>(i)] == ParticleType::Wall)
        best = std::min(best, (b.row(i).transpose() - q).norm());
    CHECK(best <= l0);
  }
  CHECK_FALSE(tank.contains({1.8, 0.1}));  // inside the beach
  CHECK(tank.contains({1.0, 0.1}));
}

TEST_CASE("tank shape errors name the problem") {
  TankShape s;
  s.vertices = {{0, 0}, {1, 0}};
  CHECK(tank_shape_error(s).find("tank: expected at least 3 vertices, got 2") == 0);
  s.vertices = {{0, 0}, {1, 0}, {2, 0}};
  CHECK(tank_shape_error(s).find("no area") != std::string::npos);
  s.vertices = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  s.obstacles = {{{0.5, 0.5}, {3, 0.5}, {0.5, 0.8}}};
  CHECK(tank_shape_error(s).find("obstacle 0: vertex (3, 0.5) is outside the tank") == 0);
  s.obstacles = {{{0.5, 0}, {1, 0}, {1, 0.3}}};  // touching the walls is fine
  CHECK(tank_shape_error(s).empty());
  // A polygon whose edges cross has no inside to fill (it passed, and the run failed with a
  // particle "inside a wall"): a bow tie, a notch through the floor, and a spike back onto an
  // edge. Non-convex simple polygons (the beach tank) stay fine.
  s.obstacles.clear();
  s.vertices = {{0, 0}, {2, 1}, {2, 0}, {0, 2}};
  CHECK(tank_shape_error(s) ==
        "tank: edges 0 (0, 0)-(2, 1) and 2 (2, 0)-(0, 2) meet: expected a simple polygon (its "
        "edges meet only at their shared corners)");
  s.vertices = {{0, 0}, {2, 0}, {2, 1}, {1, -0.5}, {0, 1}};
  CHECK(tank_shape_error(s).find("tank: edges 0 (0, 0)-(2, 0) and 2 (2, 1)-(1, -0.5) meet") == 0);
  s.vertices = {{0, 0}, {2, 0}, {2, 1}, {1, 0}, {0, 1}};  // vertex 3 on edge 0
  CHECK(tank_shape_error(s).find("tank: edges 0 (0, 0)-(2, 0) and 2 (2, 1)-(1, 0) meet") == 0);
  s.vertices = {{0, 0}, {2, 0}, {2, 1}, {1, 0.5}, {0, 1}};
  CHECK(tank_shape_error(s).empty());
  s.vertices = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  s.obstacles = {{{0.2, 0.2}, {0.4, 0.4}, {0.4, 0.2}, {0.2, 0.5}}};
  CHECK(tank_shape_error(s).find("obstacle 0: edges 0") == 0);
}

TEST_CASE("initial water: column plus still layer on the lattice, a column outside is an error") {
  Scene scene;
  scene.tank.vertices = {{0, 0}, {1, 0}, {1, 0.6}, {0, 0.6}};
  scene.l0 = 0.025;
  scene.water_level = 0.1;
  const Tank tank(scene.tank, scene.l0);
  WaterColumn c{0.0, 0.25, 0.5, 0.0, {0.3, 0.0}};
  const InitialWater w = initial_water(tank, scene, c);
  CHECK(w.error.empty());
  // Column 10 x 20 particles, layer 4 rows over the other 30 columns.
  CHECK(w.position.rows() == 10 * 20 + 30 * 4);
  int moving = 0;
  for (Eigen::Index i = 0; i < w.velocity.rows(); ++i) moving += w.velocity(i, 0) == 0.3;
  CHECK(moving == 200);

  c.x = 0.9;  // sticks out through the right wall
  const InitialWater bad = initial_water(tank, scene, c);
  CHECK(bad.error.find("outside the tank") != std::string::npos);
  CHECK(bad.error.find("(1.013, 0.0125)") != std::string::npos);
}

TEST_CASE("initial water: columns and levels far beyond the tank are errors, found at once") {
  // Each of these used to walk the lattice for ever (x += l0 stops moving at 1e308).
  Scene scene;
  scene.tank.vertices = {{0, 0}, {1, 0}, {1, 0.6}, {0, 0.6}};
  scene.l0 = 0.025;
  const Tank tank(scene.tank, scene.l0);
  const auto error_of = [&](const WaterColumn& c) { return initial_water(tank, scene, c).error; };
  // As wide as a double goes: the first particle beyond the right wall is named.
  CHECK(error_of({0.0, 1e308, 0.5, 0.0, {0, 0}}).find("a particle at (1.013, 0.0125) m outside") !=
        std::string::npos);
  // Entirely beside or below the tank: the column and the tank's extent are named.
  const std::string far = error_of({-1e308, 0.25, 0.5, 0.0, {0, 0}});
  CHECK(far.find("the water column [-1e+308, -1e+308] x [0, 0.5] m is outside the tank's extent "
                 "[0, 1] x [0, 1.2] m") == 0);
  CHECK(!error_of({1e308, 0.25, 0.5, 0.0, {0, 0}}).empty());
  CHECK(error_of({0.0, 0.25, 0.5, -1e308, {0, 0}}).find("is outside the tank's extent") !=
        std::string::npos);
  // The open top has no lid, so the height is bounded by the tank's height above the rim (1.2 m).
  CHECK(error_of({0.0, 0.25, 1.2, 0.0, {0, 0}}).empty());
  CHECK(error_of({0.0, 0.25, 1e308, 0.0, {0, 0}}).find("is outside the tank's extent") !=
        std::string::npos);
  CHECK(error_of({0.0, 0.25, 0.2, 1e308, {0, 0}}).find("is outside the tank's extent") !=
        std::string::npos);
  scene.water_level = 1e308;
  CHECK(error_of({0.0, 0.25, 0.5, 0.0, {0, 0}}) ==
        "the water level 1e+308 m is above 1.2 m, the tank's height above its rim");
}
