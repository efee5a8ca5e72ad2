#include "cloth/three_column_ldlt.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::cloth {

bool ThreeColumnLdlt::compute(const Eigen::SparseMatrix<double>& a) {
  ldlt_.compute(a);
  if (ldlt_.info() != Eigen::Success) return false;
  const Eigen::Index n = a.rows();
  permuted_row_.resize(n);
  if (ldlt_.permutationP().size() == n)
    permuted_row_ = ldlt_.permutationP().indices();
  else
    for (Eigen::Index i = 0; i < n; ++i) permuted_row_[i] = static_cast<int>(i);
  inverse_diagonal_ = ldlt_.vectorD().cwiseInverse();

  // L row by row: columns visited in increasing order, so each row's columns increase.
  const auto& l = ldlt_.matrixL().nestedExpression();
  const int* start = l.outerIndexPtr();
  const int* row = l.innerIndexPtr();
  const double* value = l.valuePtr();
  const auto nn = static_cast<std::size_t>(n);
  row_start_.assign(nn + 1, 0);
  for (int p = 0; p < start[n]; ++p) ++row_start_[static_cast<std::size_t>(row[p]) + 1];
  for (std::size_t i = 0; i < nn; ++i) row_start_[i + 1] += row_start_[i];
  row_column_.resize(static_cast<std::size_t>(start[n]));
  row_value_.resize(static_cast<std::size_t>(start[n]));
  std::vector<int> next(row_start_.begin(), row_start_.end() - 1);
  for (int j = 0; j < n; ++j)
    for (int p = start[j]; p < start[j + 1]; ++p) {
      const auto q = static_cast<std::size_t>(next[static_cast<std::size_t>(row[p])]++);
      row_column_[q] = j;
      row_value_[q] = value[p];
    }

  // Elimination tree: the parent of j is the first row below the diagonal in column j of L. A
  // row costs the entries of L it reads in both passes.
  std::vector<int> parent(nn, -1);
  std::vector<double> own_cost(nn);
  for (int j = 0; j < n; ++j) {
    own_cost[static_cast<std::size_t>(j)] = 1.0 + (start[j + 1] - start[j]);
    if (start[j + 1] > start[j]) parent[static_cast<std::size_t>(j)] = row[start[j]];
  }
  parts_ = split_elimination_tree(parent, own_cost);
  return true;
}

namespace {

/// Whether the greedy split of `branches` (heaviest first, each into the lighter group) ends
/// within `tolerance`. Only the branches heavier than the tolerance are placed one by one: for the
/// rest the outcome is known. If they weigh at least the difference left, the greedy split ends
/// within the heaviest of them (the difference falls until it changes sign, then stays under the
/// branch that last changed it); if not, they all go to the lighter group. Both are the greedy
/// loop's exact outcome (costs are whole numbers, their sums exact in a double), at a cost of at
/// most 1 / 0.05 = 20 branches a call instead of all of them, which for a long strip of cloth
/// were tens of thousands at each of thousands of cuts.
template <class Branches>
bool greedy_split_balanced(const Branches& branches, const std::vector<double>& cost,
                           double branch_sum, double tolerance) {
  double load[2] = {0.0, 0.0};
  double rest = branch_sum;
  for (int b : branches) {
    const double c = cost[static_cast<std::size_t>(b)];
    if (c <= tolerance) {
      const double difference = std::abs(load[0] - load[1]);
      return rest >= difference || difference - rest <= tolerance;
    }
    load[load[1] < load[0] ? 1 : 0] += c;
    rest -= c;
  }
  return std::abs(load[0] - load[1]) <= tolerance;
}

}  // namespace

