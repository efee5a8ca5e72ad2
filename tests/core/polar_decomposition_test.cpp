#include "core/polar_decomposition.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

namespace datadyn {
namespace {

// Tolerances. The Jacobi SVD is backward stable: U, V are orthogonal and U Σ V^T = A to a few
// ulps (times a small constant for 3 by 3). 1e-12 leaves a factor of ~100-1000 over the
// expected ~1e-15 without hiding an O(1) error (a wrong sign, a missing flip).
constexpr double kTol = 1e-12;

double max_abs(const Eigen::Matrix3d& m) {
  return m.cwiseAbs().maxCoeff();
}

Eigen::Matrix3d random_matrix(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix3d m;
  for (int i = 0; i < 9; ++i) m(i) = u(rng);
  return m;
}

Eigen::Matrix3d random_rotation(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::Quaterniond q(n(rng), n(rng), n(rng), n(rng));
  q.normalize();
  return q.toRotationMatrix();
}

// The invariants every result must satisfy, whatever A is.
void check_polar_invariants(const Eigen::Matrix3d& A, const PolarDecomposition& p) {
  INFO("A =\n" << A);
  INFO("R =\n" << p.R << "\nS =\n" << p.S);
  const double scale = std::max(A.norm(), 1e-300);  // relative to ||A||_F; absolute for A = 0
  CHECK(max_abs(p.R.transpose() * p.R - Eigen::Matrix3d::Identity()) <= kTol);
  CHECK(p.R.determinant() == doctest::Approx(1.0).epsilon(kTol));
  CHECK(max_abs(p.S - p.S.transpose()) <= kTol * scale);
  CHECK(max_abs(p.R * p.S - A) <= kTol * scale);
}

TEST_CASE("polar_decomposition: 1000 random matrices satisfy A = R S with R a rotation") {
  std::mt19937_64 rng(20240611);
  int inverted = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const Eigen::Matrix3d A = random_matrix(rng);
    INFO("trial " << trial);
    const PolarDecomposition p = polar_decomposition(A);
    check_polar_invariants(A, p);
    // S's eigenvalues are the singular values of A, with the smallest negated iff det A < 0.
    const Eigen::Vector3d sigma = A.jacobiSvd().singularValues();  // decreasing
    const Eigen::Vector3d lambda =
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(p.S).eigenvalues();
    Eigen::Vector3d expected(A.determinant() < 0 ? -sigma(2) : sigma(2), sigma(1), sigma(0));
    std::sort(expected.data(), expected.data() + 3);
    // Symmetric eigenvalues are perturbed by at most ||δS||_2, a few ulps of ||A||.
    CHECK((lambda - expected).cwiseAbs().maxCoeff() <= kTol * A.norm());
    inverted += A.determinant() < 0;
  }
  // About half the uniform random matrices are inverted; make sure the flip path was exercised.
  CHECK(inverted > 300);
  CHECK(inverted < 700);
}

TEST_CASE("polar_decomposition: recovers the rotation of Q P with P symmetric positive definite") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> stretch(0.1, 10.0);
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::Matrix3d Q = random_rotation(rng);
    const Eigen::Matrix3d W = random_rotation(rng);
    const Eigen::Vector3d s(stretch(rng), stretch(rng), stretch(rng));
    const Eigen::Matrix3d P = W * s.asDiagonal() * W.transpose();
    const Eigen::Matrix3d A = Q * P;
    INFO("trial " << trial << " stretches " << s.transpose());
    const PolarDecomposition p = polar_decomposition(A);
    check_polar_invariants(A, p);
    // The polar factor's condition number is about 2 ||A|| / (σ2 + σ3) <= 2 * 17 / 0.2 = 170
    // for stretches in [0.1, 10] (||A||_F <= 10 sqrt 3), so an ulp-level backward error of 1e-15
    // relative becomes at most ~1e-13 in R and P; 1e-11 is a safe bound.
    CHECK(max_abs(p.R - Q) <= 1e-11);
    CHECK(max_abs(p.S - P) <= 1e-11 * P.norm());
  }
}

TEST_CASE("polar_decomposition: rotations and rigid invariance") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Matrix3d Q = random_rotation(rng);
    INFO("trial " << trial);
    // A rotation is its own polar factor with S = I.
    const PolarDecomposition p = polar_decomposition(Q);
    CHECK(max_abs(p.R - Q) <= kTol);
    CHECK(max_abs(p.S - Eigen::Matrix3d::Identity()) <= kTol);
    // Left rotation invariance for det A > 0: polar(Q A) = (Q R, S).
    Eigen::Matrix3d A = random_matrix(rng);
    if (A.determinant() < 0) A.col(0) = -A.col(0);
    const PolarDecomposition pa = polar_decomposition(A);
    const PolarDecomposition pqa = polar_decomposition(Q * A);
    // Conditioning as above, but σ3 of a random matrix can be small; bound the sensitivity by
    // 2 ||A|| / (σ2 + σ3) explicitly.
    const Eigen::Vector3d sigma = A.jacobiSvd().singularValues();
    const double cond = 2.0 * sigma(0) / (sigma(1) + sigma(2));
    INFO("polar condition " << cond);
    CHECK(max_abs(pqa.R - Q * pa.R) <= 1e-14 * cond * 100);
    CHECK(max_abs(pqa.S - pa.S) <= 1e-14 * cond * 100 * A.norm());
  }
}

