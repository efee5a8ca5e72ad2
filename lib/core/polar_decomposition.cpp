#include "core/polar_decomposition.hpp"

#include <Eigen/LU>
#include <Eigen/SVD>

namespace datadyn {

PolarDecomposition polar_decomposition(const Eigen::Matrix3d& A) {
  // Square fixed-size input: JacobiSVD runs no QR preconditioner and does not allocate. U and V
  // are products of Jacobi rotations (and sign flips), so they are orthogonal to rounding even
  // for rank-deficient A. Singular values come sorted in decreasing order.
  const Eigen::JacobiSVD<Eigen::Matrix3d, Eigen::NoQRPreconditioner> svd(
      A, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d U = svd.matrixU();
  const Eigen::Matrix3d& V = svd.matrixV();
  Eigen::Vector3d sigma = svd.singularValues();
  if (U.determinant() * V.determinant() < 0.0) {
    // U V^T is a reflection: flip the singular vector of the smallest singular value. Then
    // A = (U D) (D Σ) V^T with D = diag(1, 1, -1), and U D V^T is a rotation.
    U.col(2) = -U.col(2);
    sigma(2) = -sigma(2);
  }
  PolarDecomposition result;
  result.R.noalias() = U * V.transpose();
  result.S.noalias() = V * sigma.asDiagonal() * V.transpose();
  // Exactly symmetric (the product above is symmetric only to rounding).
  result.S = 0.5 * (result.S + result.S.transpose()).eval();
  return result;
}

}  // namespace datadyn
