#include "fluid/database.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/check.hpp"

namespace datadyn::fluid {

std::vector<SimulationSpec> sweep_simulations(const Scene& scene, const Sweep& sweep) {
  std::vector<double> heights = sweep.heights;
  if (heights.empty()) {
    DATADYN_CHECK(sweep.height_count >= 1);
    for (int k = 0; k < sweep.height_count; ++k) {
      const double t =
          sweep.height_count == 1 ? 0.0 : static_cast<double>(k) / (sweep.height_count - 1);
      heights.push_back(sweep.height_from + t * (sweep.height_to - sweep.height_from));
    }
  }
  std::vector<double> widths = sweep.widths;
  if (widths.empty()) widths.push_back(scene.column.width);
  std::vector<Eigen::Vector2d> velocities = sweep.velocities;
  if (velocities.empty()) velocities.push_back(scene.column.velocity);

  std::vector<SimulationSpec> out;
  for (double h : heights) {
    for (double w : widths) {
      for (const auto& v : velocities) {
        SimulationSpec s;
        s.index = static_cast<int>(out.size());
        char name[32];
        std::snprintf(name, sizeof name, "sim_%03d", s.index);
        s.name = name;
        s.column = scene.column;
        s.column.height = h;
        s.column.width = w;
        s.column.velocity = v;
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

InitialWater initial_water(const Tank& tank, const Scene& scene, const WaterColumn& c) {
  InitialWater w;
  const double eps = 1e-9 * tank.l0();
  auto in_column = [&](const Eigen::Vector2d& p) {
    return p.x() > c.x + eps && p.x() < c.x + c.width - eps && p.y() > c.bottom + eps &&
           p.y() < c.bottom + c.height - eps;
  };
  const double l0 = tank.l0();
  // Every lattice point of the column rectangle must be in the water domain. The walk is clipped
  // to the tank's extent and a spacing beyond it (where a column that reaches past the walls or
  // the floor puts its first particle outside), so a column 1e308 m wide ends at once. Above an
  // open tank's rim the domain has no top: water there may rise at most the tank's height.
  const Eigen::Vector2d lo = tank.min_corner(), hi = tank.max_corner();
  const double ceiling = hi.y() + (hi.y() - lo.y());
  const double x0 = std::max(c.x, lo.x() - 2 * l0), x1 = std::min(c.x + c.width, hi.x() + 2 * l0);
  const double y0 = std::max(c.bottom, lo.y() - 2 * l0), y1 = c.bottom + c.height;
  char buf[320];
  if (!(x0 < x1 && y0 < y1 && y1 <= ceiling)) {
    std::snprintf(buf, sizeof buf,
                  "the water column [%.4g, %.4g] x [%.4g, %.4g] m is outside the tank's extent "
                  "[%.4g, %.4g] x [%.4g, %.4g] m (up to the tank's height above the rim)",
                  c.x, c.x + c.width, c.bottom, y1, lo.x(), hi.x(), lo.y(), ceiling);
    w.error = buf;
    return w;
  }
  if (!(scene.water_level <= ceiling)) {
    std::snprintf(buf, sizeof buf,
                  "the water level %.4g m is above %.4g m, the tank's height above its rim",
                  scene.water_level, ceiling);
    w.error = buf;
    return w;
  }
  // A column under the still water is still water: every simulation of such a sweep was the same.
  // (A column less than a particle tall is no column, as for a still tank.)
  if (!(y1 > scene.water_level) && c.height >= l0) {
    std::snprintf(buf, sizeof buf,
                  "the water column's top (y = %.4g m) is not above the still water level "
                  "(water_level = %.4g m): there would be no column",
                  y1, scene.water_level);
    w.error = buf;
    return w;
  }
  const Eigen::Vector2d first = tank.lattice_point({x0 + 0.5 * l0, y0 + 0.5 * l0});
  for (double y = first.y() - l0; y < y1; y += l0) {
    for (double x = first.x() - l0; x < x1; x += l0) {
      const Eigen::Vector2d p(x, y);
      if (!in_column(p) || tank.contains(p)) continue;
      std::snprintf(buf, sizeof buf,
                    "the water column puts a particle at (%.4g, %.4g) m outside the tank (in a "
                    "wall or an obstacle, or beside the tank)",
                    x, y);
      w.error = buf;
      return w;
    }
  }
  const double top = std::max(scene.water_level, c.bottom + c.height);
  w.position = tank.lattice_points(
      [&](const Eigen::Vector2d& p) { return in_column(p) || p.y() < scene.water_level - eps; },
      top);
  w.velocity.resize(w.position.rows(), 2);
  Eigen::Index above = 0;  // column particles that are not still water
  for (Eigen::Index i = 0; i < w.position.rows(); ++i) {
    const Eigen::Vector2d p = w.position.row(i).transpose();
    const Eigen::Vector2d v = in_column(p) ? c.velocity : Eigen::Vector2d::Zero();
    w.velocity.row(i) = v.transpose();
    if (in_column(p) && !(p.y() < scene.water_level - eps)) ++above;
  }
  // A column the lattice gives no particle above the still water (narrower than l0, or less
  // than a spacing above it) left the still tank alone, and a sweep of such columns wrote the
  // same simulation again and again with exit 0.
  if (above == 0 && c.height >= l0) {
    std::snprintf(buf, sizeof buf,
                  "the water column [%.4g, %.4g] x [%.4g, %.4g] m holds no particle above the "
                  "still water (water_level = %.4g m): it is narrower than l0 = %.4g m or ends "
                  "less than that above the water",
                  c.x, c.x + c.width, c.bottom, y1, scene.water_level, l0);
    w.error = buf;
    w.position.resize(0, 2);
    w.velocity.resize(0, 2);
  }
  return w;
}

double estimated_max_speed(const Tank& tank, const WaterColumn& column,
                           const Eigen::Vector2d& gravity) {
  const double drop = std::max(0.0, column.bottom + column.height - tank.min_corner().y());
  return column.velocity.norm() + std::sqrt(2.0 * gravity.norm() * drop);
}

std::size_t frame_count(const Scene& scene) {
  return static_cast<std::size_t>(std::floor(scene.duration * scene.frame_rate + 1e-9)) + 1;
}

SimulationResult run_simulation(const Tank& tank, const Scene& scene, const MpsParams& params,
                                const InitialWater& water, const FrameCallback& on_frame,
                                const ProgressCallback& progress) {
  DATADYN_CHECK(water.error.empty());
  MpsSolver solver(tank, params, water.position, water.velocity);
  SimulationResult res;
  const std::size_t frames = frame_count(scene);
  double t = 0;
  on_frame(0, t, solver);
  res.frames = 1;
  if (progress) progress(1, frames);
  for (std::size_t k = 1; k < frames; ++k) {
    const double t_end = static_cast<double>(k) / scene.frame_rate;
    while (t < t_end) {
      // Equal steps to the frame time, each no longer than the solver allows now.
      const double remaining = t_end - t;
      const double dt_allowed = solver.stable_time_step();
      if (params.time_step == TimeStepMode::Courant && dt_allowed < params.dt_min) {
        res.ok = false;
        res.failure.status = StepStatus::CourantExceeded;
        res.failure.dt = dt_allowed;
      } else {
        const double steps = std::ceil(remaining / dt_allowed - 1e-9);
        const double dt = steps <= 1 ? remaining : remaining / steps;
        const StepResult r = solver.step(dt);
        ++res.steps;
        res.max_iterations = std::max(res.max_iterations, r.iterations);
        t = steps <= 1 ? t_end : t + dt;
        if (r.status != StepStatus::Ok) {
          res.ok = false;
          res.failure = r;
        }
      }
      if (!res.ok) {
        res.time = solver.time();
        res.timing = solver.timing();
        char head[128];
        std::snprintf(head, sizeof head, "frame %zu (t = %.4f s, step %lld): ", k + 1,
                      solver.time(), res.steps);
        std::string what = describe_failure(res.failure, params);
        if (res.failure.particle < 0 && res.failure.status == StepStatus::CourantExceeded) {
          char b[160];
          std::snprintf(b, sizeof b,
                        "the Courant time step fell to %.3g s, below dt_min %.3g s (diverged)",
                        res.failure.dt, params.dt_min);
          what = b;
        }
        res.message = head + what;
        return res;
      }
    }
    on_frame(k, t_end, solver);
    res.frames = k + 1;
    if (progress) progress(k + 1, frames);
  }
  res.time = solver.time();
  res.timing = solver.timing();
  return res;
}

}  // namespace datadyn::fluid
