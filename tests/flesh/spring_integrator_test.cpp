// The closed-form spring integrator against identities, the matrix exponential, substitution
// into the ODE, step splitting and finite differences (Jin et al. 2022 sections 4-6).

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include "flesh/spring_integrator.hpp"

using namespace datadyn;
using namespace datadyn::flesh;

namespace {

/// (ks, kd) pairs covering the regimes: underdamped, overdamped, critical, near-critical on both
/// sides, both branch switches |z| = 1 at dt = 1/30, and the extremes of the fit's default bounds.
std::vector<std::pair<double, double>> regimes() {
  const double dt = 1.0 / 30.0;
  const double kd_switch = 60.0;  // |z| = 1 with ks chosen below
  return {{100.0, 2.0},
          {400.0, 300.0},
          {25.0, 10.0},
          {25.0 + 2.5e-10, 10.0},
          {25.0 - 2.5e-10, 10.0},
          {900.0, 60.0},
          {900.0 - 1.0 / (dt * dt), kd_switch},  // z = +1
          {900.0 + 1.0 / (dt * dt), kd_switch},  // z = -1
          {2.5e7, 1.0e4},                        // critical with |m| >> 2
          {1e-6, 1e4},
          {1e4, 1e-12},
          {0.0, 0.0},
          {3.0, 0.0}};
}

Eigen::Matrix2d phi_of(const IntervalMap& M) {
  Eigen::Matrix2d P;
  P << M.phi11, M.phi12, M.phi21, M.phi22;
  return P;
}

/// The augmented system d/dτ [y, y', p, r] = [y', -ks y - kd y' + p, r, 0], whose exponential
/// holds Φ, and in its first row [I1, J1] (columns of p, r) and in the second [Φ12, I1].
Eigen::Matrix4d augmented_expm(double ks, double kd, double tau) {
  Eigen::Matrix4d A = Eigen::Matrix4d::Zero();
  A(0, 1) = 1.0;
  A(1, 0) = -ks;
  A(1, 1) = -kd;
  A(1, 2) = 1.0;
  A(2, 3) = 1.0;
  return Eigen::Matrix4d(A * tau).exp();
}

double rel(double a, double b, double scale) {
  return std::abs(a - b) / scale;
}

}  // namespace

TEST_CASE("the state map is expm([[0, 1], [-ks, -kd]] tau) with det = exp(-kd tau)") {
  for (double tau : {1.0 / 30.0, 0.01, 0.5}) {
    for (auto [ks, kd] : regimes()) {
      INFO("ks = " << ks << ", kd = " << kd << ", tau = " << tau);
      const IntervalMap M = interval_map(ks, kd, tau);
      const Eigen::Matrix4d X = augmented_expm(ks, kd, tau);
      // Entries scale as 1, tau, 1/tau; compare each in its own scale. Eigen's Padé
      // exponential of a stiff matrix (|kd tau| up to 5000) is good to ~1e-10 of the norm.
      const double tol = 1e-10;
      CHECK(rel(M.phi11, X(0, 0), 1.0) < tol);
      CHECK(rel(M.phi12, X(0, 1), tau) < tol);
      CHECK(rel(M.phi21, X(1, 0), std::max(1.0, ks * tau)) < tol);
      CHECK(rel(M.phi22, X(1, 1), 1.0) < tol);
      CHECK(rel(M.i1, X(0, 2), tau * tau) < tol);
      CHECK(rel(M.j1, X(0, 3), tau * tau * tau) < tol);
      CHECK(rel(M.i1, X(1, 3), tau * tau) < tol);
      const double det = phi_of(M).determinant();
      CHECK(std::abs(det - std::exp(-kd * tau)) < 1e-12 * std::max(1.0, ks * tau * tau));
      CHECK(std::isfinite(M.phi11 + M.phi12 + M.phi21 + M.phi22 + M.i1 + M.j1));
    }
  }
}