std::array<std::vector<int>, 3> split_elimination_tree(const std::vector<int>& parent,
                                                       const std::vector<double>& own_cost) {
  const std::size_t nn = parent.size();
  const int n = static_cast<int>(nn);
  std::vector<std::vector<int>> children(nn);
  std::vector<double> cost(own_cost);  // of the subtree
  for (int j = 0; j < n; ++j)          // children have smaller indices than their parent
    if (parent[static_cast<std::size_t>(j)] >= 0) {
      const auto up = static_cast<std::size_t>(parent[static_cast<std::size_t>(j)]);
      children[up].push_back(j);
      cost[up] += cost[static_cast<std::size_t>(j)];
    }
  // The roots of the subtrees not yet cut, heaviest first (then by index).
  const auto heavier = [&cost](int u, int w) {
    const double cu = cost[static_cast<std::size_t>(u)], cw = cost[static_cast<std::size_t>(w)];
    return cu != cw ? cu > cw : u < w;
  };
  std::set<int, decltype(heavier)> branches(heavier);
  double total = 0.0;
  for (int j = 0; j < n; ++j)
    if (parent[static_cast<std::size_t>(j)] < 0) {
      branches.insert(j);
      total += cost[static_cast<std::size_t>(j)];
    }
  // Cut the heaviest subtree's root into the top until the subtrees split into two groups within
  // 5 % of the total (largest first into the lighter group), or the top holds a quarter.
  std::vector<char> in_top(nn, 0);
  double top_cost = 0.0, branch_sum = total;
  bool split = false;
  while (!branches.empty()) {
    if (greedy_split_balanced(branches, cost, branch_sum, 0.05 * total)) {
      split = true;
      break;
    }
    const int cut = *branches.begin();
    const auto u = static_cast<std::size_t>(cut);
    top_cost += own_cost[u];
    if (top_cost > 0.25 * total) break;
    in_top[u] = 1;
    branches.erase(branches.begin());
    branch_sum -= cost[u];
    for (int c : children[u]) {
      branches.insert(c);
      branch_sum += cost[static_cast<std::size_t>(c)];
    }
  }
  std::array<std::vector<int>, 3> parts;
  if (!split) {  // no balanced cut: everything in the top, one thread
    parts[0].resize(nn);
    std::iota(parts[0].begin(), parts[0].end(), 0);
    return parts;
  }
  std::vector<int> part_of(nn, 0);
  double load[2] = {0.0, 0.0};
  for (int b : branches) {
    const int g = load[1] < load[0] ? 1 : 0;
    part_of[static_cast<std::size_t>(b)] = 1 + g;
    load[g] += cost[static_cast<std::size_t>(b)];
  }
  for (int j = n - 1; j >= 0; --j) {  // parents first: a subtree inherits its root's group
    const auto u = static_cast<std::size_t>(j);
    if (in_top[u])
      part_of[u] = 0;
    else if (part_of[u] == 0 && parent[u] >= 0)
      part_of[u] = part_of[static_cast<std::size_t>(parent[u])];
  }
  for (int j = 0; j < n; ++j)
    parts[static_cast<std::size_t>(part_of[static_cast<std::size_t>(j)])].push_back(j);
  return parts;
}

void ThreeColumnLdlt::forward(const std::vector<int>& rows, double* z) const {
  // y_i = c_i - sum_j L_ij y_j over j < i increasing, in place.
  for (int i : rows) {
    const auto u = static_cast<std::size_t>(i);
    double s0 = z[3 * u], s1 = z[3 * u + 1], s2 = z[3 * u + 2];
    for (int p = row_start_[u]; p < row_start_[u + 1]; ++p) {
      const double* zj = z + 3 * static_cast<std::size_t>(row_column_[static_cast<std::size_t>(p)]);
      const double v = row_value_[static_cast<std::size_t>(p)];
      s0 -= v * zj[0];
      s1 -= v * zj[1];
      s2 -= v * zj[2];
    }
    z[3 * u] = s0;
    z[3 * u + 1] = s1;
    z[3 * u + 2] = s2;
  }
}

void ThreeColumnLdlt::backward(const std::vector<int>& rows, double* z) const {
  // z_j = w_j - sum_i L_ij z_i over i > j (column j of L), rows decreasing, in place.
  const auto& l = ldlt_.matrixL().nestedExpression();
  const int* start = l.outerIndexPtr();
  const int* row = l.innerIndexPtr();
  const double* value = l.valuePtr();
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const auto j = static_cast<std::size_t>(*it);
    double s0 = z[3 * j], s1 = z[3 * j + 1], s2 = z[3 * j + 2];
    for (int p = start[j]; p < start[j + 1]; ++p) {
      const double* zi = z + 3 * static_cast<std::size_t>(row[p]);
      const double v = value[p];
      s0 -= v * zi[0];
      s1 -= v * zi[1];
      s2 -= v * zi[2];
    }
    z[3 * j] = s0;
    z[3 * j + 1] = s1;
    z[3 * j + 2] = s2;
  }
}

void ThreeColumnLdlt::solve_permuted(Eigen::Ref<ThreeColumns> c) const {
  const Eigen::Index n = size();
  DATADYN_CHECK_EQ(c.rows(), n);
  double* z = c.data();
  // L y = c: the two groups of subtrees in parallel, then the top.
  parallel_for(2, 1, [&](std::size_t g0, std::size_t g1) {
    for (std::size_t g = g0; g < g1; ++g) forward(parts_[1 + g], z);
  });
  forward(parts_[0], z);
  // D w = y.
  for (Eigen::Index j = 0; j < n; ++j) {
    const double d = inverse_diagonal_[j];
    z[3 * j] = d * z[3 * j];
    z[3 * j + 1] = d * z[3 * j + 1];
    z[3 * j + 2] = d * z[3 * j + 2];
  }
  // L^T z = w: the top, then the groups in parallel.
  backward(parts_[0], z);
  parallel_for(2, 1, [&](std::size_t g0, std::size_t g1) {
    for (std::size_t g = g0; g < g1; ++g) backward(parts_[1 + g], z);
  });
}

ThreeColumns ThreeColumnLdlt::solve(const Eigen::Ref<const ThreeColumns>& b) const {
  DATADYN_CHECK_EQ(b.rows(), size());
  ThreeColumns c(b.rows(), 3);
  for (Eigen::Index i = 0; i < b.rows(); ++i) c.row(permuted_row_[i]) = b.row(i);
  solve_permuted(c);
  ThreeColumns x(b.rows(), 3);
  for (Eigen::Index i = 0; i < b.rows(); ++i) x.row(i) = c.row(permuted_row_[i]);
  return x;
}

}  // namespace datadyn::cloth
