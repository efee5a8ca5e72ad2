#pragma once
/// @file
/// The database features of Chiba et al. 2011, section 4:
///   h_n(a, t)  water height of simulation n at position a along the travel direction, time t
///   H_n(a) = max_t h_n(a, t)                                                       (eq. 4)
///   D_ij = Σ_t Σ_x (V_i(x, t) − V_j(x, t))², normalised by its maximum over pairs   (eq. 5)
/// Built frame by frame so that no simulation's whole history is held in memory.

#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "wave/grid2.hpp"

namespace datadyn::wave {

struct WaveFeatures {
  Grid2Spec grid;
  double iso = 0.0;             ///< density level of the water surface
  std::size_t simulations = 0;  ///< N
  std::size_t frames = 0;       ///< F
  /// h_n(a, t): heights[(n * F + t) * nx + i] at a = grid x of column i, metres.
  std::vector<float> heights;
  Eigen::MatrixXd distance;  ///< D, N by N, normalised to [0, 1] (eq. 5)

  double height(std::size_t n, std::size_t t, double x) const;
  /// H_n(x) (eq. 4).
  double max_height(std::size_t n, double x) const;
  /// First time index at which h_n(x, t) has risen by `fraction` of its full rise above h_n(x, 0)
  /// (the wave's arrival at x); the last frame if it never does.
  std::size_t arrival_frame(std::size_t n, double x, double fraction = 0.25) const;
};

/// Accumulates the features one frame at a time: add_frame(t, V_0(t) ... V_{N−1}(t)).
class FeatureBuilder {
 public:
  FeatureBuilder(const Grid2Spec& grid, double iso, std::size_t simulations, std::size_t frames);
  /// @pre densities.size() == N, every grid on the builder's spec; frames added in order 0..F−1.
  void add_frame(std::size_t t, const std::vector<Grid2>& densities);
  /// Normalises D; call once after the last frame.
  WaveFeatures finish();

 private:
  WaveFeatures f_;
  Eigen::MatrixXd sums_;
};

}  // namespace datadyn::wave
