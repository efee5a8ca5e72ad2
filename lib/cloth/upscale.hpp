#pragma once
/// @file
/// From a miniature frame back to the target grid (Lee, Oh, Lee 2019, sec. 3.2 and 5.4): by
/// interpolation over the grid parameters (bilinear, biquadratic, bicubic; table 6), or patch by
/// patch with a regressor such as the upscaling network: the input of a patch is its 2 x 2
/// miniature particles over frames t-2, t-1, t (eq. 2, 36 numbers), the output the (f+1) x (f+1)
/// target particles it covers at t (eq. 3, 27 numbers for f = 2). Patches overlap on their
/// borders; a target particle covered by several patches gets the mean of their predictions.
///
/// Two options beyond the paper (off by default): `local` expresses a patch's inputs and outputs
/// relative to the centroid of its 4 miniature particles at t (translation invariance);
/// `residual` makes the output the difference to bicubic upsampling.
///
/// Every function takes miniature positions in miniature metres and returns target metres
/// (miniature positions times f).

#include <functional>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::cloth {

enum class Interpolation { Bilinear, Biquadratic, Bicubic };

/// A miniature grid: mx particles per row, my rows, DSDS factor f. The target grid is
/// (f (mx - 1) + 1) by (f (my - 1) + 1).
struct MiniatureGrid {
  int mx = 2, my = 2;
  int factor = 2;
  int target_nx() const { return factor * (mx - 1) + 1; }
  int target_ny() const { return factor * (my - 1) + 1; }
  int patch_count() const { return (mx - 1) * (my - 1); }
  int output_size() const { return 3 * (factor + 1) * (factor + 1); }
};

/// Tensor-product interpolation of the miniature grid (scaled by f) at the target grid's
/// parameters: piecewise linear, piecewise quadratic Lagrange (3 nearest nodes) or Catmull-Rom
/// (linear extrapolation at the borders). All three pass through the miniature particles and
/// reproduce affine maps, so a flat cloth at rest is upscaled exactly.
/// @param mini #mx*my by 3; returns #target_nx*target_ny by 3
Points3 interpolate_upscale(const Eigen::Ref<const Points3>& mini, const MiniatureGrid& grid,
                            Interpolation method);

struct PatchOptions {
  bool local = false;     ///< inputs/outputs relative to the patch centroid at t
  bool residual = false;  ///< outputs relative to bicubic upsampling
  /// Frames of positions in the input, the latest last: t (1), t-1 and t (2), t-2 to t (3,
  /// eq. 2). Table 3 compares 1, 1 with velocities, and 3.
  int history = 3;
  /// Adds each node's motion over the last frame, f (x'_t - x'_t-1) in target metres a frame
  /// (table 3's "+ velocities"; zero at the first frame, which has none before it).
  bool velocities = false;
};

/// Numbers in a patch's input: 12 a frame of positions, 12 more with velocities (36 by default).
int patch_input_size(const PatchOptions& options);

/// Network inputs of every patch: #patch_input_size(options) by #patches (row-major over
/// patches), target metres: positions of frames t-2, t-1, t as options.history keeps, then the
/// velocities if asked for.
Eigen::MatrixXf patch_inputs(const Eigen::Ref<const Points3>& mini_t2,
                             const Eigen::Ref<const Points3>& mini_t1,
                             const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                             const PatchOptions& options);

/// Training outputs of every patch from the target frame at t: #3(f+1)^2 by #patches.
Eigen::MatrixXf patch_outputs(const Eigen::Ref<const Points3>& target,
                              const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                              const PatchOptions& options);

/// The target frame from per-patch outputs (#3(f+1)^2 by #patches), shared particles averaged.
Points3 assemble_patches(const Eigen::MatrixXf& outputs, const Eigen::Ref<const Points3>& mini_t,
                         const MiniatureGrid& grid, const PatchOptions& options);

/// Maps a batch of patch inputs (#patch_input_size by P) to outputs (#3(f+1)^2 by P), e.g. a
/// trained network.
using PatchRegressor = std::function<Eigen::MatrixXf(const Eigen::MatrixXf&)>;

/// patch_inputs -> regressor -> assemble_patches for one frame.
Points3 regressor_upscale(const Eigen::Ref<const Points3>& mini_t2,
                          const Eigen::Ref<const Points3>& mini_t1,
                          const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                          const PatchOptions& options, const PatchRegressor& regressor);

/// Bending roughness of a grid frame (nx by ny particles, row by row): the mean length of the
/// second difference along rows and columns, m. Noise from patch to patch makes it large; a
/// smooth surface has that of its curvature. 0 for grids too small to have one.
double grid_roughness(const Eigen::Ref<const Points3>& x, int nx, int ny);

/// A miniature frame corrected by a regressor trained on pairs from the simulated miniature
/// (`train.miniature: simulated`): its prediction at the miniature's own particles (the patch
/// corners, averaged over the patches that share them), divided by f. Such a regressor learns
/// where the miniature's motion departs from its target's, which is low-frequency; its patch
/// interiors carry noise at the scale of its error (the departure is not a function of one
/// patch alone), so only the corners are kept and the corrected miniature is interpolated.
/// @returns #mx*my by 3, miniature metres
Points3 correct_miniature(const Eigen::Ref<const Points3>& mini_t2,
                          const Eigen::Ref<const Points3>& mini_t1,
                          const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                          const PatchOptions& options, const PatchRegressor& regressor);

}  // namespace datadyn::cloth
