#include "elastic/rotation_extraction.hpp"

#include <cmath>

#include "core/polar_decomposition.hpp"

namespace datadyn::elastic {

namespace {

/// Solves H x = r for a symmetric 3 by 3 H if it is positive definite (by its leading minors).
bool solve_positive_definite(const Eigen::Matrix3d& H, const Eigen::Vector3d& r,
                             Eigen::Vector3d& x) {
  const double m1 = H(0, 0);
  const double m2 = H(0, 0) * H(1, 1) - H(0, 1) * H(0, 1);
  // Cofactors of the symmetric matrix.
  const double c00 = H(1, 1) * H(2, 2) - H(1, 2) * H(1, 2);
  const double c01 = H(0, 2) * H(1, 2) - H(0, 1) * H(2, 2);
  const double c02 = H(0, 1) * H(1, 2) - H(0, 2) * H(1, 1);
  const double det = H(0, 0) * c00 + H(0, 1) * c01 + H(0, 2) * c02;
  const double scale = H.cwiseAbs().maxCoeff();
  // Positive definite with a margin: a nearly singular H means a degenerate A (rank <= 1) or a
  // saddle, where the SVD is the safe answer.
  if (!(m1 > 1e-8 * scale && m2 > 1e-8 * scale * scale && det > 1e-8 * scale * scale * scale))
    return false;
  const double c11 = H(0, 0) * H(2, 2) - H(0, 2) * H(0, 2);
  const double c12 = H(0, 1) * H(0, 2) - H(0, 0) * H(1, 2);
  const double c22 = H(0, 0) * H(1, 1) - H(0, 1) * H(0, 1);
  const double inv = 1.0 / det;
  x(0) = inv * (c00 * r(0) + c01 * r(1) + c02 * r(2));
  x(1) = inv * (c01 * r(0) + c11 * r(1) + c12 * r(2));
  x(2) = inv * (c02 * r(0) + c12 * r(1) + c22 * r(2));
  return true;
}

}  // namespace

RotationExtraction rotation_warm_started(const Eigen::Matrix3d& A, Eigen::Quaterniond& q,
                                         double tolerance, int max_iterations) {
  RotationExtraction result;
  double previous_step = 1.0;
  for (int it = 0; it < max_iterations; ++it) {
    const Eigen::Matrix3d R = q.toRotationMatrix();
    const Eigen::Matrix3d B = R.transpose() * A;
    const Eigen::Vector3d b(0.5 * (B(2, 1) - B(1, 2)), 0.5 * (B(0, 2) - B(2, 0)),
                            0.5 * (B(1, 0) - B(0, 1)));
    Eigen::Matrix3d H = -0.5 * (B + B.transpose());
    H.diagonal().array() -= H.trace();  // tr(S) I - S with S = sym(B)
    Eigen::Vector3d delta;
    if (!solve_positive_definite(H, 2.0 * b, delta)) break;
    const double step = delta.norm();
    result.iterations = it + 1;
    if (!std::isfinite(step)) break;
    if (step == 0.0) return result;
    // Far from the answer the linearisation overshoots: a damped step of at most 0.5 rad along
    // the Newton direction (H positive definite makes it an ascent direction of tr(RᵀA)).
    if (step > 0.5) delta *= 0.5 / step;
    // Rotation by ~δ (second order accurate; exact at the fixed point δ = 0).
    q = q * Eigen::Quaterniond(1.0, 0.5 * delta.x(), 0.5 * delta.y(), 0.5 * delta.z());
    q.normalize();
    // Quadratic convergence: the error left after a step of size δ is about δ², so a step below
    // sqrt(tolerance) needs no further check.
    if (step * step < tolerance) return result;
    // Converged to rounding: the step no longer shrinks quadratically but is tiny (an
    // ill-conditioned H amplifies the rounding of b).
    if (step < 1e-9 && step > 0.25 * previous_step) return result;
    previous_step = step;
  }
  // The SVD: exact, and robust for inverted and rank-deficient A.
  result.used_svd = true;
  const PolarDecomposition pd = polar_decomposition(A);
  Eigen::Quaterniond svd_q(pd.R);
  svd_q.normalize();
  // Keep the hemisphere of the warm start so that q changes continuously.
  if (svd_q.dot(q) < 0.0) svd_q.coeffs() = -svd_q.coeffs();
  q = svd_q;
  return result;
}

}  // namespace datadyn::elastic
