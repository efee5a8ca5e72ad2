// Fitting recovers the springs that made the data, rejects corrupted frames, and is the same on
// any thread count.

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "flesh/spring_fit.hpp"
#include "support/threads.hpp"

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

TEST_CASE("the fit sums sequences and is bitwise the same on 1 and 4 threads") {
  const double dt = 1.0 / 24.0;
  const auto t1 = wobbly_targets(40, 30, 1), t2 = wobbly_targets(40, 25, 2);
  const Eigen::VectorXd ks = Eigen::VectorXd::LinSpaced(40, 20.0, 800.0);
  const Eigen::VectorXd kd = Eigen::VectorXd::LinSpaced(40, 0.5, 50.0);
  const auto d1 = spring_apply(t1, dt, {ks, kd}).positions;
  const auto d2 = spring_apply(t2, dt, {ks, kd}).positions;
  SpringFitParams params;
  params.grain = 8;
  SpringFitResult a, b;
  const auto fit = [&] {
    return fit_springs({{"one", &t1, &d1, dt}, {"two", &t2, &d2, dt}}, params);
  };
  a = test::with_threads(1, fit);
  b = test::with_threads(4, fit);
  CHECK(a.springs.ks == b.springs.ks);
  CHECK(a.springs.kd == b.springs.kd);
  REQUIRE(a.sequences.size() == 2);
  CHECK(a.sequences[1].name == "two");
  CHECK(a.sequences[0].rms_fitted < 1e-3 * a.sequences[0].rms_target);
  CHECK(a.sequences[1].rms_fitted < 1e-3 * a.sequences[1].rms_target);
}

namespace {

/// Σ_i Σ_{n>=1} ||x_i^n - x_D,i^n||^2 over `vertices`, every spring set to (ks, kd): the pooled
/// loss computed by the integrator alone (an independent path from the fit's forward mode).
double pooled_loss(const std::vector<Points3>& targets, const std::vector<Points3>& truth,
                   double dt, const std::vector<Eigen::Index>& vertices, double ks, double kd) {
  const Eigen::Index N = targets[0].rows();
  const auto x = spring_apply(targets, dt,
                              {Eigen::VectorXd::Constant(N, ks), Eigen::VectorXd::Constant(N, kd)})
                     .positions;
  double L = 0.0;
  for (std::size_t n = 1; n < x.size(); ++n)
    for (const Eigen::Index v : vertices) L += (x[n].row(v) - truth[n].row(v)).squaredNorm();
  return L;
}

}  // namespace

TEST_CASE("a shared region's one ks, kd is recovered to 1e-6 relative, the same for its vertices") {
  const int N = 10;
  const std::vector<Eigen::Index> region = {1, 3, 4, 7, 8};
  Eigen::VectorXd ks = Eigen::VectorXd::LinSpaced(N, 40.0, 1500.0);
  Eigen::VectorXd kd = Eigen::VectorXd::LinSpaced(N, 0.5, 70.0);
  for (const Eigen::Index v : region) {
    ks[v] = 350.0;  // underdamped: kd^2 - 4 ks = -1364
    kd[v] = 6.0;
  }
  const double dt = 1.0 / 30.0;
  const auto targets = wobbly_targets(N, 90, 21);
  const auto truth = spring_apply(targets, dt, {ks, kd}).positions;
  SpringFitParams params;
  params.iterations = 200;
  params.grain = 2;  // several chunks per region: the pooled sum crosses chunk boundaries
  params.shared_regions = {region};
  const auto fit = fit_springs({{"a", &targets, &truth, dt}}, params);
  for (int i = 0; i < N; ++i) {
    INFO("vertex " << i << ": ks " << fit.springs.ks[i] << " vs " << ks[i] << ", kd "
                   << fit.springs.kd[i] << " vs " << kd[i]);
    CHECK(fit.springs.ks[i] == doctest::Approx(ks[i]).epsilon(1e-6));
    CHECK(fit.springs.kd[i] == doctest::Approx(kd[i]).epsilon(1e-6));
  }
  for (const Eigen::Index v : region) {
    CHECK(fit.springs.ks[v] == fit.springs.ks[region[0]]);  // one parameter set, bit for bit
    CHECK(fit.springs.kd[v] == fit.springs.kd[region[0]]);
  }
  CHECK(fit.sequences[0].loss_fitted < 1e-18 * fit.sequences[0].loss_target);
}

