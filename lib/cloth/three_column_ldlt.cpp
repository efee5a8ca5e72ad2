#include "cloth/three_column_ldlt.hpp"

#include <algorithm>
#include <numeric>

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

  // Elimination tree: the parent of j is the first row below the diagonal in column j of L.
  std::vector<int> parent(nn, -1);
  std::vector<std::vector<int>> children(nn);
  std::vector<double> cost(nn);  // entries of L read for the subtree's rows, both passes
  for (int j = 0; j < n; ++j) {
    cost[static_cast<std::size_t>(j)] = 1.0 + (start[j + 1] - start[j]);
    if (start[j + 1] > start[j]) {
      parent[static_cast<std::size_t>(j)] = row[start[j]];
      children[static_cast<std::size_t>(row[start[j]])].push_back(j);
    }
  }
  for (int j = 0; j < n; ++j)  // children have smaller indices than their parent
    if (parent[static_cast<std::size_t>(j)] >= 0)
      cost[static_cast<std::size_t>(parent[static_cast<std::size_t>(j)])] +=
          cost[static_cast<std::size_t>(j)];
  double total = 0.0;
  std::vector<int> branches;  // roots of the subtrees not yet cut
  for (int j = 0; j < n; ++j)
    if (parent[static_cast<std::size_t>(j)] < 0) {
      branches.push_back(j);
      total += cost[static_cast<std::size_t>(j)];
    }
  // Cut the heaviest subtree's root into the top until the subtrees split into two groups within
  // 5 % of the total (largest first into the lighter group), or the top holds a quarter.
  std::vector<char> in_top(nn, 0);
  std::vector<int> group_of_branch;
  double top_cost = 0.0;
  bool split = false;
  while (!branches.empty()) {
    std::sort(branches.begin(), branches.end(), [&](int u, int w) {
      const double cu = cost[static_cast<std::size_t>(u)], cw = cost[static_cast<std::size_t>(w)];
      return cu != cw ? cu > cw : u < w;
    });
    double load[2] = {0.0, 0.0};
    group_of_branch.assign(branches.size(), 0);
    for (std::size_t k = 0; k < branches.size(); ++k) {
      const int g = load[1] < load[0] ? 1 : 0;
      group_of_branch[k] = g;
      load[g] += cost[static_cast<std::size_t>(branches[k])];
    }
    if (std::abs(load[0] - load[1]) <= 0.05 * total) {
      split = true;
      break;
    }
    const int cut = branches.front();
    const double own =
        cost[static_cast<std::size_t>(cut)] -
        std::accumulate(children[static_cast<std::size_t>(cut)].begin(),
                        children[static_cast<std::size_t>(cut)].end(), 0.0,
                        [&](double acc, int c) { return acc + cost[static_cast<std::size_t>(c)]; });
    top_cost += own;
    if (top_cost > 0.25 * total) break;
    in_top[static_cast<std::size_t>(cut)] = 1;
    branches.erase(branches.begin());
    for (int c : children[static_cast<std::size_t>(cut)]) branches.push_back(c);
  }
  for (auto& part : parts_) part.clear();
  if (!split) {  // no balanced cut: everything in the top, one thread
    parts_[0].resize(nn);
    std::iota(parts_[0].begin(), parts_[0].end(), 0);
    return true;
  }
  std::vector<int> part_of(nn, 0);
  for (std::size_t k = 0; k < branches.size(); ++k)
    part_of[static_cast<std::size_t>(branches[k])] = 1 + group_of_branch[k];
  for (int j = n - 1; j >= 0; --j) {  // parents first: a subtree inherits its root's group
    const auto u = static_cast<std::size_t>(j);
    if (in_top[u])
      part_of[u] = 0;
    else if (part_of[u] == 0 && parent[u] >= 0)
      part_of[u] = part_of[static_cast<std::size_t>(parent[u])];
  }
  for (int j = 0; j < n; ++j)
    parts_[static_cast<std::size_t>(part_of[static_cast<std::size_t>(j)])].push_back(j);
  return true;
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
