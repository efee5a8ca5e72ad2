// The MPS solver's pieces: the pressure solve against a direct solver, bitwise determinism across
// thread counts, and the failure statuses (NaN, Courant, PPE, leaks) naming the particle.

#include <doctest/doctest.h>

#include <Eigen/SparseCholesky>
#include <cmath>
#include <limits>

#include "fluid/database.hpp"
#include "fluid/mps_solver.hpp"
#include "support/threads.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

struct Setup {
  Scene scene;
  Tank tank;
  InitialWater water;
  explicit Setup(double l0 = 0.02, double height = 0.4)
      : scene(make_scene(l0, height)),
        tank(scene.tank, l0),
        water(initial_water(tank, scene, scene.column)) {}
  static Scene make_scene(double l0, double height) {
    Scene s;
    s.tank.vertices = {{0, 0}, {0.8, 0}, {0.8, 1.0}, {0, 1.0}};
    s.tank.obstacles = {{{0.4, 0.0}, {0.8, 0.0}, {0.8, 0.15}}};
    s.l0 = l0;
    s.water_level = 0.06;
    s.column = {0.0, 0.2, height, 0.0, Eigen::Vector2d::Zero()};
    return s;
  }
};

}  // namespace

TEST_CASE("PPE: the CG solution matches a direct Cholesky solve of the assembled system") {
  Setup s;
  MpsParams p;
  p.ppe_tolerance = 1e-10;
  MpsSolver solver(s.tank, p, s.water.position, s.water.velocity);
  for (int k = 0; k < 60; ++k) REQUIRE(solver.step(1e-3).status == StepStatus::Ok);
  const auto& A = solver.ppe_matrix();
  const Eigen::VectorXd& b = solver.ppe_rhs();
  const Eigen::VectorXd& x = solver.ppe_solution();
  REQUIRE(A.rows() > 100);
  // Symmetric (exactly: pair weights are computed once per pair distance) with a positive diagonal.
  const Eigen::SparseMatrix<double> At = A.transpose();
  CHECK((Eigen::SparseMatrix<double>(A) - At).norm() == 0.0);
  // Residual as CG reports it, recomputed independently.
  CHECK((b - A * x).norm() <= 1e-9 * b.norm());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(A);
  REQUIRE(direct.info() == Eigen::Success);
  const Eigen::VectorXd xd = direct.solve(b);
  // 1e-6 relative: CG stopped at 1e-10 of |b|, the condition number is ~1e4.
  CHECK((x - xd).norm() <= 1e-6 * xd.norm());
}

TEST_CASE("PPE at the default tolerance: the pressure is within 0.5 % of a direct solve") {
  // The default stops CG at a residual of 1e-3 |b|. A small residual can hide a larger error in
  // the smooth modes (the relative error is bounded only by the condition number, ~1e4, times the
  // relative residual); on these matrices the pressure stays within about 1e-3 of the converged one
  // (measured: 7e-4 in the 2-norm, 1.3e-3 at the largest pressure). The bound is 0.5 %, a fourth of
  // the 2.2 % by which the still tank's deepest band pressure differs from rho g d.
  Setup s(0.01);
  const MpsParams p;
  REQUIRE(p.ppe_tolerance == 1e-3);
  MpsSolver solver(s.tank, p, s.water.position, s.water.velocity);
  double worst_norm = 0, worst_max = 0;
  for (int k = 1; k <= 200; ++k) {
    REQUIRE(solver.step(1e-3).status == StepStatus::Ok);
    if (k % 25 != 0) continue;
    const auto& A = solver.ppe_matrix();
    const Eigen::VectorXd& b = solver.ppe_rhs();
    const Eigen::VectorXd& x = solver.ppe_solution();
    REQUIRE(A.rows() > 100);
    CHECK((b - A * x).norm() <= 1e-3 * b.norm());
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(A);
    REQUIRE(direct.info() == Eigen::Success);
    const Eigen::VectorXd xd = direct.solve(b);
    worst_norm = std::max(worst_norm, (x - xd).norm() / xd.norm());
    worst_max = std::max(worst_max, (x - xd).cwiseAbs().maxCoeff() / xd.cwiseAbs().maxCoeff());
  }
  MESSAGE("pressure against a direct solve at the default tolerance: 2-norm "
          << worst_norm << ", largest " << worst_max);
  CHECK(worst_norm < 5e-3);
  CHECK(worst_max < 5e-3);
}

TEST_CASE("the same run gives the same bits on 1 and 4 threads") {
  Setup s(0.015);
  MpsParams p;
  auto run = [&](int threads) {
    return test::with_threads(threads, [&] {
      MpsSolver solver(s.tank, p, s.water.position, s.water.velocity);
      for (int k = 0; k < 200; ++k)
        REQUIRE(solver.step(solver.stable_time_step()).status == StepStatus::Ok);
      Points2 x;
      Eigen::VectorXd pr;
      solver.fluid_positions(x);
      solver.fluid_pressures(pr);
      return std::make_pair(x, pr);
    });
  };
  const auto one = run(1), four = run(4);
  CHECK(one.first.rows() > 400);
  CHECK((one.first.array() == four.first.array()).all());
  CHECK((one.second.array() == four.second.array()).all());
  CHECK(one.second.maxCoeff() > 0);  // the comparison covers a real pressure field
}