TEST_CASE("the closed form satisfies x'' = ks (x̂ - x) + kd (x̂' - x') in every regime") {
  // One interval with a cubic target; x(τ), x'(τ) from the map at τ. Substitution by 4th-order
  // central differences in τ (step h = 1e-3 dt: truncation ~h^4 |x^(5)|, rounding ~1e-16/h).
  const double dt = 1.0 / 30.0;
  const double q = 0.02, a = -0.05, b = 0.03, c = 0.1;  // x̂(s) in metres, s = τ/dt
  const double y0 = 0.004, yv0 = -0.2;                  // initial deviation (m, m/s)
  for (auto [ks, kd] : regimes()) {
    if (ks > 1e6) continue;  // τ-differences cannot resolve e^{-5000 τ}; covered by expm above
    INFO("ks = " << ks << ", kd = " << kd);
    const double alpha = 2 * a / (dt * dt), beta = 6 * q / (dt * dt * dt);
    const auto state = [&](double tau, double& x, double& v) {
      const IntervalMap M = interval_map(ks, kd, tau);
      const double s = tau / dt;
      const double xh = ((q * s + a) * s + b) * s + c, vh = ((3 * q * s + 2 * a) * s + b) / dt;
      x = xh + M.phi11 * y0 + M.phi12 * yv0 - alpha * M.i1 - beta * M.j1;
      v = vh + M.phi21 * y0 + M.phi22 * yv0 - alpha * M.phi12 - beta * M.i1;
    };
    for (double s : {0.3, 0.7}) {
      const double tau = s * dt, h = 1e-3 * dt;
      double x[5], v[5];
      for (int k = 0; k < 5; ++k) state(tau + (k - 2) * h, x[k], v[k]);
      const double dx = (x[0] - 8 * x[1] + 8 * x[3] - x[4]) / (12 * h);
      const double dv = (v[0] - 8 * v[1] + 8 * v[3] - v[4]) / (12 * h);
      const double xh = ((q * s + a) * s + b) * s + c, vh = ((3 * q * s + 2 * a) * s + b) / dt;
      const double rhs = ks * (xh - x[2]) + kd * (vh - v[2]);
      const double scale = std::abs(rhs) + std::abs(dv) + 1.0;
      CHECK(std::abs(dx - v[2]) < 1e-8 * (std::abs(v[2]) + 1.0));
      CHECK(std::abs(dv - rhs) < 1e-6 * scale);
    }
  }
}

TEST_CASE("the paper's particular solution (eq. 8) has zero residual and matches the map") {
  const double dt = 1.0 / 24.0, q = 0.01, a = 0.02, b = -0.03, c = 0.5;
  for (auto [ks, kd] : regimes()) {
    if (ks < 1.0 || ks > 1e6) continue;  // eq. 8 divides by ks
    INFO("ks = " << ks << ", kd = " << kd);
    for (double s : {0.0, 0.4, 1.0}) {
      const double xh = ((q * s + a) * s + b) * s + c, vh = ((3 * q * s + 2 * a) * s + b) / dt;
      const double xp =
          xh - (6 * q * s + 2 * a) / (ks * dt * dt) + 6 * kd * q / (ks * ks * dt * dt * dt);
      const double vp = vh - 6 * q / (ks * dt * dt * dt);
      const double ap = (6 * q * s + 2 * a) / (dt * dt);  // x_p'' = x̂''
      const double residual = ap - ks * (xh - xp) - kd * (vh - vp);
      CHECK(std::abs(residual) <= 1e-12 * (std::abs(ap) + ks * std::abs(xp) + 1.0));
    }
    // The map started on the particular solution stays on it: y_p = x_p - x̂ obeys the same ODE.
    const double tau = dt;
    const IntervalMap M = interval_map(ks, kd, tau);
    const double alpha = 2 * a / (dt * dt), beta = 6 * q / (dt * dt * dt);
    const double yp0 = -(2 * a) / (ks * dt * dt) + 6 * kd * q / (ks * ks * dt * dt * dt);
    const double ypv0 = -6 * q / (ks * dt * dt * dt);
    const double yp1 = -(6 * q + 2 * a) / (ks * dt * dt) + 6 * kd * q / (ks * ks * dt * dt * dt);
    const double y1 = M.phi11 * yp0 + M.phi12 * ypv0 - alpha * M.i1 - beta * M.j1;
    CHECK(std::abs(y1 - yp1) <= 1e-10 * (std::abs(yp0) + std::abs(yp1) + 1e-6));
  }
}

