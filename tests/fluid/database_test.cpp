// The sweep of the database: simulation order and names, frames, the speed a fixed step is checked
// against.

#include <doctest/doctest.h>

#include <cmath>

#include "fluid/database.hpp"

using namespace datadyn::fluid;

TEST_CASE("sweep: heights outermost, velocities innermost, names by index") {
  Scene scene;
  Sweep sweep;
  sweep.heights = {0.2, 0.3};
  sweep.widths = {0.1, 0.2, 0.3};
  sweep.velocities = {Eigen::Vector2d(0, 0), Eigen::Vector2d(0.5, 0)};
  const auto sims = sweep_simulations(scene, sweep);
  REQUIRE(sims.size() == 12);
  CHECK(sims[0].name == "sim_000");
  CHECK(sims[11].name == "sim_011");
  CHECK(sims[7].index == 7);
  // 7 = height 1, width 0, velocity 1.
  CHECK(sims[7].column.height == 0.3);
  CHECK(sims[7].column.width == 0.1);
  CHECK(sims[7].column.velocity.x() == 0.5);
  CHECK(sims[7].column.x == scene.column.x);
}

TEST_CASE("sweep: a height range includes both ends, the scene fills what the sweep leaves out") {
  Scene scene;
  scene.column.width = 0.25;
  Sweep sweep;  // heights empty: the range
  sweep.height_from = 0.2;
  sweep.height_to = 0.48;
  sweep.height_count = 15;
  const auto sims = sweep_simulations(scene, sweep);
  REQUIRE(sims.size() == 15);
  CHECK(sims.front().column.height == doctest::Approx(0.2));
  CHECK(sims[1].column.height == doctest::Approx(0.22));
  CHECK(sims.back().column.height == doctest::Approx(0.48));
  for (const auto& s : sims) CHECK(s.column.width == 0.25);
  sweep.height_count = 1;
  CHECK(sweep_simulations(scene, sweep).front().column.height == 0.2);
}

TEST_CASE("frames: every 1/frame_rate from 0 to the duration") {
  Scene s;
  s.duration = 2.0;
  s.frame_rate = 30;
  CHECK(frame_count(s) == 61);
  s.duration = 0.3;  // 9.000000000000002 frames in floating point: still 10 frames
  CHECK(frame_count(s) == 10);
  s.duration = 0.31;
  CHECK(frame_count(s) == 10);
}

TEST_CASE("the speed a fixed step is checked against: |v0| + sqrt(2 g h) from the column top") {
  TankShape shape;
  shape.vertices = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  const Tank tank(shape, 0.02);
  WaterColumn c{0.0, 0.2, 0.5, 0.1, Eigen::Vector2d(3, 4)};
  CHECK(estimated_max_speed(tank, c, {0, -9.81}) ==
        doctest::Approx(5.0 + std::sqrt(2 * 9.81 * 0.6)));
}