TEST_CASE("polar_decomposition: rescaling by 1e-6 and 1e6 scales S and keeps R") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::Matrix3d A = random_matrix(rng);
    const PolarDecomposition p = polar_decomposition(A);
    for (double s : {1e-6, 1e6}) {
      INFO("trial " << trial << " scale " << s);
      const PolarDecomposition ps = polar_decomposition(s * A);
      check_polar_invariants(s * A, ps);
      // The SVD of s A is s times that of A up to rounding; R is unique only if σ3 > 0 (it is,
      // almost surely, for a random A), with sensitivity 2 ||A|| / (σ2 + σ3) as above.
      const Eigen::Vector3d sigma = A.jacobiSvd().singularValues();
      const double cond = 2.0 * sigma(0) / (sigma(1) + sigma(2));
      CHECK(max_abs(ps.R - p.R) <= 1e-14 * cond * 100);
      CHECK(max_abs(ps.S / s - p.S) <= 1e-14 * cond * 100 * A.norm());
    }
  }
}

TEST_CASE("polar_decomposition: inverted matrices give a proper rotation") {
  SUBCASE("minus identity") {
    const Eigen::Matrix3d A = -Eigen::Matrix3d::Identity();
    const PolarDecomposition p = polar_decomposition(A);
    check_polar_invariants(A, p);
    // S has eigenvalues {-1, 1, 1}: one negative eigenvalue, as documented.
    const Eigen::Vector3d lambda =
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(p.S).eigenvalues();
    CHECK(lambda(0) == doctest::Approx(-1.0).epsilon(kTol));
    CHECK(lambda(1) == doctest::Approx(1.0).epsilon(kTol));
    CHECK(lambda(2) == doctest::Approx(1.0).epsilon(kTol));
  }
  SUBCASE("reflection times rotation times stretch") {
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 100; ++trial) {
      const Eigen::Matrix3d Q = random_rotation(rng);
      const Eigen::Matrix3d A =
          Q * Eigen::Vector3d(3.0, 2.0, -0.5).asDiagonal() * random_rotation(rng);
      INFO("trial " << trial);
      REQUIRE(A.determinant() < 0);
      const PolarDecomposition p = polar_decomposition(A);
      check_polar_invariants(A, p);
      const Eigen::Vector3d lambda =
          Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(p.S).eigenvalues();
      CHECK(lambda(0) == doctest::Approx(-0.5).epsilon(1e-12));
      CHECK(lambda(1) == doctest::Approx(2.0).epsilon(1e-12));
      CHECK(lambda(2) == doctest::Approx(3.0).epsilon(1e-12));
    }
  }
}

TEST_CASE("polar_decomposition: near-singular and degenerate matrices") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Matrix3d U = random_rotation(rng), V = random_rotation(rng);
    INFO("trial " << trial);
    // Singular values 1, 1e-9, 0 (rank 2, nearly rank 1), with either orientation of U V^T.
    for (double sign : {1.0, -1.0}) {
      const Eigen::Matrix3d A = U * Eigen::Vector3d(1.0, 1e-9, 0.0).asDiagonal() *
                                Eigen::Vector3d(1.0, 1.0, sign).asDiagonal() * V.transpose();
      check_polar_invariants(A, polar_decomposition(A));
    }
    // Rank 1.
    const Eigen::Vector3d u = random_matrix(rng).col(0), v = random_matrix(rng).col(1);
    const Eigen::Matrix3d rank1 = u * v.transpose();
    check_polar_invariants(rank1, polar_decomposition(rank1));
    // Rank 2 with two equal singular values (planar cluster in shape matching).
    const Eigen::Matrix3d rank2 = U * Eigen::Vector3d(2.0, 2.0, 0.0).asDiagonal() * V.transpose();
    check_polar_invariants(rank2, polar_decomposition(rank2));
  }
  SUBCASE("zero matrix: R = I, S = 0") {
    const PolarDecomposition p = polar_decomposition(Eigen::Matrix3d::Zero());
    check_polar_invariants(Eigen::Matrix3d::Zero(), p);
    CHECK(max_abs(p.R - Eigen::Matrix3d::Identity()) <= kTol);
    CHECK(max_abs(p.S) == 0.0);  // exact: Σ = 0, so S = V 0 V^T has only exact zeros
  }
}

}  // namespace
}  // namespace datadyn