TEST_CASE("one step equals two half steps") {
  const double dt = 1.0 / 30.0;
  for (auto [ks, kd] : regimes()) {
    INFO("ks = " << ks << ", kd = " << kd);
    const double alpha = 3.0, beta = -40.0;  // x̂'' at the start (m/s^2) and x̂''' (m/s^3)
    const double y0 = 0.01, v0 = 0.3;
    const IntervalMap F = interval_map(ks, kd, dt), H = interval_map(ks, kd, dt / 2);
    const double y1 = F.phi11 * y0 + F.phi12 * v0 - alpha * F.i1 - beta * F.j1;
    const double v1 = F.phi21 * y0 + F.phi22 * v0 - alpha * F.phi12 - beta * F.i1;
    double y = H.phi11 * y0 + H.phi12 * v0 - alpha * H.i1 - beta * H.j1;
    double v = H.phi21 * y0 + H.phi22 * v0 - alpha * H.phi12 - beta * H.i1;
    const double alpha_half = alpha + beta * dt / 2;  // the cubic re-parameterised on [dt/2, dt]
    const double y2 = H.phi11 * y + H.phi12 * v - alpha_half * H.i1 - beta * H.j1;
    const double v2 = H.phi21 * y + H.phi22 * v - alpha_half * H.phi12 - beta * H.i1;
    // Rounding of O(10) operations on values of size |y| + dt |v| + dt^2 |alpha| ...
    CHECK(std::abs(y2 - y1) < 1e-13 * (std::abs(y1) + 0.02));
    CHECK(std::abs(v2 - v1) < 1e-11 * (std::abs(v1) + 0.5 + ks * 0.01 * dt));
  }
}

TEST_CASE("values and gradients are continuous across critical damping and the branch switches") {
  const double dt = 1.0 / 30.0;
  // Critical lines kd^2 = 4 ks at small, mid and large kd; and |z| = 1.
  struct Pair {
    double ks_a, ks_b, kd;
  };
  std::vector<Pair> pairs;
  for (double kd : {0.5, 10.0, 200.0, 1e4}) {
    const double ks = kd * kd / 4;
    pairs.push_back({ks - 0.25e-9, ks + 0.25e-9, kd});  // kd^2 - 4 ks = ±1e-9
  }
  for (double sgn : {1.0, -1.0}) {  // z = ±1 exactly at kd = 60
    const double ks = 900.0 - sgn / (dt * dt);
    pairs.push_back({ks * (1 - 1e-13), ks * (1 + 1e-13), 60.0});
  }
  for (const auto& p : pairs) {
    INFO("ks = " << p.ks_a << " / " << p.ks_b << ", kd = " << p.kd);
    const auto A = interval_map_gradient(p.ks_a, p.kd, dt);
    const auto B = interval_map_gradient(p.ks_b, p.kd, dt);
    const auto close = [&](const IntervalMap& a, const IntervalMap& b, double scale) {
      const double d = std::abs(a.phi11 - b.phi11) + std::abs(a.phi12 - b.phi12) / dt +
                       std::abs(a.phi21 - b.phi21) * dt + std::abs(a.phi22 - b.phi22) +
                       std::abs(a.i1 - b.i1) / (dt * dt) + std::abs(a.j1 - b.j1) / (dt * dt * dt);
      // The parameters differ by ~1e-10 relative; a jump in a formula would show as >> 1e-8.
      CHECK(d < 1e-8 * scale);
    };
    close(A.value, B.value, 1.0);
    close(A.d_ks, B.d_ks, dt * dt * std::max(1.0, p.ks_a * dt * dt));
    close(A.d_kd, B.d_kd, dt * std::max(1.0, p.kd * dt));
  }
}

TEST_CASE("map derivatives equal central finite differences in every regime") {
  for (double tau : {1.0 / 30.0, 0.2}) {
    for (auto [ks, kd] : regimes()) {
      if (ks == 0.0 || kd < 1e-6) continue;  // FD steps must stay inside ks, kd >= 0
      INFO("ks = " << ks << ", kd = " << kd << ", tau = " << tau);
      const auto G = interval_map_gradient(ks, kd, tau);
      const auto fd = [&](double dks, double dkd, double IntervalMap::*field) {
        const double p = interval_map(ks + dks, kd + dkd, tau).*field;
        const double m = interval_map(ks - dks, kd - dkd, tau).*field;
        return (p - m) / (2 * std::max(dks, dkd));
      };
      const double hs = 1e-5 * ks, hd = 1e-5 * kd;
      for (auto field : {&IntervalMap::phi11, &IntervalMap::phi12, &IntervalMap::phi21,
                         &IntervalMap::phi22, &IntervalMap::i1, &IntervalMap::j1}) {
        // Scale each derivative by the size of the entry over the parameter; FD with relative
        // step 1e-5 is accurate to ~1e-9 of that.
        const double entry = std::abs(G.value.*field) + 1e-30;
        CHECK(std::abs(G.d_ks.*field - fd(hs, 0, field)) <=
              1e-6 * (entry / ks + std::abs(G.d_ks.*field)));
        CHECK(std::abs(G.d_kd.*field - fd(0, hd, field)) <=
              1e-6 * (entry / kd + std::abs(G.d_kd.*field)));
      }
    }
  }
}

