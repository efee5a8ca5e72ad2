// Fitting recovers the springs that made the data, rejects corrupted frames, and is the same on
// any thread count.

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include <tbb/global_control.h>

#include "flesh/spring_fit.hpp"

using namespace datadyn;
using namespace datadyn::flesh;

namespace {

/// A smooth, non-periodic target motion for N vertices (metres), F frames.
std::vector<Points3> wobbly_targets(int N, int F, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 3.0);
  std::vector<double> w(static_cast<std::size_t>(6 * N));
  for (auto& x : w) x = u(rng);
  std::vector<Points3> t;
  for (int f = 0; f < F; ++f) {
    const double time = f / 30.0;
    Points3 p(N, 3);
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < 3; ++c)
        p(i, c) = 0.1 * std::sin(w[static_cast<std::size_t>(6 * i + c)] * 2.0 * time + c) +
                  0.05 * std::sin(w[static_cast<std::size_t>(6 * i + 3 + c)] * 5.0 * time);
    t.push_back(p);
  }
  return t;
}

}  // namespace

TEST_CASE("the fit recovers ks, kd of data made by the analytic model to 1e-6 relative") {
  // Under-, over- and near-critically damped springs, soft and stiff.
  const Eigen::VectorXd ks =
      (Eigen::VectorXd(6) << 30.0, 400.0, 100.0, 2500.0, 5.0, 900.0).finished();
  const Eigen::VectorXd kd =
      (Eigen::VectorXd(6) << 1.0, 60.0, 20.0 + 1e-7, 5.0, 30.0, 0.2).finished();
  const double dt = 1.0 / 30.0;
  const auto targets = wobbly_targets(6, 90, 11);
  const auto truth = spring_apply(targets, dt, {ks, kd}).positions;
  SpringFitParams params;
  params.iterations = 200;
  const auto fit = fit_springs({{"a", &targets, &truth, dt}}, params);
  for (int i = 0; i < 6; ++i) {
    INFO("vertex " << i << ": ks " << fit.springs.ks[i] << " vs " << ks[i] << ", kd "
                   << fit.springs.kd[i] << " vs " << kd[i]);
    CHECK(fit.springs.ks[i] == doctest::Approx(ks[i]).epsilon(1e-6));
    CHECK(fit.springs.kd[i] == doctest::Approx(kd[i]).epsilon(1e-6));
  }
  REQUIRE(fit.sequences.size() == 1);
  CHECK(fit.sequences[0].loss_fitted < 1e-18 * fit.sequences[0].loss_target);
  CHECK(fit.sequences[0].rejected_frames.empty());
}

TEST_CASE("frames that disagree with the rest are rejected and do not pull the fit") {
  const Eigen::VectorXd ks = Eigen::VectorXd::Constant(8, 200.0);
  const Eigen::VectorXd kd = Eigen::VectorXd::Constant(8, 4.0);
  const double dt = 1.0 / 30.0;
  const auto targets = wobbly_targets(8, 80, 5);
  const auto clean = spring_apply(targets, dt, {ks, kd}).positions;
  auto bad = clean;
  bad[30].array() += 0.05;  // two "non-converged" ground-truth frames, 5 cm off
  bad[61].array() -= 0.08;
  SpringFitParams params;
  params.iterations = 200;
  const auto fit = fit_springs({{"a", &targets, &bad, dt}}, params);
  CHECK(fit.sequences[0].rejected_frames == std::vector<int>{30, 61});
  for (int i = 0; i < 8; ++i) {
    CHECK(fit.springs.ks[i] == doctest::Approx(200.0).epsilon(1e-6));
    CHECK(fit.springs.kd[i] == doctest::Approx(4.0).epsilon(1e-6));
  }
  params.reject_mads = 0;  // without rejection the outliers bias the fit
  const auto biased = fit_springs({{"a", &targets, &bad, dt}}, params);
  CHECK(std::abs(biased.springs.ks[0] / 200.0 - 1.0) > 1e-4);
}

TEST_CASE("the fit sums sequences and is bitwise the same on 1 and 2 threads") {
  const double dt = 1.0 / 24.0;
  const auto t1 = wobbly_targets(40, 30, 1), t2 = wobbly_targets(40, 25, 2);
  const Eigen::VectorXd ks = Eigen::VectorXd::LinSpaced(40, 20.0, 800.0);
  const Eigen::VectorXd kd = Eigen::VectorXd::LinSpaced(40, 0.5, 50.0);
  const auto d1 = spring_apply(t1, dt, {ks, kd}).positions;
  const auto d2 = spring_apply(t2, dt, {ks, kd}).positions;
  SpringFitParams params;
  params.grain = 8;
  SpringFitResult a, b;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    a = fit_springs({{"one", &t1, &d1, dt}, {"two", &t2, &d2, dt}}, params);
  }
  {
    tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
    b = fit_springs({{"one", &t1, &d1, dt}, {"two", &t2, &d2, dt}}, params);
  }
  CHECK(a.springs.ks == b.springs.ks);
  CHECK(a.springs.kd == b.springs.kd);
  REQUIRE(a.sequences.size() == 2);
  CHECK(a.sequences[1].name == "two");
  CHECK(a.sequences[0].rms_fitted < 1e-3 * a.sequences[0].rms_target);
  CHECK(a.sequences[1].rms_fitted < 1e-3 * a.sequences[1].rms_target);
}
