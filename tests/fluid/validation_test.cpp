// Validation of the MPS solver against experiment, a second method and closed forms: the Martin &
// Moyce dam break (1952, as digitized in PySPH) and their square column (as digitized in JAX-SPH),
// an instant-release dam break against two SPH codes, a still tank (hydrostatic pressure, no
// motion), conservation and containment.

#include <doctest/doctest.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "fluid/database.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

// Martin & Moyce 1952, n^2 = 2: surge front Z/a against T = t sqrt(2 g / a).
const std::vector<double> kMmT{0.41, 0.84, 1.19, 1.43, 1.63, 1.83, 1.98, 2.20,
                               2.32, 2.51, 2.65, 2.83, 2.98, 3.11, 3.33};
const std::vector<double> kMmZ{1.11, 1.22, 1.44, 1.67, 1.89, 2.11, 2.33, 2.56,
                               2.78, 3.00, 3.22, 3.44, 3.67, 3.89, 4.11};

const double kColumnL0 = 0.0125;  // 20 particles across a = 0.25 m

/// First time (interpolated) at which the curve (ts, zs) reaches z; -1 if never.
double first_reach(const std::vector<double>& ts, const std::vector<double>& zs, double z) {
  for (std::size_t k = 1; k < ts.size(); ++k) {
    if (zs[k] >= z) {
      const double f = zs[k] > zs[k - 1] ? (z - zs[k - 1]) / (zs[k] - zs[k - 1]) : 1.0;
      return ts[k - 1] + f * (ts[k] - ts[k - 1]);
    }
  }
  return -1;
}

/// A water column `a` wide and `height` high at the left end of a tank `length` long and 1 m
/// high, l0 = 0.0125 m, observed 400 times a second for `duration` seconds on two threads.
SimulationResult run_column(double a, double height, double length, double duration,
                            const FrameCallback& observe) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  Scene s;
  s.tank.vertices = {{0, 0}, {length, 0}, {length, 1}, {0, 1}};
  s.l0 = kColumnL0;
  s.duration = duration;
  s.frame_rate = 400;
  s.column = {0.0, a, height, 0.0, Eigen::Vector2d::Zero()};
  const Tank tank(s.tank, s.l0);
  const InitialWater w = initial_water(tank, s, s.column);
  REQUIRE(w.position.rows() == std::lround(a / s.l0) * std::lround(height / s.l0));
  return run_simulation(tank, s, MpsParams{}, w, observe);
}

}  // namespace

