#pragma once
/// @file
/// Fitting per-vertex spring stiffness and damping to dynamic ground truth (Jin et al. 2022,
/// section 6, eq. 14; the frame rejection of section 7, fig. 6).

#include <cstdint>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "core/types.hpp"
#include "flesh/spring_integrator.hpp"

namespace datadyn::flesh {

/// Bounds and optimiser settings of fit_springs.
struct SpringFitParams {
  double ks_min = 1.0;     ///< 1/s^2, > 0
  double ks_max = 1.0e4;   ///< 1/s^2, > ks_min
  double kd_min = 1.0e-2;  ///< 1/s, > 0
  double kd_max = 1.0e3;   ///< 1/s, > kd_min
  int population = 16;     ///< genetic algorithm: individuals per generation, >= 2
  int generations = 4;     ///< genetic algorithm generations (0: start at the box centre)
  std::uint64_t seed = 1;  ///< seeds each vertex's generator as (seed, vertex)
  int iterations = 60;     ///< gradient steps per vertex, >= 0
  /// Stop when a step lowers the loss by less than this fraction of it.
  double relative_tolerance = 1e-15;
  /// Frame rejection: a frame whose error (summed over vertices) after a first fit exceeds
  /// median + reject_mads × 1.4826 MAD of all frames, and 10 × the median, is left out of the
  /// loss, then the fit is refined. 0 disables it.
  double reject_mads = 25.0;
  std::size_t grain = 64;  ///< vertices per parallel chunk (fixed for determinism)
  /// Vertex groups that share one (ks, kd), fitted on the region's pooled loss (the sum of its
  /// vertices' eq. 14 losses, so gradients and Gauss-Newton matrices add). Section 7 / fig. 7:
  /// regions that move rigidly end up stiff and overdamped and can share one parameter set.
  /// @pre each region non-empty, vertex ids in [0, N), no vertex in two regions.
  std::vector<std::vector<Eigen::Index>> shared_regions;
};

/// One training sequence: targets (quasistatic) and ground truth (dynamic), same vertices.
struct FitSequence {
  std::string name;
  const std::vector<Points3>* target = nullptr;  ///< F frames of #N by 3 (m)
  const std::vector<Points3>* truth = nullptr;   ///< F frames of #N by 3 (m)
  double dt = 1.0 / 30.0;                        ///< frame interval (s)
};

struct SequenceFitReport {
  std::string name;
  double loss_target = 0.0;  ///< Σ_n Σ_i ||x̂ - x_D||^2 over frames n >= 1 (m^2): target alone
  double loss_fitted = 0.0;  ///< the same with the fitted springs (m^2), all frames
  double rms_target = 0.0;   ///< sqrt(loss / (frames × vertices)) (m)
  double rms_fitted = 0.0;   ///< (m)
  std::vector<int> rejected_frames;  ///< 0-based frame indices left out of the loss
};

struct SpringFitResult {
  Springs springs;       ///< #N fitted ks, kd (equal within each shared region)
  Eigen::VectorXd loss;  ///< #N final per-vertex loss (m^2), at the shared values in a region
  std::vector<SequenceFitReport> sequences;
};

/// Vertices that behave rigidly: in every frame of every sequence the ground truth is within
/// `tolerance` (m, >= 0) of the target, so the pose layer alone explains them (no secondary
/// motion) and their springs are undetermined beyond "stiff enough". Ascending ids.
/// @pre sequences as for fit_springs.
std::vector<Eigen::Index> rigid_vertices(const std::vector<FitSequence>& sequences,
                                         double tolerance);

/// `progress` is called with (vertices done, 2 N or N) after each chunk, from one thread at a
/// time (any worker thread).
/// Per vertex and in parallel: genetic-algorithm initial guesses (log-uniform in the bounds,
/// elitist, blend crossover, Gaussian mutation in log space), then projected gradient descent
/// in (ln ks, ln kd) preconditioned by the Gauss-Newton matrix of the exact forward-mode
/// sensitivities (Levenberg-Marquardt damping, Armijo acceptance), clamped to the bounds. The
/// loss of eq. 14 is summed over the sequences. With reject_mads > 0 the frames that disagree
/// with the rest are then rejected and the fit refined from the result. Each shared region is
/// fitted the same way as one unknown (ks, kd) on its pooled loss, its vertices evaluated in
/// parallel and summed in a fixed order.
/// Deterministic for any thread count.
/// @pre all sequences have the same vertex count N and at least 2 frames.
SpringFitResult fit_springs(const std::vector<FitSequence>& sequences,
                            const SpringFitParams& params, const ProgressCallback& progress = {});

}  // namespace datadyn::flesh
