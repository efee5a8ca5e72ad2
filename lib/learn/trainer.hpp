#pragma once
/// @file
/// Mini-batch training of an Mlp with Adam on the MSE of standardised outputs (Lee, Oh, Lee 2019,
/// sec. 3.4), with early stopping when the test loss plateaus. Deterministic for any thread
/// count: each batch's gradient is summed over fixed chunks of samples in chunk order
/// (datadyn::parallel_reduce), and the batch order comes from a seeded generator.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "learn/adam.hpp"
#include "learn/mlp.hpp"
#include "learn/standardizer.hpp"

namespace datadyn::learn {

struct TrainParams {
  std::vector<int> hidden{64, 64, 64};  ///< hidden layer widths (sec. 3.3: 4 x FC-64 with output)
  AdamParams adam;                      ///< learning rate 1e-4 as in the paper
  int batch_size = 1024;                ///< samples per Adam step, >= 1 (paper: 50,000)
  int max_epochs = 200;                 ///< >= 1
  /// Stop when the test loss has not improved by `min_improvement` (relative) for this many
  /// epochs; 0 disables early stopping.
  int patience = 15;
  double min_improvement = 1e-3;  ///< relative, in [0, 1)
  std::uint64_t seed = 1;         ///< weights and batch order
  int checkpoint_every = 0;       ///< epochs between on_checkpoint calls; 0: none
};

/// Pairs as columns: x #in by n, y #out by n (float, as the network runs).
struct Dataset {
  Eigen::MatrixXf x, y;
  Eigen::Index size() const { return x.cols(); }
};

struct EpochReport {
  int epoch = 0;            ///< 1-based
  double train_loss = 0.0;  ///< MSE in output units (eq. 4), whole training set
  double test_loss = 0.0;   ///< the same on the test set (NaN without a test set)
};

/// Everything training needs to go on after an epoch exactly as if it had not stopped: with it,
/// train_mlp resumed from a checkpoint gives the bits of an uninterrupted run.
struct TrainState {
  int epoch = 0;                    ///< epochs done
  Eigen::VectorXf parameters;       ///< the current weights (not the best)
  Eigen::VectorXf adam_m, adam_v;   ///< Adam's moment estimates
  long adam_steps = 0;              ///< Adam steps done
  std::string batch_rng;            ///< the batch-order mt19937_64, in its standard text form
  std::vector<std::int64_t> order;  ///< sample order the next epoch's shuffle starts from
  double best_loss = 0.0;           ///< the lowest loss so far (the plateau test's reference)
  int since_best = 0;               ///< epochs since it improved by min_improvement
};

struct TrainResult {
  Mlp<float> network;  ///< the weights of the epoch with the lowest test loss
  Standardizer input, output;
  std::vector<EpochReport> history;
  int best_epoch = 0;
  bool stopped_early = false;
  int diverged_epoch = 0;  ///< the epoch whose loss was not finite, which ended training; 0: none
  TrainState state;        ///< after the last epoch run
};

/// Called after each epoch; may throw to cancel.
using EpochCallback = std::function<void(const EpochReport&)>;
struct TrainResult;
/// Called every checkpoint_every epochs with the result so far (best weights, history).
using CheckpointCallback = std::function<void(const TrainResult&)>;

/// Trains an Mlp of sizes {#in, hidden..., #out} on `train`, reporting the loss on `test` (may be
/// empty: then the training loss decides the plateau). With `resume` (a checkpoint's result from
/// the same data and parameters), training continues after resume->state.epoch epochs.
/// The sets are taken by value and standardised in place: a caller done with them moves them in,
/// so that training holds one copy of the pairs.
/// @pre resume's network has the sizes above and its state's vectors match them and the data
TrainResult train_mlp(Dataset train, Dataset test, const TrainParams& params,
                      const EpochCallback& on_epoch = {},
                      const CheckpointCallback& on_checkpoint = {},
                      const TrainResult* resume = nullptr);

/// MSE in output units of a trained network over a dataset (eq. 4).
double mean_squared_error(const Mlp<float>& net, const Standardizer& in, const Standardizer& out,
                          const Dataset& data);

/// Predictions in output units: #out by n for x #in by n.
Eigen::MatrixXf predict(const Mlp<float>& net, const Standardizer& in, const Standardizer& out,
                        const Eigen::MatrixXf& x);

}  // namespace datadyn::learn
