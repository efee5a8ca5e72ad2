#include "flesh/neo_hookean.hpp"

#include <Eigen/Dense>

#include "core/check.hpp"

namespace datadyn::flesh {

Lame lame_parameters(double E, double nu) {
  DATADYN_CHECK(E > 0 && nu >= 0 && nu < 0.5);
  return {E / (2.0 * (1.0 + nu)), E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))};
}

NeoHookeanDensity neo_hookean_density(const Eigen::Matrix3d& F, const Lame& lame, bool hessian,
                                      bool project) {
  const double mu = lame.mu, lambda = lame.lambda + lame.mu;  // λ' of Smith et al. 3.4
  const double alpha = 1.0 + mu / lambda;
  const double J = F.determinant();
  // ∂J/∂F = cof(F): columns are cross products of F's columns.
  Eigen::Matrix3d dJ;
  dJ.col(0) = F.col(1).cross(F.col(2));
  dJ.col(1) = F.col(2).cross(F.col(0));
  dJ.col(2) = F.col(0).cross(F.col(1));
  NeoHookeanDensity out;
  // Less the rest value λ'/2 (1 - α)^2 = μ^2/(2 λ'), a constant, so that Ψ(I) = 0.
  out.psi = 0.5 * mu * (F.squaredNorm() - 3.0) + 0.5 * lambda * (J - alpha) * (J - alpha) -
            0.5 * mu * mu / lambda;
  out.P = mu * F + lambda * (J - alpha) * dJ;
  if (!hessian) return out;
  // H = μ I + λ' g g^T + λ'(J - α) ∂²J/∂F², g = vec(cof F). ∂²J/∂F_{ia}∂F_{jb} is the 3x3 block
  // (a, b) = ε_{abc} [f_c]_x (a cross-product matrix of column c of F, signed).
  Eigen::Matrix<double, 9, 1> g;
  for (int a = 0; a < 3; ++a) g.segment<3>(3 * a) = dJ.col(a);
  Eigen::Matrix<double, 9, 9> H =
      mu * Eigen::Matrix<double, 9, 9>::Identity() + lambda * g * g.transpose();
  const auto hat = [](const Eigen::Vector3d& v) {
    Eigen::Matrix3d m;
    m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
    return m;
  };
  const double s = lambda * (J - alpha);
  // ∂cof_col0/∂f1 = -[f2]_x, ∂cof_col0/∂f2 = [f1]_x, and cyclically.
  const Eigen::Matrix3d h0 = hat(F.col(0)), h1 = hat(F.col(1)), h2 = hat(F.col(2));
  H.block<3, 3>(0, 3) += -s * h2;
  H.block<3, 3>(0, 6) += s * h1;
  H.block<3, 3>(3, 0) += s * h2;
  H.block<3, 3>(3, 6) += -s * h0;
  H.block<3, 3>(6, 0) += -s * h1;
  H.block<3, 3>(6, 3) += s * h0;
  if (project) {
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> eig(H);
    H = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() *
        eig.eigenvectors().transpose();
  }
  out.H = H;
  return out;
}

}  // namespace datadyn::flesh