TEST_CASE("dam break (n^2 = 2) against Martin & Moyce, volume conserved, nothing leaves the tank") {
  // The canonical case: column a = 0.25 m wide, 0.5 m high in a 1.0 m long tank; the walls are
  // 1.0 m high instead of 0.6 m so the jet up the far wall after the impact (t > 0.35 s) stays in
  // the open tank. l0 = 0.0125 m puts 20 particles across the column (800 in all): the front is
  // resolved to l0/a = 5 % of a and the run (0.7 s simulated) takes a few seconds on 2 cores.
  const double a = 0.25, l0 = kColumnL0;
  const double t_scale = std::sqrt(2 * 9.81 / a);
  std::vector<double> T, Z;
  Points2 x;
  Eigen::VectorXd n;
  double worst_density = 0, lowest_x = 1, highest_x = 0, lowest_y = 1;
  const SimulationResult r =
      run_column(a, 2 * a, 1.0, 0.7, [&](std::size_t, double t, const MpsSolver& solver) {
        solver.fluid_positions(x);
        REQUIRE(static_cast<std::size_t>(x.rows()) == solver.fluid_count());
        T.push_back(t * t_scale);
        Z.push_back((x.col(0).maxCoeff() + 0.5 * l0) / a);
        lowest_x = std::min(lowest_x, x.col(0).minCoeff());
        highest_x = std::max(highest_x, x.col(0).maxCoeff());
        lowest_y = std::min(lowest_y, x.col(1).minCoeff());
        if (t > 0) {
          // Compression: the mean number density of particles with a full neighbourhood.
          solver.fluid_number_density(n);
          double sum = 0;
          int count = 0;
          for (Eigen::Index i = 0; i < n.size(); ++i)
            if (n[i] >= 0.97 * solver.density_constants().n0) sum += n[i], ++count;
          if (count > 0)
            worst_density =
                std::max(worst_density, std::abs(sum / count / solver.density_constants().n0 - 1));
        }
      });
  INFO(r.message);
  REQUIRE(r.ok);
  // Containment: the solver checks every step that no particle is deeper than leak_depth = l0
  // inside a wall; independently, the water stays within half a spacing of the walls.
  CHECK(lowest_x > -0.5 * l0);
  CHECK(highest_x < 1.0 + 0.5 * l0);
  CHECK(lowest_y > -0.5 * l0);
  // Volume: the particle count is fixed by construction; the density of the water (n / n0 of
  // fully surrounded particles, averaged) stays within 3 % of the lattice's, i.e. the water is
  // neither compressed nor expanded by more than 3 % in area.
  CHECK(worst_density < 0.03);

  std::string table;
  for (std::size_t k = 0; k < kMmT.size(); ++k) {
    if (kMmT[k] > 3.0) break;
    const double ts = first_reach(T, Z, kMmZ[k]);
    REQUIRE(ts > 0);
    const double err = (ts - kMmT[k]) / kMmT[k];
    char buf[96];
    std::snprintf(buf, sizeof buf, "Z/a %.2f: T %.2f exp, %.2f sim (%+.0f%%)\n", kMmZ[k], kMmT[k],
                  ts, 100 * err);
    table += buf;
    INFO("Z/a = " << kMmZ[k] << ": T_exp " << kMmT[k] << ", T_sim " << ts);
    // The simulated surge leads the experiment's early on, as published simulations' do
    // (docs/tools/mps-gen.md; not from a lifted gate: see the next test): by a constant delay of
    // at most 0.4 in T (45 ms), never lagging by more than 10 %.
    CHECK(kMmT[k] - ts <= 0.4);
    CHECK(err <= 0.10);
    // Once the surge is established (T >= 2.3) the lead is within 15 % in T. (l0 = 0.01 m gives
    // the same errors to 1 %: the numbers are converged in l0.)
    if (kMmT[k] >= 2.3) CHECK(std::abs(err) <= 0.15);
  }
  // The established surge runs at the experiment's speed: dZ/dT from Z/a = 2.33 to 3.67 within
  // 15 % (experiment: 1.34).
  const double exp_speed = (3.67 - 2.33) / (2.98 - 1.98);
  const double sim_speed = (3.67 - 2.33) / (first_reach(T, Z, 3.67) - first_reach(T, Z, 2.33));
  CHECK(sim_speed == doctest::Approx(exp_speed).epsilon(0.15));
  char buf[96];
  std::snprintf(buf, sizeof buf, "surge speed dZ/dT (Z/a 2.33 to 3.67): %.2f exp, %.2f sim\n",
                exp_speed, sim_speed);
  table += buf;
  MESSAGE("dam break, l0 = 0.0125 m, against Martin & Moyce:\n" << table);
}

