// Spring layer throughput (Jin et al. 2022): the closed-form `apply` in vertex-frames per second
// on 2 threads for the paper's 13,575-vertex character, against RK4 with substeps at equal
// accuracy in the same run, and the time of a fit of 13,575 vertices x 2 sequences x 300 frames.
// Usage: bench_spring_apply [--quick]  (quick: a tenth of the vertices, for smoke runs)

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <tbb/global_control.h>

#include "core/parallel.hpp"
#include "flesh/spring_fit.hpp"
#include "flesh/spring_integrator.hpp"

namespace {

using namespace datadyn;
using namespace datadyn::flesh;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Smooth quasi-random targets: each vertex moves on a sum of sines (metres).
std::vector<Points3> make_targets(Eigen::Index N, int F, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 4.0);
  Eigen::VectorXd w(N);
  for (Eigen::Index i = 0; i < N; ++i) w[i] = u(rng);
  std::vector<Points3> t(static_cast<std::size_t>(F), Points3(N, 3));
  for (int f = 0; f < F; ++f) {
    const double time = f / 30.0;
    for (Eigen::Index i = 0; i < N; ++i)
      t[static_cast<std::size_t>(f)].row(i) << 0.1 * std::sin(w[i] * time),
          0.05 * std::sin(2.3 * w[i] * time + 1.0), 0.02 * std::cos(1.7 * w[i] * time);
  }
  return t;
}

/// RK4 with `substeps` steps per frame on x'' = ks (x̂ - x) + kd (x̂' - x'), the same cubic
/// target; returns the frame positions.
std::vector<Points3> rk4_apply(const std::vector<Points3>& X, double dt, const Springs& s,
                               int substeps) {
  const std::size_t F = X.size();
  const Eigen::Index N = X[0].rows();
  std::vector<Points3> out(F, Points3(N, 3));
  out[0] = X[0];
  parallel_for(static_cast<std::size_t>(N), 256, [&](std::size_t b, std::size_t e) {
    for (std::size_t iv = b; iv < e; ++iv) {
      const Eigen::Index i = static_cast<Eigen::Index>(iv);
      const double ks = s.ks[i], kd = s.kd[i];
      for (int c = 0; c < 3; ++c) {
        double x = X[0](i, c), v = 0.0;
        for (std::size_t n = 0; n + 1 < F; ++n) {
          const double p0 = X[n](i, c), p1 = X[n + 1](i, c);
          const double m0 = n > 0 ? 0.5 * (p1 - X[n - 1](i, c)) : p1 - p0;
          const double m1 = n + 2 < F ? 0.5 * (X[n + 2](i, c) - p0) : p1 - p0;
          const double q = 2 * p0 + m0 - 2 * p1 + m1, a = -3 * p0 - 2 * m0 + 3 * p1 - m1;
          if (n == 0) v = m0 / dt;
          const auto acc = [&](double sg, double xx, double vv) {
            const double xh = ((q * sg + a) * sg + m0) * sg + p0;
            const double vh = ((3 * q * sg + 2 * a) * sg + m0) / dt;
            return ks * (xh - xx) + kd * (vh - vv);
          };
          const double h = dt / substeps, hs = 1.0 / substeps;
          for (int k = 0; k < substeps; ++k) {
            const double s0 = k * hs;
            const double k1x = v, k1v = acc(s0, x, v);
            const double k2x = v + 0.5 * h * k1v, k2v = acc(s0 + 0.5 * hs, x + 0.5 * h * k1x, k2x);
            const double k3x = v + 0.5 * h * k2v, k3v = acc(s0 + 0.5 * hs, x + 0.5 * h * k2x, k3x);
            const double k4x = v + h * k3v, k4v = acc(s0 + hs, x + h * k3x, k4x);
            x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
            v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
          }
          out[n + 1](i, c) = x;
        }
      }
    }
  });
  return out;
}

double max_error(const std::vector<Points3>& a, const std::vector<Points3>& b) {
  double e = 0.0;
  for (std::size_t f = 0; f < a.size(); ++f) e = std::max(e, (a[f] - b[f]).cwiseAbs().maxCoeff());
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  const Eigen::Index N = quick ? 1358 : 13575;
  const int F = 300;
  const double dt = 1.0 / 30.0;
  const auto targets = make_targets(N, F, 1);
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> lks(std::log(50.0), std::log(3000.0)),
      lkd(std::log(0.5), std::log(80.0));
  Springs springs{Eigen::VectorXd(N), Eigen::VectorXd(N)};
  for (Eigen::Index i = 0; i < N; ++i) {
    springs.ks[i] = std::exp(lks(rng));
    springs.kd[i] = std::exp(lkd(rng));
  }

  // Closed form: best of 3.
  double t_apply = 1e30;
  SpringApplyResult exact;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    exact = spring_apply(targets, dt, springs);
    t_apply = std::min(t_apply, seconds_since(t0));
  }
  const double vf = double(N) * double(F - 1);
  std::printf(
      "apply (closed form): %ld vertices x %d frames on 2 threads: %.3f s, %.3g vertex-frames/s"
      " (%.0f frames/s of the %ld-vertex mesh; goal >= 1e7)\n",
      static_cast<long>(N), F, t_apply, vf / t_apply, (F - 1) / t_apply, static_cast<long>(N));

  // RK4 at equal accuracy: the fewest substeps (doubling) whose max error against the closed
  // form is <= 1e-6 m (1 micrometre; the closed form is exact to rounding, ~1e-15 m).
  const double tol = 1e-6;
  int substeps = 1;
  double err = 0.0;
  for (; substeps <= 1024; substeps *= 2) {
    err = max_error(rk4_apply(targets, dt, springs, substeps), exact.positions);
    if (err <= tol) break;
  }
  double t_rk4 = 1e30;
  for (int r = 0; r < 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto x = rk4_apply(targets, dt, springs, substeps);
    t_rk4 = std::min(t_rk4, seconds_since(t0));
  }
  std::printf(
      "RK4 with %d substeps/frame (max error %.2g m <= %.0e m): %.3f s, %.3g vertex-frames/s\n",
      substeps, err, tol, t_rk4, vf / t_rk4);
  std::printf("ratio closed form / RK4 at equal accuracy: %.1fx (goal >= 10x)\n", t_rk4 / t_apply);

  // Fit: N vertices x 2 sequences x 300 frames of data made by the model itself plus noise.
  const auto targets2 = make_targets(N, F, 3);
  auto truth1 = exact.positions;
  auto truth2 = spring_apply(targets2, dt, springs).positions;
  std::normal_distribution<double> noise(0.0, 1e-4);
  for (auto* seq : {&truth1, &truth2})
    for (auto& fr : *seq)
      for (Eigen::Index k = 0; k < fr.size(); ++k) fr.data()[k] += noise(rng);
  const auto t0 = std::chrono::steady_clock::now();
  const auto fit = fit_springs({{"a", &targets, &truth1, dt}, {"b", &targets2, &truth2, dt}}, {});
  const double t_fit = seconds_since(t0);
  double worst = 0.0;
  for (Eigen::Index i = 0; i < N; ++i)
    worst = std::max(worst, std::abs(fit.springs.ks[i] / springs.ks[i] - 1.0));
  std::printf(
      "fit: %ld vertices x 2 sequences x %d frames on 2 threads: %.1f s (goal <= 60 s); "
      "rms %.2g -> %.2g m; worst ks relative error %.2g (0.1 mm noise)\n",
      static_cast<long>(N), F, t_fit, fit.sequences[0].rms_target, fit.sequences[0].rms_fitted,
      worst);
  return 0;
}
