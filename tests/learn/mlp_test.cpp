// The network's gradient against central finite differences, Adam/training against problems
// with known answers, and the batched forward pass at every vector width against the network in
// double.

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "learn/lane_forward.hpp"
#include "learn/mlp.hpp"
#include "learn/trainer.hpp"

using datadyn::learn::Mlp;
using datadyn::SimdLevel;

namespace {

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = u(rng);
  return m;
}

/// y = (sin x0 + x1 x2, x0 - x2) at n seeded points of [-1, 1]^3.
datadyn::learn::Dataset smooth_dataset(Eigen::Index n, std::uint64_t seed) {
  datadyn::learn::Dataset d;
  d.x = random_matrix(3, n, seed).cast<float>();
  d.y.resize(2, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    d.y(0, j) = std::sin(d.x(0, j)) + d.x(1, j) * d.x(2, j);
    d.y(1, j) = d.x(0, j) - d.x(2, j);
  }
  return d;
}

datadyn::learn::Standardizer random_standardizer(int n, std::uint64_t seed) {
  datadyn::learn::Standardizer s;
  s.mean = random_matrix(n, 1, seed).col(0);
  s.std = random_matrix(n, 1, seed + 1).col(0).cwiseAbs().array() + 0.5;
  return s;
}

}  // namespace

TEST_CASE("the backpropagated gradient equals central finite differences") {
  // Double precision, a small 36-8-8-27-like net: a step of 1e-6 gives a truncation error of
  // O(1e-12) relative to O(1) second derivatives and a rounding error near 1e-16/1e-6 = 1e-10; a
  // ReLU kink inside a step is unlikely with random inputs and would show as one large error.
  const std::vector<int> sizes{6, 8, 8, 5};
  Mlp<double> net(sizes, 42);
  net.parameters() += 0.1 * random_matrix(net.parameters().size(), 1, 7);  // non-zero biases
  const Eigen::MatrixXd x = random_matrix(6, 10, 1), y = random_matrix(5, 10, 2);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(net.parameters().size());
  net.accumulate_squared_error(x, y, g);
  const double eps = 1e-6;
  double worst = 0.0;
  for (Eigen::Index i = 0; i < net.parameters().size(); ++i) {
    Eigen::VectorXd dummy = Eigen::VectorXd::Zero(g.size());
    Mlp<double> plus = net, minus = net;
    plus.parameters()[i] += eps;
    minus.parameters()[i] -= eps;
    const double fd =
        (plus.accumulate_squared_error(x, y, dummy) - minus.accumulate_squared_error(x, y, dummy)) /
        (2 * eps);
    worst = std::max(worst, std::abs(fd - g[i]) / std::max(1.0, std::abs(g[i])));
  }
  INFO("worst relative gradient error " << worst);
  CHECK(worst < 1e-6);
}

TEST_CASE("forward matches a hand-computed two-layer network") {
  // W0 = [1 -1], b0 = 0.5 -> relu(x0 - x1 + 0.5); W1 = [2], b1 = -1.
  Eigen::VectorXd p(5);
  p << 1, -1, 0.5, 2, -1;
  Mlp<double> net({2, 1, 1}, p);
  Eigen::MatrixXd x(2, 2);
  x << 1, 0, 0, 3;  // columns (1, 0) and (0, 3)
  const Eigen::MatrixXd out = net.forward(x);
  CHECK(out(0, 0) == doctest::Approx(2 * 1.5 - 1));
  CHECK(out(0, 1) == doctest::Approx(-1));  // relu(-2.5) = 0
}

TEST_CASE("Adam fits a known smooth function and training lowers the test loss") {
  const auto train = smooth_dataset(2000, 11), test = smooth_dataset(500, 12);
  datadyn::learn::TrainParams params;
  params.hidden = {32, 32};
  params.adam.learning_rate = 3e-3;
  params.batch_size = 64;
  params.max_epochs = 60;
  params.patience = 0;
  params.seed = 5;
  const auto result = datadyn::learn::train_mlp(train, test, params);
  REQUIRE(result.history.size() == 60);
  const double first = result.history.front().test_loss, last = result.history.back().test_loss;
  // The targets' variance is about 0.55; a fit to 1e-3 of it is a real fit, not a mean.
  INFO("test loss after epoch 1 " << first << ", after 60 " << last);
  CHECK(last < 0.1 * first);
  CHECK(last < 5e-3);
  CHECK(datadyn::learn::mean_squared_error(result.network, result.input, result.output, test) ==
        doctest::Approx(result.history[static_cast<std::size_t>(result.best_epoch - 1)].test_loss)
            .epsilon(1e-4));  // float sums in another order
}

TEST_CASE("the same seed gives the same weights, a different seed different ones") {
  Mlp<float> a({36, 64, 27}, 3), b({36, 64, 27}, 3), c({36, 64, 27}, 4);
  CHECK(a.parameters() == b.parameters());
  CHECK(a.parameters() != c.parameters());
  // He initialisation: weight std sqrt(2/36) = 0.236 within 5 % (2304 samples: ~1.5 % std).
  const auto w = a.weight(0);
  const double sd = std::sqrt(w.cast<double>().squaredNorm() / static_cast<double>(w.size()));
  CHECK(sd == doctest::Approx(std::sqrt(2.0 / 36)).epsilon(0.05));
}