TEST_CASE("square column (n^2 = 1): the residual column falls as Martin & Moyce measured") {
  // Martin & Moyce's square column, as digitized in JAX-SPH's validation data
  // (tumaer/jax-sph, validation/ref/dambreak_data.py): the time T = t sqrt(g / a) at which the
  // column at the back wall has fallen to h / a = 0.89, 0.78, ... (steps of 0.11), and at which
  // the front reaches Z / a. Column a = 0.25 m square in a 2 m tank (the surge reaches the far
  // wall, Z = 8, after T = 4.4), l0 = 0.0125 m (20 particles across), 1.1 s (T = 6.9).
  const double a = 0.25, l0 = kColumnL0;
  const double t_scale = std::sqrt(9.81 / a);
  std::vector<double> T, Z, H;
  Points2 x;
  const SimulationResult r =
      run_column(a, a, 2.0, 1.1, [&](std::size_t, double t, const MpsSolver& solver) {
        solver.fluid_positions(x);
        T.push_back(t * t_scale);
        Z.push_back((x.col(0).maxCoeff() + 0.5 * l0) / a);
        double h = 0;  // the top of the particles in the first column of the lattice
        for (Eigen::Index i = 0; i < x.rows(); ++i)
          if (x(i, 0) < 1.5 * l0) h = std::max(h, x(i, 1) + 0.5 * l0);
        H.push_back(h / a);
      });
  INFO(r.message);
  REQUIRE(r.ok);
  // The height falls monotonically but for the lattice's steps: the first time at or below.
  const auto first_below = [&](double level) {
    for (std::size_t k = 0; k < T.size(); ++k)
      if (H[k] <= level) return T[k];
    return -1.0;
  };
  const std::vector<double> exp_h{0.89, 0.78, 0.67, 0.56, 0.44, 0.33, 0.22};
  const std::vector<double> exp_t{0.80, 1.29, 1.74, 2.15, 2.57, 3.08, 4.27};
  std::string table;
  for (std::size_t k = 0; k < exp_h.size(); ++k) {
    const double ts = first_below(exp_h[k]);
    const double err = (ts - exp_t[k]) / exp_t[k];
    char buf[96];
    std::snprintf(buf, sizeof buf, "h/a %.2f: T %.2f exp, %.2f sim (%+.0f%%)\n", exp_h[k], exp_t[k],
                  ts, 100 * err);
    table += buf;
    INFO("h/a = " << exp_h[k] << ": T_exp " << exp_t[k] << ", T_sim " << ts);
    // The collapse of the column itself is not slowed at the floor's toe: within 10 % in T (the
    // low end of the band the reference note gives published codes for the front; measured: at
    // most 5 %). A release later than the clock's start would show here at once: a delay of 0.2
    // in T moves the first point by about 30 %.
    CHECK(ts > 0);
    CHECK(std::abs(err) <= 0.10);
  }
  // The front of the same run leads the experiment's, as in the n^2 = 2 series: by 0.14-0.23 in
  // T up to Z/a 2.56, then by more, 0.54 at Z/a 4.56 (docs/tools/mps-gen.md; asserted only as a
  // lead, below 0.6).
  const std::vector<double> exp_fz{1.11, 1.22, 1.44, 1.67, 1.89, 2.11, 2.33, 2.56, 2.78,
                                   3.00, 3.22, 3.44, 3.67, 3.89, 4.11, 4.33, 4.56};
  const std::vector<double> exp_ft{0.43, 0.62, 0.80, 0.97, 1.14, 1.29, 1.45, 1.62, 1.76,
                                   1.93, 2.07, 2.24, 2.40, 2.54, 2.71, 2.87, 3.04};
  for (std::size_t k = 0; k < exp_fz.size(); ++k) {
    const double ts = first_reach(T, Z, exp_fz[k]);
    char buf[96];
    std::snprintf(buf, sizeof buf, "Z/a %.2f: T %.2f exp, %.2f sim (%+.0f%%)\n", exp_fz[k],
                  exp_ft[k], ts, 100 * (ts - exp_ft[k]) / exp_ft[k]);
    table += buf;
    CHECK(ts > 0);
    CHECK(ts <= exp_ft[k]);
    CHECK(exp_ft[k] - ts < 0.6);
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "front speed dZ/dT (Z/a 2.33 to 4.56): %.2f exp, %.2f sim\n",
                (4.56 - 2.33) / (3.04 - 1.45),
                (4.56 - 2.33) / (first_reach(T, Z, 4.56) - first_reach(T, Z, 2.33)));
  table += buf;
  MESSAGE("square column, l0 = 0.0125 m, against Martin & Moyce:\n" << table);
}

