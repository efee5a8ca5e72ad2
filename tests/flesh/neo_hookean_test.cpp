// The stable neo-Hookean density against finite differences, its invariants and its small-strain
// limit, and the Newton solver against projective dynamics where the two energies agree.

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "flesh/flesh_simulation.hpp"
#include "flesh/neo_hookean.hpp"

using namespace datadyn;
using namespace datadyn::flesh;

namespace {

Eigen::Matrix3d random_deformation(std::mt19937& rng, double spread) {
  std::uniform_real_distribution<double> u(-spread, spread);
  Eigen::Matrix3d F = Eigen::Matrix3d::Identity();
  for (int i = 0; i < 9; ++i) F(i % 3, i / 3) += u(rng);
  return F;
}

}  // namespace

TEST_CASE("neo-Hookean stress and Hessian equal central differences of the energy") {
  // Central differences with h = 1e-6 have truncation error ~h^2 |Ψ'''| and rounding ~1e-16
  // |Ψ|/h: 1e-6 relative to the largest entry covers both for these moduli (Pa ~ 1e4-1e5).
  const Lame lame = lame_parameters(5e4, 0.4);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::Matrix3d F = random_deformation(rng, 0.4);
    if (trial == 19) F.col(0) *= -1.0;  // inverted: still smooth, no log J
    INFO("trial " << trial << ", det F = " << F.determinant());
    const auto d = neo_hookean_density(F, lame, true, false);
    const double h = 1e-6;
    for (int k = 0; k < 9; ++k) {
      Eigen::Matrix3d Fp = F, Fm = F;
      Fp(k % 3, k / 3) += h;
      Fm(k % 3, k / 3) -= h;
      const auto dp = neo_hookean_density(Fp, lame, false),
                 dm = neo_hookean_density(Fm, lame, false);
      const double fd = (dp.psi - dm.psi) / (2 * h);
      CHECK(fd ==
            doctest::Approx(d.P(k % 3, k / 3)).epsilon(1e-6).scale(d.P.cwiseAbs().maxCoeff()));
      const Eigen::Matrix3d dP = (dp.P - dm.P) / (2 * h);
      for (int l = 0; l < 9; ++l)
        CHECK(dP(l % 3, l / 3) ==
              doctest::Approx(d.H(l, k)).epsilon(1e-6).scale(d.H.cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE(
    "neo-Hookean energy is zero at rest, rotation invariant, and linear elastic for small strain") {
  const Lame lame = lame_parameters(5e4, 0.3);
  const auto rest = neo_hookean_density(Eigen::Matrix3d::Identity(), lame, true);
  CHECK(std::abs(rest.psi) < 1e-12 * lame.mu);
  CHECK(rest.P.cwiseAbs().maxCoeff() < 1e-9);
  std::mt19937 rng(3);
  const Eigen::Matrix3d F = random_deformation(rng, 0.3);
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(1.1, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
  const auto a = neo_hookean_density(F, lame, false), b = neo_hookean_density(R * F, lame, false);
  CHECK(b.psi == doctest::Approx(a.psi).epsilon(1e-12));
  CHECK((b.P - R * a.P).cwiseAbs().maxCoeff() <
        1e-9 * a.P.cwiseAbs().maxCoeff());  // P(RF) = R P(F)
  // P(I + εG) = ε (μ (G + G^T) + λ tr(G) I) + O(ε²): with ε = 1e-6 the remainder is 1e-6 of it.
  const Eigen::Matrix3d G = random_deformation(rng, 1.0) - Eigen::Matrix3d::Identity();
  const double eps = 1e-6;
  const Eigen::Matrix3d lin =
      eps * (lame.mu * (G + G.transpose()) + lame.lambda * G.trace() * Eigen::Matrix3d::Identity());
  const auto s = neo_hookean_density(Eigen::Matrix3d::Identity() + eps * G, lame, false);
  CHECK((s.P - lin).cwiseAbs().maxCoeff() < 1e-5 * lin.cwiseAbs().maxCoeff());
}

TEST_CASE("the projected neo-Hookean Hessian keeps the exact eigenvectors, negatives clamped") {
  // Projection = the exact Hessian's spectrum with negative eigenvalues set to 0 (Teran et al.
  // 2005); at rest the rotations are zero modes, so even small strains give slightly negative
  // eigenvalues. 1e-9 relative: two 9 by 9 symmetric eigen-decompositions.
  const Lame lame = lame_parameters(5e4, 0.45);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::Matrix3d F = random_deformation(rng, trial < 10 ? 0.01 : 0.8);
    const auto p = neo_hookean_density(F, lame, true, true);
    const auto e = neo_hookean_density(F, lame, true, false);
    using Eig = Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>>;
    const Eigen::Matrix<double, 9, 1> lp = Eig(p.H).eigenvalues();
    const Eigen::Matrix<double, 9, 1> le = Eig(e.H).eigenvalues().cwiseMax(0.0);
    INFO("trial " << trial << ": exact " << Eig(e.H).eigenvalues().transpose());
    CHECK((lp - le).cwiseAbs().maxCoeff() < 1e-9 * le.maxCoeff());
    if (Eig(e.H).eigenvalues().minCoeff() >= 0)
      CHECK((p.H - e.H).cwiseAbs().maxCoeff() < 1e-9 * e.H.cwiseAbs().maxCoeff());
  }
}

TEST_CASE(
    "Newton on neo-Hookean and projective dynamics on corotated agree on a small sag at nu = 0") {
  // With ν = 0 both energies linearise to 2 μ ε (λ = 0), so the sag of the quasistatic
  // equilibrium under weak gravity agrees to first order; 1 % covers the second-order terms at
  // ~0.1 % strain and the projective iterations' remaining error.
  FleshSimulationParams p;
  p.layers = 6;
  p.segments = 8;
  p.rings = 3;
  p.frames = 3;
  p.motion.amplitude = 0.0;
  p.poisson_ratio = 0.0;
  p.youngs_modulus = 2e5;
  p.gravity = Eigen::Vector3d(0.0, 0.0, -10.0);  // sideways: the body bends off its axis
  p.quasistatic_iterations = 400;
  p.iterations = 40;
  const auto corotated = simulate_flesh(p);
  p.model = ElasticModel::NeoHookean;
  p.quasistatic_iterations = 30;
  const auto neo = simulate_flesh(p);
  const Points3 sag_c = corotated.quasistatic[2] - corotated.skinned[2];
  const Points3 sag_n = neo.quasistatic[2] - neo.skinned[2];
  MESSAGE("max sag " << sag_c.cwiseAbs().maxCoeff() << " m (corotated), "
                     << sag_n.cwiseAbs().maxCoeff() << " m (neo-Hookean)");
  CHECK(sag_n.cwiseAbs().maxCoeff() > 1e-4);
  CHECK((sag_n - sag_c).cwiseAbs().maxCoeff() < 0.01 * sag_c.cwiseAbs().maxCoeff());
  // Both at rest in their own equilibrium: the dynamic state stays there.
  CHECK((neo.dynamic[2] - neo.quasistatic[2]).cwiseAbs().maxCoeff() <
        1e-3 * sag_n.cwiseAbs().maxCoeff());
}