TEST_CASE("batched prediction equals prediction patch by patch") {
  // The upscaling network's shape over a 64 x 64 miniature's 3969 patches: predict() runs the
  // float lane forward pass over blocks of 1024 columns; each column alone through the same
  // network in double is the second method. Every output sums at most 64 products per layer over 4 layers, so float
  // rounding stays below 4 * 64 * 2^-24 = 1.5e-5 of the magnitudes summed (about the outputs'
  // here: inputs and weights of order 1); 2e-5 of the largest output, far below a wrong column.
  const std::vector<int> sizes{36, 64, 64, 64, 27};
  const Mlp<float> net(sizes, 5);
  const Mlp<double> reference(sizes, net.parameters().cast<double>());
  const auto in = random_standardizer(36, 6), out = random_standardizer(27, 8);
  const Eigen::MatrixXd x = random_matrix(36, 3969, 10);
  const Eigen::MatrixXf batched = datadyn::learn::predict(net, in, out, x.cast<float>());
  REQUIRE(batched.cols() == 3969);
  Eigen::MatrixXd single(27, 3969);
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const Eigen::VectorXd xs = (x.col(j) - in.mean).cwiseQuotient(in.std);
    single.col(j) = reference.forward(xs).cwiseProduct(out.std) + out.mean;
  }
  const double scale = single.cwiseAbs().maxCoeff();
  const double error = (batched.cast<double>() - single).cwiseAbs().maxCoeff();
  INFO("max |batched - single| = " << error << ", largest output " << scale);
  CHECK(error <= 2e-5 * scale);
  // And the float path column by column agrees with the batch to the same tolerance.
  for (Eigen::Index j :
       {Eigen::Index{0}, Eigen::Index{1023}, Eigen::Index{1024}, Eigen::Index{3968}}) {
    const Eigen::MatrixXf one = datadyn::learn::predict(net, in, out, x.col(j).cast<float>());
    CHECK((one - batched.col(j)).cwiseAbs().maxCoeff() <= 2e-5 * scale);
  }
}

TEST_CASE("training resumed from a stopped run's state gives the uninterrupted run's bits") {
  // Exact equality is the property: the resumed run must repeat every float operation of the
  // uninterrupted one (same batches from the restored generator and order, same Adam moments).
  const auto train = smooth_dataset(700, 21), test = smooth_dataset(200, 22);
  datadyn::learn::TrainParams params;
  params.hidden = {16, 16};
  params.adam.learning_rate = 3e-3;
  params.batch_size = 64;  // 10 batches and a remainder that is skipped
  params.max_epochs = 30;
  params.patience = 3;
  params.min_improvement = 0.2;  // the plateau count runs and stops training early
  params.seed = 3;
  const auto whole = datadyn::learn::train_mlp(train, test, params);
  REQUIRE(whole.stopped_early);  // at epoch 11
  const int last = static_cast<int>(whole.history.size());
  for (int stop : {1, last / 2, last}) {  // the last: a resumed run that had already stopped
    INFO("stopped after epoch " << stop);
    datadyn::learn::TrainParams first = params;
    first.max_epochs = stop;
    const auto part = datadyn::learn::train_mlp(train, test, first);
    REQUIRE(part.state.epoch == stop);
    const auto resumed = datadyn::learn::train_mlp(train, test, params, {}, {}, &part);
    CHECK(resumed.network.parameters() == whole.network.parameters());
    CHECK(resumed.state.parameters == whole.state.parameters);
    CHECK(resumed.best_epoch == whole.best_epoch);
    CHECK(resumed.stopped_early == whole.stopped_early);
    REQUIRE(resumed.history.size() == whole.history.size());
    for (std::size_t e = 0; e < whole.history.size(); ++e)
      CHECK(resumed.history[e].test_loss == whole.history[e].test_loss);
    // Not a vacuous comparison: the stopped run's weights differ from the finished run's.
    if (stop < last) CHECK(part.state.parameters != whole.state.parameters);
  }
}


TEST_CASE("the lane forward pass gives the same bits at every supported vector width") {
  // Widths that are not multiples of the 4-row blocks (27, 5) and sample counts that are not
  // multiples of the 8, 16 or 32 lanes of a block, so remainders and padding are exercised.
  for (const std::vector<int>& sizes :
       {std::vector<int>{36, 64, 64, 64, 27}, std::vector<int>{3, 5, 2}}) {
    const datadyn::learn::Mlp<float> net(sizes, 11);
    const auto in = random_standardizer(sizes.front(), 12);
    const auto out = random_standardizer(sizes.back(), 14);
    for (Eigen::Index n : {Eigen::Index{1}, Eigen::Index{33}, Eigen::Index{3969}}) {
      const Eigen::MatrixXf x = random_matrix(sizes.front(), n, 16).cast<float>();
      const Eigen::MatrixXf base =
          datadyn::learn::lane_forward(net, in, out, x, SimdLevel::Baseline);
      for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        if (!datadyn::simd_level_supported(level)) continue;
        INFO("level " << static_cast<int>(level) << ", " << n << " samples");
        CHECK(datadyn::learn::lane_forward(net, in, out, x, level) == base);
      }
      // Each sample alone gives its bits in the batch: padding lanes do not leak into others.
      const Eigen::MatrixXf last = datadyn::learn::lane_forward(
          net, in, out, x.rightCols(1), datadyn::simd_level());
      CHECK(last == base.rightCols(1));
    }
  }
}