TEST_CASE("the instant-release dam break agrees with two independent SPH codes") {
  // A second method for the case Martin & Moyce's experiment cannot settle (the lead above): the
  // dam break of Marrone et al. 2011 (CMAME 200, 1526-1542; column H = 0.6 m high and W = 2H wide
  // at the end of a tank 5.366 H long, released at t = 0) as run by the validation suite of
  // TrixiParticles.jl with two different SPH formulations at H/80: weakly compressible SPH with
  // density diffusion, and entropically damped SPH (EDAC). Below: the times at which their
  // leading particle's centre reaches x = Z W, interpolated linearly in their 2.5 ms samples of
  // max_x_coord_fluid_1 (validation/dam_break_2d/validation_reference_{wcsph,edac}_80.json).
  const std::vector<double> z{1.05, 1.11, 1.22, 1.44, 1.67, 1.89, 2.11, 2.33, 2.56};
  const std::vector<double> t_wcsph{0.0701, 0.1054, 0.1566, 0.2396, 0.3138,
                                    0.3788, 0.4401, 0.4993, 0.5597};
  const std::vector<double> t_edac{0.0707, 0.1063, 0.1576, 0.2406, 0.3149,
                                   0.3799, 0.4414, 0.5008, 0.5612};
  // Here at H/40 (3,200 particles, a few seconds): H/80 moves these times by 0.3-1.1 % from
  // Z = 1.22 on (3-8 % below it).
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  const double H = 0.6, W = 2 * H;
  Scene s;
  s.l0 = H / 40;
  const double length = std::floor(5.366 * H / s.l0) * s.l0;
  s.tank.vertices = {{0, 0}, {length, 0}, {length, 2.0}, {0, 2.0}};
  s.duration = 0.58;  // the front reaches Z = 2.56 at 0.55 s, the far wall (Z = 2.68) at 0.58 s
  s.frame_rate = 400;
  s.column = {0.0, W, H, 0.0, Eigen::Vector2d::Zero()};
  const Tank tank(s.tank, s.l0);
  const InitialWater w = initial_water(tank, s, s.column);
  REQUIRE(w.position.rows() == 80 * 40);
  std::vector<double> ts, zs;
  Points2 x;
  const SimulationResult r =
      run_simulation(tank, s, MpsParams{}, w, [&](std::size_t, double t, const MpsSolver& solver) {
        solver.fluid_positions(x);
        ts.push_back(t);
        zs.push_back(x.col(0).maxCoeff() / W);
      });
  INFO(r.message);
  REQUIRE(r.ok);
  std::string table;
  for (std::size_t k = 0; k < z.size(); ++k) {
    const double t = first_reach(ts, zs, z[k]);
    REQUIRE(t > 0);
    char buf[112];
    std::snprintf(buf, sizeof buf,
                  "Z %.2f: t %.4f s WCSPH, %.4f s EDAC, %.4f s mps-gen (%+.1f %%)\n", z[k],
                  t_wcsph[k], t_edac[k], t, 100 * (t / t_wcsph[k] - 1));
    table += buf;
    INFO(buf);
    // Within 5 % of either: the references' own discretisation error is of that order (the
    // WCSPH times move by 1.5-3.6 % from H/40 to H/80 at Z >= 1.22 and by 9-10 % below), while
    // the two formulations differ from each other by under 1 %. Measured: 0.8-3.9 % ahead.
    CHECK(t == doctest::Approx(t_wcsph[k]).epsilon(0.05));
    CHECK(t == doctest::Approx(t_edac[k]).epsilon(0.05));
  }
  MESSAGE("instant-release dam break (H = 0.6 m, W = 2H) against two SPH codes:\n" << table);
}