TEST_CASE("extreme parameters stay finite and right") {
  const double dt = 1.0 / 30.0;
  // ks = 1e-6, kd = 1e4: velocity relaxes to the target's in ~1e-4 s, the position creeps.
  {
    const IntervalMap M = interval_map(1e-6, 1e4, dt);
    CHECK(std::abs(M.phi22) < 1e-13);                       // -λs/λf + e^{-kd dt}, λs ≈ ks/kd
    CHECK(M.phi12 == doctest::Approx(1e-4).epsilon(1e-6));  // (1 - e^{-kd dt})/kd
    CHECK(M.phi11 == doctest::Approx(1.0).epsilon(1e-9));
    // I1 = ∫Φ12 ≈ (dt - 1/kd)/kd
    CHECK(M.i1 == doctest::Approx((dt - 1e-4) / 1e4).epsilon(1e-6));
  }
  // ks = 1e4, kd ≈ 0: an undamped oscillator at ω = 100 rad/s.
  {
    const IntervalMap M = interval_map(1e4, 1e-12, dt);
    CHECK(M.phi11 == doctest::Approx(std::cos(100 * dt)).epsilon(1e-12));
    CHECK(M.phi12 == doctest::Approx(std::sin(100 * dt) / 100).epsilon(1e-12));
    CHECK(M.i1 == doctest::Approx((1 - std::cos(100 * dt)) / 1e4).epsilon(1e-10));
  }
  // A long sequence with each extreme: positions stay finite and bounded.
  std::vector<Points3> targets;
  for (int f = 0; f < 200; ++f) {
    Points3 p(2, 3);
    p << std::sin(0.3 * f), 0.0, 0.0, 0.0, std::cos(0.2 * f), 1.0;
    targets.push_back(p);
  }
  Springs s{Eigen::Vector2d(1e-6, 1e4), Eigen::Vector2d(1e4, 1e-12)};
  const auto r = spring_apply(targets, dt, s);
  for (const auto& p : r.positions) {
    CHECK(p.allFinite());
    CHECK(p.cwiseAbs().maxCoeff() < 10.0);
  }
}

TEST_CASE("the loss gradient equals finite differences and apply agrees with the loss") {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 0.01);
  const int F = 40;
  VertexTrack t;
  t.dt = 1.0 / 30.0;
  t.target.resize(F, 3);
  t.truth.resize(F, 3);
  std::vector<Points3> targets;
  for (int n = 0; n < F; ++n) {
    t.target.row(n) << std::sin(0.4 * n), 0.2 * std::cos(0.25 * n), 0.01 * n;
    t.truth.row(n) = t.target.row(n) + Eigen::RowVector3d(noise(rng), noise(rng), noise(rng));
    targets.push_back(t.target.row(n));
  }
  for (auto [ks, kd] : regimes()) {
    if (ks < 1e-3 || kd < 1e-3 || ks > 1e6) continue;
    INFO("ks = " << ks << ", kd = " << kd);
    Eigen::Vector2d g;
    Eigen::Matrix2d H;
    const double L = vertex_loss(t, {}, ks, kd, &g, &H);
    const double hs = 1e-6 * ks, hd = 1e-6 * kd;
    const double gs =
        (vertex_loss(t, {}, ks + hs, kd) - vertex_loss(t, {}, ks - hs, kd)) / (2 * hs);
    const double gd =
        (vertex_loss(t, {}, ks, kd + hd) - vertex_loss(t, {}, ks, kd - hd)) / (2 * hd);
    CHECK(g[0] == doctest::Approx(gs).epsilon(1e-5).scale(L / ks));
    CHECK(g[1] == doctest::Approx(gd).epsilon(1e-5).scale(L / kd));
    // Two implementations: the vectorised apply and the per-vertex loss.
    Springs s{Eigen::VectorXd::Constant(1, ks), Eigen::VectorXd::Constant(1, kd)};
    const auto r = spring_apply(targets, t.dt, s);
    double L2 = 0.0;
    for (int n = 1; n < F; ++n) L2 += (r.positions[n].row(0) - t.truth.row(n)).squaredNorm();
    CHECK(L2 == doctest::Approx(L).epsilon(1e-12));
  }
}

