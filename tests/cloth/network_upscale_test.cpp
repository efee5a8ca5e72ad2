// The upscaling network against bilinear interpolation on a held-out run of the training scene:
// both get the DSDS of the held-out target (the miniature the network was trained on), so the
// comparison isolates the upscaler from how well a miniature simulation follows its target.

#include <doctest/doctest.h>

#include "cloth/mass_spring_solver.hpp"
#include "cloth/miniature.hpp"
#include "cloth/training_pairs.hpp"
#include "cloth/upscale.hpp"
#include "learn/trainer.hpp"

using namespace datadyn::cloth;

namespace {

std::vector<datadyn::Points3> simulate(const ClothParams& p) {
  MassSpringSolver sim(p);
  std::vector<datadyn::Points3> frames{sim.positions()};
  for (int f = 1; f < p.frames; ++f) {
    REQUIRE(sim.step().ok);
    frames.push_back(sim.positions());
  }
  return frames;
}

double bilinear_error(const std::vector<datadyn::Points3>& frames, const MiniatureGrid& g) {
  double sum = 0.0;
  for (std::size_t t = 2; t < frames.size(); ++t) {
    const auto mini = downsample_downscale(frames[t], g.target_nx(), g.target_ny(), g.factor);
    sum +=
        (interpolate_upscale(mini, g, Interpolation::Bilinear) - frames[t]).rowwise().norm().mean();
  }
  return sum / static_cast<double>(frames.size() - 2);
}

}  // namespace

TEST_CASE("the network beats bilinear upscaling on a held-out curtain run") {
  ClothParams base;
  base.nx = base.ny = 17;
  base.spacing = 1.0 / 16;
  REQUIRE(apply_scene_preset("curtain", base));
  base.frames = 60;
  const MiniatureGrid grid{9, 9, 2};
  // Four training runs over mass and stiffness; the held-out run lies between them.
  const PatchOptions options{true, true};
  datadyn::learn::Dataset train;
  std::vector<PatchPairs> parts;
  for (double mass : {0.008, 0.012})
    for (double k : {1500.0, 2500.0}) {
      ClothParams p = base;
      p.mass = mass;
      p.k_structural = k;
      p.k_shear = 0.5 * k;
      parts.push_back(training_pairs(simulate(p), grid, options));
    }
  Eigen::Index n = 0;
  for (const auto& p : parts) n += p.x.cols();
  train.x.resize(36, n);
  train.y.resize(27, n);
  Eigen::Index o = 0;
  for (const auto& p : parts) {
    train.x.middleCols(o, p.x.cols()) = p.x;
    train.y.middleCols(o, p.y.cols()) = p.y;
    o += p.x.cols();
  }
  ClothParams held = base;
  held.mass = 0.01;
  held.k_structural = 2000.0;
  held.k_shear = 1000.0;
  const auto frames = simulate(held);
  const auto test_pairs = training_pairs(frames, grid, options);
  const datadyn::learn::Dataset test{test_pairs.x, test_pairs.y};

  datadyn::learn::TrainParams params;
  params.adam.learning_rate = 1e-3;
  params.batch_size = 256;
  params.max_epochs = 40;
  params.patience = 0;
  const auto result = datadyn::learn::train_mlp(train, test, params);
  CHECK(result.history.back().test_loss < result.history.front().test_loss);

  double net = 0.0;
  for (std::size_t t = 2; t < frames.size(); ++t) {
    const auto m = [&](std::size_t k) {
      return downsample_downscale(frames[k], grid.target_nx(), grid.target_ny(), 2);
    };
    const auto up =
        regressor_upscale(m(t - 2), m(t - 1), m(t), grid, options, [&](const Eigen::MatrixXf& x) {
          return datadyn::learn::predict(result.network, result.input, result.output, x);
        });
    net += (up - frames[t]).rowwise().norm().mean();
  }
  net /= static_cast<double>(frames.size() - 2);
  const double bilinear = bilinear_error(frames, grid);
  INFO("network " << net << " m, bilinear " << bilinear << " m per particle");
  MESSAGE("network " << net << " m, bilinear " << bilinear << " m per particle");
  CHECK(net < bilinear);
}
