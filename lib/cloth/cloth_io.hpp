#pragma once
/// @file
/// The cloth-train pipeline's glue (docs/tools/cloth-train.md): its config, its caches and model
/// file, and the four subcommands. Numerics live in cloth/*.hpp and learn/*.hpp.
///
///   simulate  config -> target.h5    one sequence per run (variations over mass, k, time step)
///   train     target.h5 -> model.h5  /model: layers, normalisation, DSDS factor, loss history
///   upscale   model.h5 -> cloth.h5   miniature simulated (or read) and upscaled per frame
///   evaluate  target.h5 + model.h5(s) -> <prefix>.json, <prefix>.md, <prefix>.loss.svg

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/tool.hpp"
#include "cloth/cloth_params.hpp"
#include "cloth/training_domain.hpp"
#include "cloth/upscale.hpp"
#include "learn/trainer.hpp"

namespace datadyn::cloth {

/// The runs of `simulate`: every combination of the listed values (empty: the cloth's own).
/// A spring constant scales k_shear and k_bending by the same factor as k_structural.
struct RunVariations {
  std::vector<double> mass;                          ///< kg per particle
  std::vector<double> k_structural;                  ///< N/m
  std::vector<double> time_step;                     ///< s
  std::vector<std::array<double, 3>> wind_velocity;  ///< m/s (fig. 15: wind directions)
};

struct ClothConfig {
  std::string scene = "curtain";  ///< curtain | flag | collision: defaults of `cloth`
  ClothParams cloth;
  RunVariations runs;
  int dsds_factor = 2;              ///< 2, 3 or 4
  bool dsds_factor_given = false;   ///< set in the config or a --set (not the default)
  bool simulate_miniature = false;  ///< simulate writes the miniature of each run instead
  PatchOptions features;            ///< local / residual (beyond the paper)
  learn::TrainParams train;
  /// train: the miniature frames of the training pairs: "dsds" (the paper: DSDS of the target) or
  /// "simulated" (the miniature simulated with scaled forces, as upscale runs it; the network
  /// then learns where the miniature's motion departs from the target's and upscale uses it as a
  /// corrector of the miniature before bicubic upsampling, see correct_miniature)
  std::string train_miniature = "dsds";
  /// train.max_departure (target metres, >= 0; 0 = off), with train_miniature "simulated": a
  /// run's pairs end before the first frame at which its simulated miniature, scaled to the
  /// target, lies farther than this from the target's DSDS on average (at least 3 frames are
  /// kept). Past that the miniature has gone its own way (a chaotic fold or slide), a patch
  /// cannot tell the correction, and those pairs set the output's scale: the corrector was
  /// then millimetres off where it had nothing to correct (the collision scene's first frames).
  double max_departure = 0.0;
  double test_fraction = 0.2;  ///< share of sequences held out for the test loss (sec. 5)
  bool resume = false;  ///< train: go on from <output without .h5>.checkpoint.h5 if it exists
  std::string upscale_method = "network";  ///< network | bilinear | biquadratic | bicubic
  /// upscale, evaluate: move the upscaled particles inside the sphere or below the ground to its
  /// surface plus the margin (false: the method's output as it is, as in the paper)
  bool upscale_colliders = true;
  /// upscale, evaluate: put the upscaled particles the target pins back on their pins (false: the
  /// method's output as it is, as in the paper)
  bool upscale_pins = true;
  /// upscale, evaluate: for a miniature simulated with self-collision, apply a corrector's
  /// correction in steps with the miniature's self-collision (false: in one go)
  bool upscale_self_collision = true;
  int timing_frames = 30;  ///< evaluate: frames of the target simulation timed per sequence
};

/// Reads every key of the cloth-train config (one file serves all subcommands).
void read_cloth_config(app::ConfigReader& reader, ClothConfig& config);
/// Reads the `cloth` block (also used to restore a sequence's parameters from its cache).
void read_cloth_params(app::ConfigReader& reader, ClothParams& params);

/// The target parameters of every run, variations expanded (mass outermost, time step innermost).
std::vector<ClothParams> expand_runs(const ClothConfig& config);

/// A trained upscaler as stored under /model.
struct UpscaleModel {
  learn::Mlp<float> network;
  learn::Standardizer input, output;
  int factor = 2;
  PatchOptions options;
  std::string miniature = "dsds";  ///< the training pairs' miniature: dsds | simulated
  std::vector<std::string> train_sequences, test_sequences;
  std::vector<learn::EpochReport> history;
  int best_epoch = 0;
  /// What its training runs spanned (/model/domain); none in models written before it was kept.
  std::optional<TrainingDomain> domain;
};
/// The model under /model of `path`, checked as it is read: every attribute train writes (IoError
/// naming file@attribute when missing or not a value train writes), the sizes against the stored
/// layers' shapes before anything is allocated, every weight and statistic finite.
UpscaleModel read_model(const std::filesystem::path& path);

void run_simulate(app::Context& ctx, const ClothConfig& config);
void run_train(app::Context& ctx, const ClothConfig& config);
/// `method` overrides config.upscale_method when not empty.
void run_upscale(app::Context& ctx, const ClothConfig& config, const std::string& method);
void run_evaluate(app::Context& ctx, const ClothConfig& config);

}  // namespace datadyn::cloth
