#pragma once
/// @file
/// Warm-started extraction of the rotation of a 3 by 3 matrix for shape matching: the rotation R
/// that maximises tr(R^T A) (the rotation of the polar decomposition A = R S, and for an inverted
/// A the closest rotation, as core/polar_decomposition), found by Newton steps on the rotation
/// group from the previous time step's rotation. A simulation changes each region's rotation
/// little per step, so two or three steps of ~100 flops replace a Jacobi SVD; far from the
/// answer (or near a degenerate A) it falls back to the SVD of core/polar_decomposition.

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace datadyn::elastic {

/// What rotation_warm_started did.
struct RotationExtraction {
  int iterations = 0;     ///< Newton steps taken
  bool used_svd = false;  ///< fell back to the SVD polar decomposition
};

/// Updates the rotation `q` so that R = q.matrix() maximises tr(R^T A), i.e. S = R^T A is
/// symmetric with (tr(S) I - S) positive semi-definite.
///
/// Newton's method on SO(3): with B = R^T A, b = axial(B - B^T) / 2 and H = tr(S) I - S
/// (S = (B + B^T) / 2), the step δ = 2 H^-1 b solves the linearised condition skew(e^{-[δ]} B) = 0
/// (for symmetric S, S[δ] + [δ]S = [(tr(S) I - S) δ]); R <- R (1, δ/2) normalised. It converges
/// quadratically near the answer (steps are limited to 0.5 rad further away), so it stops after a
/// step δ with δ² below `tolerance` (the error left is of order δ²), or when the steps stall at
/// rounding level. When H is not positive definite (R more than 90° from the answer, or A near rank
/// 1) or after `max_iterations` steps without reaching `tolerance`, the rotation is taken from
/// core/polar_decomposition (SVD) instead.
/// @param A 3 by 3 matrix (dimensionless here: the deformation gradient of a region, eq. 1).
/// @param q in: the previous rotation (warm start); out: the new one, unit length.
/// @param tolerance angle (radians) the rotation is accurate to when the iteration stops. The
///   default, 1e-10 rad, is far below anything visible and usually takes one or two steps from
///   the previous time step's rotation.
/// @param max_iterations Newton steps before the SVD fallback.
/// @pre A finite.
RotationExtraction rotation_warm_started(const Eigen::Matrix3d& A, Eigen::Quaterniond& q,
                                         double tolerance = 1e-10, int max_iterations = 8);

}  // namespace datadyn::elastic