TEST_CASE("a region of differing springs gets the minimiser of its pooled loss") {
  // The members' own springs differ (soft to stiff), so no single pair fits them exactly: the
  // shared pair must do at least as well on the summed loss as any member's pair and as its
  // own neighbours 1 % away (a local minimum of the pooled loss, computed without the fit's
  // gradient code).
  const int N = 6;
  const Eigen::VectorXd ks =
      (Eigen::VectorXd(N) << 80.0, 120.0, 200.0, 150.0, 90.0, 300.0).finished();
  const Eigen::VectorXd kd = (Eigen::VectorXd(N) << 3.0, 5.0, 4.0, 8.0, 2.0, 6.0).finished();
  const double dt = 1.0 / 30.0;
  const auto targets = wobbly_targets(N, 80, 4);
  const auto truth = spring_apply(targets, dt, {ks, kd}).positions;
  const std::vector<Eigen::Index> region = {0, 1, 2, 3, 4, 5};
  SpringFitParams params;
  params.iterations = 200;
  params.reject_mads = 0;
  params.shared_regions = {region};
  const auto fit = fit_springs({{"a", &targets, &truth, dt}}, params);
  const double s = fit.springs.ks[0], d = fit.springs.kd[0];
  const double best = pooled_loss(targets, truth, dt, region, s, d);
  INFO("shared ks " << s << ", kd " << d << ", pooled loss " << best);
  CHECK(best == doctest::Approx(fit.loss.sum()).epsilon(1e-9));  // two summation orders
  for (int i = 0; i < N; ++i) CHECK(best < pooled_loss(targets, truth, dt, region, ks[i], kd[i]));
  for (const double f : {0.99, 1.01}) {
    CHECK(best <= pooled_loss(targets, truth, dt, region, f * s, d));
    CHECK(best <= pooled_loss(targets, truth, dt, region, s, f * d));
  }
}

TEST_CASE("rigid vertices are those whose ground truth stays within the tolerance of the target") {
  const int N = 7;
  const auto targets = wobbly_targets(N, 20, 3);
  auto truth = targets;
  // Vertices 1, 3, 4, 6 deviate by 1 mm in one frame each (different frames and axes); vertex 5
  // by 0.3 mm along a diagonal in ten frames.
  truth[4](1, 0) += 1e-3;
  truth[9](3, 1) -= 1e-3;
  truth[19](4, 2) += 1e-3;
  truth[0](6, 0) += 1e-3;
  for (std::size_t n = 5; n < 15; ++n) truth[n].row(5).array() += 0.3e-3 / std::sqrt(3.0);
  const double dt = 1.0 / 30.0;
  const std::vector<FitSequence> seqs = {{"a", &targets, &truth, dt}};
  CHECK(rigid_vertices(seqs, 0.0) == std::vector<Eigen::Index>{0, 2});
  CHECK(rigid_vertices(seqs, 0.5e-3) == std::vector<Eigen::Index>{0, 2, 5});
  CHECK(rigid_vertices(seqs, 2e-3).size() == std::size_t(N));
  // A second sequence in which vertex 2 moves on its own takes it out of the rigid set.
  auto truth2 = targets;
  truth2[7](2, 1) += 5e-3;
  const std::vector<FitSequence> two = {{"a", &targets, &truth, dt}, {"b", &targets, &truth2, dt}};
  CHECK(rigid_vertices(two, 0.5e-3) == std::vector<Eigen::Index>{0, 5});
}

TEST_CASE("a fit with shared regions is bitwise the same on 1 and 4 threads") {
  const double dt = 1.0 / 24.0;
  const auto t = wobbly_targets(40, 30, 8);
  const Eigen::VectorXd ks = Eigen::VectorXd::LinSpaced(40, 20.0, 800.0);
  const Eigen::VectorXd kd = Eigen::VectorXd::LinSpaced(40, 0.5, 50.0);
  const auto d = spring_apply(t, dt, {ks, kd}).positions;
  SpringFitParams params;
  params.grain = 4;
  params.iterations = 20;
  std::vector<Eigen::Index> big;
  for (Eigen::Index v = 10; v < 35; ++v) big.push_back(v);
  params.shared_regions = {big, {2, 38}};
  SpringFitResult a, b;
  const auto fit = [&] { return fit_springs({{"t", &t, &d, dt}}, params); };
  a = test::with_threads(1, fit);
  b = test::with_threads(4, fit);
  CHECK(a.springs.ks == b.springs.ks);
  CHECK(a.springs.kd == b.springs.kd);
  CHECK(a.loss == b.loss);
  CHECK(a.springs.ks[2] == a.springs.ks[38]);
  CHECK(a.springs.ks[10] == a.springs.ks[34]);
}