TEST_CASE("the Courant time step follows the velocities after each step") {
  // The step's final pass keeps the largest speed for stable_time_step(); before the first step
  // a pass of its own finds it. Both must equal courant l0 / max |u| from the velocities.
  Setup s;
  Points2 v = s.water.velocity;
  v.col(0).setConstant(0.3);
  v(5, 1) = -1.7;  // the fastest: 1.726 m/s, Courant time step 0.2 0.02 / 1.726 = 2.3 ms
  MpsParams p;
  p.dt = 1.0;  // the Courant limit decides
  MpsSolver solver(s.tank, p, s.water.position, v);
  const auto expected = [&] {
    Points2 u;
    solver.fluid_velocities(u);
    return p.courant * s.tank.l0() / u.rowwise().norm().maxCoeff();
  };
  CHECK(solver.stable_time_step() == doctest::Approx(p.courant * 0.02 / std::hypot(0.3, 1.7)));
  for (int k = 0; k < 20; ++k) {
    const double dt = solver.stable_time_step();
    // The same speed, its square root taken once: equal up to the last bits.
    CHECK(dt == doctest::Approx(expected()).epsilon(1e-14));
    REQUIRE(solver.step(dt).status == StepStatus::Ok);
  }
  CHECK(solver.stable_time_step() == doctest::Approx(expected()).epsilon(1e-14));
}

TEST_CASE("failures are statuses naming the particle") {
  Setup s;
  SUBCASE("NaN") {
    Points2 v = s.water.velocity;
    v(17, 1) = std::numeric_limits<double>::quiet_NaN();
    MpsSolver solver(s.tank, MpsParams{}, s.water.position, v);
    const StepResult r = solver.step(1e-3);
    CHECK(r.status == StepStatus::NonFinite);
    // NaN spreads to the neighbours through the PPE; the lowest index among them is reported.
    CHECK(r.particle >= 0);
    CHECK(r.particle <= 17);
  }
  SUBCASE("Courant number above courant_max") {
    MpsParams p;
    p.time_step = TimeStepMode::Fixed;
    Points2 v = s.water.velocity;
    v(5, 0) = 12.0;  // 12 m/s * 2e-3 s = 1.2 l0 per step
    MpsSolver solver(s.tank, p, s.water.position, v);
    const StepResult r = solver.step(2e-3);
    CHECK(r.status == StepStatus::CourantExceeded);
    CHECK(r.courant > p.courant_max);
    // The fastest particle is named: particle 5 or the neighbour it collided with.
    REQUIRE(r.particle >= 0);
    CHECK(std::abs(r.particle - 5) <= 2);
    CHECK(r.speed * 2e-3 / s.scene.l0 == doctest::Approx(r.courant));
    CHECK(describe_failure(r, p).find("particle " + std::to_string(r.particle) + " at") !=
          std::string::npos);
  }
  SUBCASE("PPE not converged") {
    MpsParams p;
    p.ppe_max_iterations = 2;
    p.ppe_tolerance = 1e-12;
    MpsSolver solver(s.tank, p, s.water.position, s.water.velocity);
    StepResult r;
    for (int k = 0; k < 5 && r.status == StepStatus::Ok; ++k) r = solver.step(1e-3);
    CHECK(r.status == StepStatus::PpeNotConverged);
    CHECK(r.iterations == 2);
    CHECK(describe_failure(r, p).find("after 2 iterations") != std::string::npos);
  }
  SUBCASE("a particle shot through the bottom leaves the tank") {
    MpsParams p;
    p.courant_max = 100;  // let the leak, not the Courant check, stop it
    Points2 v = s.water.velocity;
    v(3, 1) = -40.0;  // particle 3 sits in the bottom row: 40 m/s * 1e-3 s = 2 l0 into the wall
    MpsSolver solver(s.tank, p, s.water.position, v);
    const StepResult r = solver.step(1e-3);
    CHECK(r.status == StepStatus::LeftTank);
    CHECK(r.particle == 3);
    CHECK(r.position.y() < -s.scene.l0);
  }
}

TEST_CASE("a handful of particles: no inner particle, an empty PPE, they fall freely") {
  TankShape shape;
  shape.vertices = {{0, 0}, {0.5, 0}, {0.5, 0.5}, {0, 0.5}};
  const Tank tank(shape, 0.02);
  Points2 x(3, 2), v = Points2::Zero(3, 2);
  x << 0.25, 0.3, 0.27, 0.3, 0.26, 0.32;
  MpsSolver solver(tank, MpsParams{}, x, v);
  for (int k = 0; k < 10; ++k) REQUIRE(solver.step(1e-3).status == StepStatus::Ok);
  CHECK(solver.ppe_matrix().rows() == 0);
  Points2 u;
  solver.fluid_velocities(u);
  // Free fall for 10 ms: v = g t, no pressure acting.
  CHECK(u(0, 1) == doctest::Approx(-9.81 * 0.01).epsilon(1e-9));
}
