#pragma once
/// @file
/// Polar decomposition of a 3 by 3 matrix, A = R S with R a proper rotation. Used by shape
/// matching to extract the rotational part of the moment matrix A_pq (Müller et al. 2005,
/// "Meshless deformations based on shape matching", eq. 6-7; Koyama et al. eq. 1-3).

#include <Eigen/Core>

namespace datadyn {

/// Result of polar_decomposition: A = R S.
struct PolarDecomposition {
  /// 3 by 3 rotation: R^T R = I and det R = +1, always (also for inverted or singular A).
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  /// 3 by 3 symmetric stretch, S = S^T, in the units of A.
  Eigen::Matrix3d S = Eigen::Matrix3d::Zero();
};

/// Polar decomposition A = R S of a 3 by 3 matrix via its singular value decomposition
/// A = U Σ V^T: R = U D V^T and S = V D Σ V^T with D = diag(1, 1, det(U V^T)), i.e. the sign of
/// the singular vector of the smallest singular value is flipped when U V^T is a reflection.
/// Allocation free (fixed-size Eigen types); a two-sided Jacobi SVD, accurate to a few ulps of
/// ||A|| in R S - A.
/// @param A 3 by 3 matrix, any units (e.g. the shape-matching moment matrix, kg m^2).
/// @pre A is finite.
/// @note For det A > 0 this is the unique polar decomposition (S symmetric positive definite) and
/// R is the rotation closest to A in the Frobenius norm. For an inverted A (det A < 0) R is still
/// a rotation (det R = +1), the closest one, and S then has exactly one negative eigenvalue
/// (minus the smallest singular value). For a singular A (rank 2, 1 or 0) R is a rotation that
/// is not unique: the columns of U that span the null space of A^T are completed to a
/// right-handed frame; for A = 0 the result is R = I, S = 0.
PolarDecomposition polar_decomposition(const Eigen::Matrix3d& A);

}  // namespace datadyn