TEST_CASE("sub-frame outputs are the exact states between frames") {
  std::vector<Points3> targets;
  for (int f = 0; f < 12; ++f) {
    Points3 p(1, 3);
    p << std::sin(0.5 * f), f * 0.1, 0.0;
    targets.push_back(p);
  }
  const double dt = 1.0 / 24.0;
  Springs s{Eigen::VectorXd::Constant(1, 300.0), Eigen::VectorXd::Constant(1, 5.0)};
  const auto one = spring_apply(targets, dt, s);
  SpringApplyOptions opt;
  opt.subframes = 4;
  const auto four = spring_apply(targets, dt, s, opt);
  REQUIRE(four.positions.size() == 45);
  CHECK(four.times[5] == doctest::Approx(5 * dt / 4));
  for (std::size_t f = 0; f < targets.size(); ++f)
    CHECK((four.positions[4 * f] - one.positions[f]).norm() < 1e-14);
  // Sub-frame 1/4 of interval 0 from rest on the target: the map over dt/4 with the cubic.
  const IntervalMap M = interval_map(300.0, 5.0, dt / 4);
  const double p0 = targets[0](0, 0), p1 = targets[1](0, 0), p2 = targets[2](0, 0);
  const double m0 = p1 - p0, m1 = 0.5 * (p2 - p0);
  const double q = 2 * p0 + m0 - 2 * p1 + m1, a = -3 * p0 - 2 * m0 + 3 * p1 - m1;
  const double s4 = 0.25, xh = ((q * s4 + a) * s4 + m0) * s4 + p0;
  const double x = xh - 2 * a / (dt * dt) * M.i1 - 6 * q / (dt * dt * dt) * M.j1;
  CHECK(four.positions[1](0, 0) == doctest::Approx(x).epsilon(1e-14));
}

TEST_CASE("hermite coefficients interpolate with central and one-sided differences") {
  std::vector<Points3> x;
  for (int f = 0; f < 4; ++f) x.push_back(Points3::Constant(1, 3, f * f * 0.5));
  const auto h0 = hermite_coefficients(x, 0, 0), h1 = hermite_coefficients(x, 1, 0),
             h2 = hermite_coefficients(x, 2, 0);
  CHECK((h0.q + h0.a + h0.b + h0.c - Eigen::Vector3d::Constant(0.5)).norm() < 1e-15);
  CHECK(h0.b[0] == doctest::Approx(0.5));  // one-sided m0
  CHECK(h1.b[0] == doctest::Approx(1.0));  // (x2 - x0)/2 = (2 - 0)/2
  // C1: the end slope of interval 0 equals the start slope of interval 1.
  CHECK((3 * h0.q + 2 * h0.a + h0.b - h1.b).norm() < 1e-15);
  CHECK((3 * h2.q + 2 * h2.a + h2.b)[0] == doctest::Approx(4.5 - 2.0));  // one-sided m1
}