TEST_CASE("a gate lifted from the floor releases the dam-break surge sooner, not later") {
  // Whether the experiment's finite gate removal explains why the simulated surge leads Martin &
  // Moyce's (docs/tools/mps-gen.md): the column of the first test is held by a gate 4 l0 thick
  // that rises from the floor at 2 m/s (it clears the column in 0.25 s, T = 2.2; Froude-scaled to
  // the experiment's a = 2.25 in, 0.96 m/s). The gate is an obstacle of the tank whose lower edge
  // steps up by l0 every l0 / v (the solver's boundaries are fixed, so the tank and solver are
  // rebuilt at each step of the gate from the water's positions and velocities).
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  Scene s;
  s.tank.vertices = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  s.l0 = 0.0125;
  const double a = 0.25, t_scale = std::sqrt(2 * 9.81 / a), duration = 0.2;
  s.column = {0.0, a, 2 * a, 0.0, Eigen::Vector2d::Zero()};
  const MpsParams p;
  // Front Z/a against T, gate lifted at `speed` m/s (0: gone at t = 0).
  const auto surge = [&](double speed, std::vector<double>& T, std::vector<double>& Z) {
    Points2 x, v;
    {
      const Tank tank(s.tank, s.l0);
      const InitialWater w = initial_water(tank, s, s.column);
      x = w.position;
      v = w.velocity;
    }
    T.assign(1, 0.0);
    Z.assign(1, 1.0);
    double t = 0;
    for (int k = 0; t < duration - 1e-12; ++k) {
      TankShape shape = s.tank;
      const bool gate = speed > 0 && k * s.l0 < 2 * a;
      if (gate) {
        const double h = k * s.l0, w = a + 4 * s.l0;
        shape.obstacles.push_back({{a, h}, {w, h}, {w, 0.9}, {a, 0.9}});
      }
      const Tank tank(shape, s.l0);
      MpsSolver solver(tank, p, x, v);
      const double until = gate ? std::min(duration, (k + 1) * s.l0 / speed) : duration;
      while (t < until - 1e-12) {
        const double dt = std::min(solver.stable_time_step(), until - t);
        const StepResult r = solver.step(dt);
        INFO(describe_failure(r, p));
        REQUIRE(r.status == StepStatus::Ok);
        t += dt;
        solver.fluid_positions(x);
        T.push_back(t * t_scale);
        Z.push_back((x.col(0).maxCoeff() + 0.5 * s.l0) / a);
      }
      solver.fluid_velocities(v);
    }
  };
  std::vector<double> T0, Z0, T1, Z1;
  surge(0.0, T0, Z0);
  surge(2.0, T1, Z1);
  std::string table;
  for (std::size_t k = 0; k < 4; ++k) {
    const double free = first_reach(T0, Z0, kMmZ[k]), gated = first_reach(T1, Z1, kMmZ[k]);
    REQUIRE(free > 0);
    REQUIRE(gated > 0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "Z/a %.2f: T %.2f exp, %.2f gone at t = 0, %.2f gate lifted\n",
                  kMmZ[k], kMmT[k], free, gated);
    table += buf;
    INFO(buf);
    // Water escapes under the rising gate as a jet driven by the column's full head (Torricelli:
    // sqrt(2 g 2a) = 3.1 m/s against the free toe's 1-2 m/s at these times), so the surge arrives
    // sooner than after an instant removal - by 0.1-0.2 in T (the measured margin), taken as
    // at least 0.05 here - and further from the experiment. A finite lift cannot be what makes
    // the experiment's early surge slower.
    CHECK(gated < free - 0.05);
  }
  MESSAGE("dam break released by a gate lifted at 2 m/s:\n" << table);
}

