// The three-column LDL^T solve (two threads over the elimination tree) against Eigen's
// SimplicialLDLT solved column by column, and against the residual of the system it solves.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cloth/three_column_ldlt.hpp"

using namespace datadyn::cloth;

namespace {

/// M + L of a g by g grid whose neighbours up to two apart (the cloth's springs) are joined with
/// random positive weights: symmetric positive definite, with the cloth's sparsity pattern.
Eigen::SparseMatrix<double> grid_system(int g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> weight(0.1, 10.0);
  std::vector<Eigen::Triplet<double>> t;
  const int n = g * g;
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, weight(rng));
  auto join = [&](int i, int j) {
    const double w = weight(rng);
    t.emplace_back(i, i, w);
    t.emplace_back(j, j, w);
    t.emplace_back(i, j, -w);
    t.emplace_back(j, i, -w);
  };
  for (int r = 0; r < g; ++r)
    for (int c = 0; c < g; ++c) {
      const int i = r * g + c;
      if (c + 1 < g) join(i, i + 1);
      if (r + 1 < g) join(i, i + g);
      if (c + 1 < g && r + 1 < g) join(i, i + g + 1);
      if (c > 0 && r + 1 < g) join(i, i + g - 1);
      if (c + 2 < g) join(i, i + 2);
      if (r + 2 < g) join(i, i + 2 * g);
    }
  Eigen::SparseMatrix<double> a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

}  // namespace

TEST_CASE("three columns solved together equal SimplicialLDLT column by column") {
  for (int g : {1, 2, 7, 40}) {
    std::mt19937_64 rng(static_cast<unsigned>(g));
    const Eigen::SparseMatrix<double> a = grid_system(g, rng);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    ThreeColumns b(a.rows(), 3);
    for (Eigen::Index i = 0; i < b.size(); ++i) b.data()[i] = u(rng);
    INFO("grid " << g << " x " << g);

    ThreeColumnLdlt ours;
    REQUIRE(ours.compute(a));
    const ThreeColumns x = ours.solve(b);
    // The top and the two groups partition the rows; on the 40 x 40 grid both groups hold
    // subtrees, so the parallel path is the one compared below.
    std::vector<int> rows;
    for (int part = 0; part < 3; ++part)
      rows.insert(rows.end(), ours.schedule(part).begin(), ours.schedule(part).end());
    std::sort(rows.begin(), rows.end());
    CHECK(rows.size() == static_cast<std::size_t>(a.rows()));
    CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
    if (g == 40) {
      CHECK(!ours.schedule(1).empty());
      CHECK(!ours.schedule(2).empty());
    }

    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> eigen(a);
    REQUIRE(eigen.info() == Eigen::Success);
    Eigen::MatrixXd reference(a.rows(), 3);
    for (int c = 0; c < 3; ++c) reference.col(c) = eigen.solve(Eigen::VectorXd(b.col(c)));
    // Same factor, same operations per column in the same order: the bits should agree; 1e-14
    // relative leaves room only for rounding, not for a wrong entry or a permutation mix-up.
    const double scale = reference.cwiseAbs().maxCoeff();
    CHECK((x - reference).cwiseAbs().maxCoeff() <= 1e-14 * scale);
    // And it solves the system (condition number below 1e4 here, so 1e-10 is rounding).
    const Eigen::MatrixXd residual = a * Eigen::MatrixXd(x) - Eigen::MatrixXd(b);
    CHECK(residual.cwiseAbs().maxCoeff() <= 1e-10 * b.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("a singular matrix is reported, not solved") {
  Eigen::SparseMatrix<double> a(2, 2);  // [1 1; 1 1]
  std::vector<Eigen::Triplet<double>> t{{0, 0, 1.0}, {0, 1, 1.0}, {1, 0, 1.0}, {1, 1, 1.0}};
  a.setFromTriplets(t.begin(), t.end());
  ThreeColumnLdlt ldlt;
  CHECK_FALSE(ldlt.compute(a));
}
