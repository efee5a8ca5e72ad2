#include "learn/trainer.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "learn/lane_forward.hpp"

namespace datadyn::learn {
namespace {

/// Samples per gradient chunk: fixed, so the summation order does not depend on threads.
constexpr std::size_t kChunk = 256;

using MatrixF = Eigen::MatrixXf;
using VectorF = Eigen::VectorXf;

/// Sum of squared errors per output row over all samples, in normalised units.
Eigen::VectorXd row_squared_errors(const Mlp<float>& net, const MatrixF& x, const MatrixF& y) {
  const std::size_t n = static_cast<std::size_t>(x.cols());
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(y.rows());
  return parallel_reduce(
      n, 4096, zero,
      [&](std::size_t b, std::size_t e) {
        const auto cols = static_cast<Eigen::Index>(e - b);
        const MatrixF out = net.forward(x.middleCols(static_cast<Eigen::Index>(b), cols));
        const MatrixF d = out - y.middleCols(static_cast<Eigen::Index>(b), cols);
        return Eigen::VectorXd(d.cast<double>().rowwise().squaredNorm());
      },
      [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) { return Eigen::VectorXd(a + b); });
}

/// MSE in output units from per-row sums in normalised units.
double output_mse(const Eigen::VectorXd& row_sums, const Standardizer& out, Eigen::Index n) {
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const double sum = row_sums.dot(out.std.cwiseAbs2());
  return sum / (static_cast<double>(n) * static_cast<double>(row_sums.size()));
}

}  // namespace

TrainResult train_mlp(Dataset train, Dataset test, const TrainParams& params,
                      const EpochCallback& on_epoch, const CheckpointCallback& on_checkpoint,
                      const TrainResult* resume) {
  DATADYN_CHECK_GT(train.size(), 0);
  DATADYN_CHECK_EQ(train.x.cols(), train.y.cols());
  DATADYN_CHECK_GE(params.batch_size, 1);
  TrainResult result;
  result.input = Standardizer::fit(train.x);
  result.output = Standardizer::fit(train.y);
  if (test.size() == 0) test = Dataset{MatrixF(train.x.rows(), 0), MatrixF(train.y.rows(), 0)};
  for (Dataset* d : {&train, &test}) {
    result.input.apply_in_place(d->x);
    result.output.apply_in_place(d->y);
  }
  const MatrixF &xs = train.x, &ys = train.y, &xt = test.x, &yt = test.y;

  std::vector<int> sizes{static_cast<int>(train.x.rows())};
  sizes.insert(sizes.end(), params.hidden.begin(), params.hidden.end());
  sizes.push_back(static_cast<int>(train.y.rows()));
  Mlp<float> net(sizes, params.seed);
  Adam<float> adam(net.parameters().size(), params.adam);
  std::mt19937_64 rng(params.seed ^ 0x9e3779b97f4a7c15ull);

  const Eigen::Index n = train.size();
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  const Eigen::Index batch = std::min<Eigen::Index>(params.batch_size, n);
  MatrixF xb(xs.rows(), batch), yb(ys.rows(), batch);
  const VectorF zero = VectorF::Zero(net.parameters().size());

  double best = std::numeric_limits<double>::infinity();
  int since_best = 0;
  int first_epoch = 1;
  result.network = net;
  if (resume) {
    const TrainState& s = resume->state;
    DATADYN_CHECK_EQ(s.parameters.size(), net.parameters().size());
    DATADYN_CHECK_EQ(s.adam_m.size(), net.parameters().size());
    DATADYN_CHECK_EQ(s.adam_v.size(), net.parameters().size());
    DATADYN_CHECK_EQ(s.order.size(), order.size());
    DATADYN_CHECK_EQ(resume->network.parameters().size(), net.parameters().size());
    net.parameters() = s.parameters;
    adam = Adam<float>(params.adam, s.adam_m, s.adam_v, s.adam_steps);
    std::istringstream(s.batch_rng) >> rng;
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Eigen::Index>(s.order[i]);
    best = s.best_loss;
    since_best = s.since_best;
    first_epoch = s.epoch + 1;
    result.network = resume->network;
    result.history = resume->history;
    result.best_epoch = resume->best_epoch;
  }
  auto save_state = [&](int epoch) {
    TrainState& s = result.state;
    s.epoch = epoch;
    s.parameters = net.parameters();
    s.adam_m = adam.first_moment();
    s.adam_v = adam.second_moment();
    s.adam_steps = adam.steps();
    std::ostringstream text;
    text << rng;
    s.batch_rng = text.str();
    s.order.assign(order.begin(), order.end());
    s.best_loss = best;
    s.since_best = since_best;
  };
  save_state(first_epoch - 1);
  if (resume && params.patience > 0 && since_best >= params.patience) {  // it had stopped
    result.stopped_early = resume->state.epoch < params.max_epochs;
    return result;
  }
  for (int epoch = first_epoch; epoch <= params.max_epochs; ++epoch) {
    // Fisher-Yates with the generator's raw output (std::shuffle differs between libraries).
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (Eigen::Index start = 0; start + batch <= n; start += batch) {
      for (Eigen::Index j = 0; j < batch; ++j) {
        xb.col(j) = xs.col(order[static_cast<std::size_t>(start + j)]);
        yb.col(j) = ys.col(order[static_cast<std::size_t>(start + j)]);
      }
      VectorF g = parallel_reduce(
          static_cast<std::size_t>(batch), kChunk, zero,
          [&](std::size_t b, std::size_t e) {
            VectorF part = VectorF::Zero(zero.size());
            const auto cols = static_cast<Eigen::Index>(e - b);
            net.accumulate_squared_error(xb.middleCols(static_cast<Eigen::Index>(b), cols),
                                         yb.middleCols(static_cast<Eigen::Index>(b), cols), part);
            return part;
          },
          [](const VectorF& a, const VectorF& b) { return VectorF(a + b); });
      g /= static_cast<float>(batch * ys.rows());
      adam.step(net.parameters(), g);
    }
    EpochReport report;
    report.epoch = epoch;
    report.train_loss = output_mse(row_squared_errors(net, xs, ys), result.output, n);
    report.test_loss = output_mse(row_squared_errors(net, xt, yt), result.output, xt.cols());
    if (!std::isfinite(report.train_loss)) {
      result.diverged_epoch = epoch;
      break;
    }
    result.history.push_back(report);
    if (on_epoch) on_epoch(report);
    const double loss = test.size() ? report.test_loss : report.train_loss;
    if (loss < best * (1.0 - params.min_improvement)) {
      best = loss;
      since_best = 0;
      result.network = net;
      result.best_epoch = epoch;
    } else if (loss < best) {
      best = loss;  // keep the best weights, but a tiny gain does not reset the plateau count
      result.network = net;
      result.best_epoch = epoch;
      ++since_best;
    } else {
      ++since_best;
    }
    save_state(epoch);
    if (on_checkpoint && params.checkpoint_every > 0 && epoch % params.checkpoint_every == 0)
      on_checkpoint(result);
    if (params.patience > 0 && since_best >= params.patience) {
      result.stopped_early = epoch < params.max_epochs;
      break;
    }
  }
  return result;
}

Eigen::MatrixXf predict(const Mlp<float>& net, const Standardizer& in, const Standardizer& out,
                        const Eigen::MatrixXf& x) {
  // Columns are independent: fixed chunks in parallel give the same bits on any thread count.
  const SimdLevel level = simd_level();  // the same bits at every level
  Eigen::MatrixXf y(net.output_size(), x.cols());
  parallel_for(static_cast<std::size_t>(x.cols()), 1024, [&](std::size_t b, std::size_t e) {
    const auto cols = static_cast<Eigen::Index>(e - b);
    y.middleCols(static_cast<Eigen::Index>(b), cols) =
        lane_forward(net, in, out, x.middleCols(static_cast<Eigen::Index>(b), cols), level);
  });
  return y;
}

double mean_squared_error(const Mlp<float>& net, const Standardizer& in, const Standardizer& out,
                          const Dataset& data) {
  return output_mse(row_squared_errors(net, in.apply<float>(data.x), out.apply<float>(data.y)), out,
                    data.size());
}

}  // namespace datadyn::learn