TEST_CASE("a reset restarts the springs: each side of a cut is a clip of its own") {
  // Three vertices on a smooth path with a 5 m teleport at frame 8. Resets at 8, at 14 and 15
  // (a clip of one frame) and at the last frame.
  const std::size_t F = 20;
  std::vector<Points3> targets;
  for (std::size_t f = 0; f < F; ++f) {
    Points3 p(3, 3);
    for (int i = 0; i < 3; ++i)
      p.row(i) << std::sin(0.3 * double(f) + i), 0.05 * double(f * f) / 20.0, 0.1 * i;
    if (f >= 8) p.col(0).array() += 5.0;
    targets.push_back(p);
  }
  const double dt = 1.0 / 24.0;
  const Springs s{Eigen::Vector3d(40.0, 900.0, 1e-3), Eigen::Vector3d(2.0, 30.0, 0.0)};
  SpringApplyOptions opt;
  opt.subframes = 3;
  opt.resets = {8, 14, 15, 19};
  const auto r = spring_apply(targets, dt, s, opt);
  REQUIRE(r.positions.size() == (F - 1) * 3 + 1);
  SpringApplyOptions three;  // no resets
  three.subframes = 3;
  const auto clip = [&](std::size_t b, std::size_t e) {
    return spring_apply(std::vector<Points3>(targets.begin() + long(b), targets.begin() + long(e)),
                        dt, s, three);
  };
  // Equal to the bit: a clip runs the same operations in the same order as a run of its own.
  for (const auto& [b, e] : {std::pair<std::size_t, std::size_t>{0, 8}, {8, 14}, {15, 19}}) {
    INFO("clip " << b << " to " << e);
    const auto c = clip(b, e);
    for (std::size_t k = 0; k < c.positions.size(); ++k)
      CHECK(r.positions[3 * b + k] == c.positions[k]);
  }
  // Sub-frames before a cut hold the state at its start; a cut frame is on its target.
  for (const std::size_t f : {std::size_t{7}, std::size_t{13}, std::size_t{14}, std::size_t{18}})
    for (std::size_t j = 1; j < 3; ++j) CHECK(r.positions[3 * f + j] == r.positions[3 * f]);
  for (const std::size_t f : opt.resets) CHECK(r.positions[3 * f] == targets[f]);
  // Without the reset the teleport throws the soft spring far off its target.
  const auto free_run = spring_apply(targets, dt, s, three);
  CHECK((free_run.positions[3 * 9] - targets[9]).rowwise().norm().maxCoeff() > 0.5);
  CHECK((r.positions[3 * 9] - targets[9]).rowwise().norm().maxCoeff() < 0.05);
}

TEST_CASE("jump frames are where some point moves farther than the distance in one frame") {
  std::vector<Points3> targets;
  for (int f = 0; f < 10; ++f) {
    targets.push_back(Points3::Zero(4, 3));
    targets.back().col(0).setConstant(0.01 * f);  // 1 cm per frame along x
  }
  for (int f = 5; f < 10; ++f) targets[std::size_t(f)](2, 1) += 0.3;  // one point, at frame 5
  // That point moves sqrt(0.01^2 + 0.3^2) = 0.300167 m from frame 4 to 5.
  CHECK(jump_frames(targets, 0.3002).empty());
  CHECK(jump_frames(targets, 0.3001) == std::vector<std::size_t>{5});
  CHECK(jump_frames(targets, 0.0099).size() == 9);
  CHECK(jump_frames(targets, 0.011) == std::vector<std::size_t>{5});
}

TEST_CASE("amount scales the deviation from the target, at frames and sub-frames alike") {
  std::vector<Points3> targets;
  for (int f = 0; f < 15; ++f) {
    Points3 p(2, 3);
    p << std::sin(0.4 * f), 0.1 * f, 0.0, std::cos(0.3 * f), 0.0, 0.05 * f;
    targets.push_back(p);
  }
  const double dt = 1.0 / 30.0;
  const Springs s{Eigen::Vector2d(60.0, 400.0), Eigen::Vector2d(1.5, 8.0)};
  SpringApplyOptions opt;
  opt.subframes = 2;
  opt.resets = {9};
  const auto one = spring_apply(targets, dt, s, opt);
  opt.amount = 0.0;
  const auto none = spring_apply(targets, dt, s, opt);  // the target itself (its cubic between)
  opt.amount = 2.5;
  const auto more = spring_apply(targets, dt, s, opt);
  double largest = 0.0;
  for (std::size_t k = 0; k < one.positions.size(); ++k) {
    if (k % 2 == 0) CHECK(none.positions[k] == targets[k / 2]);
    const Points3 deviation = one.positions[k] - none.positions[k];
    largest = std::max(largest, deviation.cwiseAbs().maxCoeff());
    // 1e-12 m: a few roundings of positions of order 1 m.
    CHECK((more.positions[k] - none.positions[k] - 2.5 * deviation).cwiseAbs().maxCoeff() < 1e-12);
  }
  CHECK(largest > 1e-3);  // the springs do move away from the target
}
