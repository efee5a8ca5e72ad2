// The three-column LDL^T solve (two threads over the elimination tree) against Eigen's
// SimplicialLDLT solved column by column, and against the residual of the system it solves.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "cloth/three_column_ldlt.hpp"

using namespace datadyn::cloth;

namespace {

/// M + L of a width by h grid whose neighbours up to two apart (the cloth's springs) are joined
/// with random positive weights: symmetric positive definite, with the cloth's sparsity pattern.
Eigen::SparseMatrix<double> grid_system(int width, int h, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> weight(0.1, 10.0);
  std::vector<Eigen::Triplet<double>> t;
  const int n = width * h;
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, weight(rng));
  auto join = [&](int i, int j) {
    const double w = weight(rng);
    t.emplace_back(i, i, w);
    t.emplace_back(j, j, w);
    t.emplace_back(i, j, -w);
    t.emplace_back(j, i, -w);
  };
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < width; ++c) {
      const int i = r * width + c;
      if (c + 1 < width) join(i, i + 1);
      if (r + 1 < h) join(i, i + width);
      if (c + 1 < width && r + 1 < h) join(i, i + width + 1);
      if (c > 0 && r + 1 < h) join(i, i + width - 1);
      if (c + 2 < width) join(i, i + 2);
      if (r + 2 < h) join(i, i + 2 * width);
    }
  Eigen::SparseMatrix<double> a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

}  // namespace

TEST_CASE("three columns solved together equal SimplicialLDLT column by column") {
  for (int g : {1, 2, 7, 40}) {
    std::mt19937_64 rng(static_cast<unsigned>(g));
    const Eigen::SparseMatrix<double> a = grid_system(g, g, rng);
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

namespace {

/// The split as first written: every branch placed, the branches sorted again after every cut
/// (quadratic in the number of branches, which made a 16001 x 33 cloth spend two thirds of its
/// first frame here). split_elimination_tree must give the same parts.
std::array<std::vector<int>, 3> split_by_sorting(const std::vector<int>& parent,
                                                 const std::vector<double>& own_cost) {
  const int n = static_cast<int>(parent.size());
  std::vector<std::vector<int>> children(parent.size());
  std::vector<double> cost(own_cost);
  for (int j = 0; j < n; ++j)
    if (parent[j] >= 0) {
      children[parent[j]].push_back(j);
      cost[parent[j]] += cost[j];
    }
  std::vector<int> branches;
  double total = 0.0;
  for (int j = 0; j < n; ++j)
    if (parent[j] < 0) {
      branches.push_back(j);
      total += cost[j];
    }
  std::vector<char> in_top(parent.size(), 0);
  std::vector<int> group(0);
  double top_cost = 0.0;
  bool split = false;
  while (!branches.empty()) {
    std::sort(branches.begin(), branches.end(),
              [&](int u, int w) { return cost[u] != cost[w] ? cost[u] > cost[w] : u < w; });
    double load[2] = {0.0, 0.0};
    group.assign(branches.size(), 0);
    for (std::size_t k = 0; k < branches.size(); ++k) {
      group[k] = load[1] < load[0] ? 1 : 0;
      load[group[k]] += cost[branches[k]];
    }
    if (std::abs(load[0] - load[1]) <= 0.05 * total) {
      split = true;
      break;
    }
    const int cut = branches.front();
    top_cost += own_cost[cut];
    if (top_cost > 0.25 * total) break;
    in_top[cut] = 1;
    branches.erase(branches.begin());
    branches.insert(branches.end(), children[cut].begin(), children[cut].end());
  }
  std::array<std::vector<int>, 3> parts;
  std::vector<int> part_of(parent.size(), 0);
  if (split)
    for (std::size_t k = 0; k < branches.size(); ++k) part_of[branches[k]] = 1 + group[k];
  for (int j = n - 1; j >= 0; --j) {
    if (!split) break;
    if (in_top[j])
      part_of[j] = 0;
    else if (part_of[j] == 0 && parent[j] >= 0)
      part_of[j] = part_of[parent[j]];
  }
  for (int j = 0; j < n; ++j) parts[part_of[j]].push_back(j);
  return parts;
}

}  // namespace

TEST_CASE("the two-thread schedule equals the split that sorts every branch after every cut") {
  std::mt19937_64 rng(7);
  // Random forests: each node's parent a later node (or none), own costs whole numbers 1-40 as in
  // a factor (1 + entries of its column). Chains with leaves hung on them (the shape a long
  // strip of cloth gives), bushy trees and several roots all occur.
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 400);
    const int reach = 1 + static_cast<int>(rng() % 8);  // small: chains; large: bushes
    std::vector<int> parent(static_cast<std::size_t>(n), -1);
    std::vector<double> own(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      own[j] = 1.0 + static_cast<double>(rng() % 40);
      if (j + 1 < n && rng() % 50 != 0)
        parent[j] = std::min(n - 1, j + 1 + static_cast<int>(rng() % reach));
    }
    INFO("trial " << trial << ", " << n << " nodes");
    CHECK(split_elimination_tree(parent, own) == split_by_sorting(parent, own));
  }
  // The elimination trees of real factors: a square cloth, which splits, and a strip, whose
  // AMD tree is a long chain that no cut within a quarter of the cost balances (one thread).
  for (const auto& [width, height] : {std::pair{40, 40}, std::pair{200, 6}}) {
    std::mt19937_64 grid_rng(3);
    const Eigen::SparseMatrix<double> a = grid_system(width, height, grid_rng);
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(a);
    REQUIRE(ldlt.info() == Eigen::Success);
    const auto& l = ldlt.matrixL().nestedExpression();
    std::vector<int> parent(static_cast<std::size_t>(a.rows()), -1);
    std::vector<double> own(parent.size());
    for (Eigen::Index j = 0; j < a.rows(); ++j) {
      const int begin = l.outerIndexPtr()[j], end = l.outerIndexPtr()[j + 1];
      own[j] = 1.0 + (end - begin);
      if (end > begin) parent[j] = l.innerIndexPtr()[begin];
    }
    INFO("grid " << width << " x " << height);
    const auto parts = split_elimination_tree(parent, own);
    CHECK(parts == split_by_sorting(parent, own));
    CHECK(parts[1].empty() == (height == 6));
    CHECK(parts[2].empty() == (height == 6));
  }
}