TEST_CASE("still tank: stays still, hydrostatic pressure within 10 % away from the surface") {
  // 0.4 m wide tank, water 0.2 m deep at l0 = 0.01 m (800 particles), 1 s.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  Scene s;
  s.tank.vertices = {{0, 0}, {0.4, 0}, {0.4, 0.4}, {0, 0.4}};
  s.l0 = 0.01;
  s.duration = 1.0;
  s.frame_rate = 20;
  const double depth = 0.2, rho = 1000, g = 9.81;
  s.water_level = depth;
  s.column = {0.0, 0.01, 0.001, 0.0, Eigen::Vector2d::Zero()};  // empty: only the still layer
  const Tank tank(s.tank, s.l0);
  const InitialWater w = initial_water(tank, s, s.column);
  REQUIRE(w.position.rows() == 40 * 20);
  const MpsParams p;
  // Pressure averaged over the second half second and over bands 3 l0 thick at depths d (5, 10
  // and 15 l0 below the free surface), away from the side walls.
  const std::vector<double> depths{0.05, 0.1, 0.15};
  std::vector<double> sum(depths.size(), 0.0);
  std::vector<int> count(depths.size(), 0);
  double vmax_end = 0, vmax_deep = 0, vrms_end = 0;
  Points2 x, v;
  Eigen::VectorXd pr;
  const SimulationResult r =
      run_simulation(tank, s, p, w, [&](std::size_t, double t, const MpsSolver& solver) {
        solver.fluid_positions(x);
        solver.fluid_velocities(v);
        solver.fluid_pressures(pr);
        if (t >= 0.5) {
          // The free surface: the mean height of the highest particle centre per l0-wide column
          // between x = 0.05 and 0.35 m - MPS imposes p = 0 at the surface particles' centres.
          std::vector<double> top(30, -1.0);
          for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const int c = static_cast<int>(std::floor((x(i, 0) - 0.05) / s.l0));
            if (c >= 0 && c < 30)
              top[static_cast<std::size_t>(c)] =
                  std::max(top[static_cast<std::size_t>(c)], x(i, 1));
          }
          double surface = 0;
          for (double h : top) surface += h / 30;
          for (std::size_t b = 0; b < depths.size(); ++b) {
            for (Eigen::Index i = 0; i < x.rows(); ++i) {
              if (std::abs((surface - x(i, 1)) - depths[b]) < 1.5 * s.l0 && x(i, 0) > 0.05 &&
                  x(i, 0) < 0.35) {
                sum[b] += pr[i];
                ++count[b];
              }
            }
          }
        }
        double v2 = 0;
        vmax_end = vmax_deep = 0;
        const double top = x.col(1).maxCoeff();
        for (Eigen::Index i = 0; i < v.rows(); ++i) {
          vmax_end = std::max(vmax_end, v.row(i).norm());
          if (x(i, 1) < top - 3 * s.l0) vmax_deep = std::max(vmax_deep, v.row(i).norm());
          v2 += v.row(i).squaredNorm();
        }
        vrms_end = std::sqrt(v2 / static_cast<double>(v.rows()));
      });
  INFO(r.message);
  REQUIRE(r.ok);
  const double c = std::sqrt(g * depth);  // shallow-water wave speed, 1.4 m/s
  MESSAGE("still tank after 1 s, speeds against sqrt(g d) = "
          << c << " m/s: max " << vmax_end / c << ", max below the top 3 layers " << vmax_deep / c
          << ", rms " << vrms_end / c);
  // The water as a whole is at rest: rms speed under 4 % of sqrt(g d), and no particle below the
  // top three layers faster than 10 %. The free-surface particles (p = 0 imposed on them) jitter:
  // one falling back from a spacing above the surface has sqrt(2 g l0) = 0.44 m/s = 0.32 sqrt(g d);
  // they stay under a quarter of sqrt(g d).
  CHECK(vrms_end < 0.04 * c);
  CHECK(vmax_deep < 0.10 * c);
  CHECK(vmax_end < 0.25 * c);
  for (std::size_t b = 0; b < depths.size(); ++b) {
    const double mean = sum[b] / count[b];
    MESSAGE("depth " << depths[b] << " m: mean pressure " << mean
                     << " Pa, rho g d = " << rho * g * depths[b] << " Pa");
    CHECK(mean == doctest::Approx(rho * g * depths[b]).epsilon(0.10));
  }
}
