#pragma once
/// @file
/// Stable neo-Hookean elasticity (Smith, de Goes and Kim 2018, "Stable Neo-Hookean Flesh
/// Simulation", ACM TOG 37(2), eq. 13 without the log(I_C + 1) term):
///   Ψ(F) = μ/2 (I_C - 3) + λ'/2 (J - α)^2 - μ²/(2λ'),  I_C = ||F||_F^2, J = det F,
///   α = 1 + μ/λ' (the constant makes Ψ(I) = 0),
/// with λ' = λ + μ so that small strains give linear elasticity with Lamé μ, λ (section 3.4).
/// Defined for inverted elements (no log J), zero stress at F = I.

#include <Eigen/Core>

namespace datadyn::flesh {

/// Lamé parameters (Pa) from Young's modulus E (Pa, > 0) and Poisson's ratio ν ([0, 0.5)).
struct Lame {
  double mu = 0.0, lambda = 0.0;
};
Lame lame_parameters(double youngs_modulus, double poisson_ratio);

/// Energy density (J/m^3), first Piola-Kirchhoff stress P = ∂Ψ/∂F (Pa) and, optionally, the
/// 9 by 9 Hessian ∂²Ψ/∂vec(F)² (column-major vec) projected to positive semi-definite
/// (eigenvalues clamped at 0, Teran et al. 2005) so that Newton steps descend.
struct NeoHookeanDensity {
  double psi = 0.0;
  Eigen::Matrix3d P = Eigen::Matrix3d::Zero();
  Eigen::Matrix<double, 9, 9> H = Eigen::Matrix<double, 9, 9>::Zero();
};
/// @param F deformation gradient (dimensionless); @param lame μ, λ (Pa);
/// @param hessian whether to fill H (projected) - set `project` false for the exact Hessian.
NeoHookeanDensity neo_hookean_density(const Eigen::Matrix3d& F, const Lame& lame, bool hessian,
                                      bool project = true);

}  // namespace datadyn::flesh
