#include "cloth/three_column_ldlt.hpp"

#include "core/check.hpp"

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
  return true;
}

void ThreeColumnLdlt::solve_permuted(Eigen::Ref<ThreeColumns> c) const {
  const Eigen::Index n = size();
  DATADYN_CHECK_EQ(c.rows(), n);
  // L is stored column by column without its unit diagonal, row indices increasing.
  const auto& l = ldlt_.matrixL().nestedExpression();
  const int* start = l.outerIndexPtr();
  const int* row = l.innerIndexPtr();
  const double* value = l.valuePtr();
  double* z = c.data();
  // L y = c, column-oriented: y_j is final when column j is reached.
  for (Eigen::Index j = 0; j < n; ++j) {
    const double y0 = z[3 * j], y1 = z[3 * j + 1], y2 = z[3 * j + 2];
    for (int p = start[j]; p < start[j + 1]; ++p) {
      double* zi = z + 3 * row[p];
      const double v = value[p];
      zi[0] -= v * y0;
      zi[1] -= v * y1;
      zi[2] -= v * y2;
    }
  }
  // D w = y.
  for (Eigen::Index j = 0; j < n; ++j) {
    const double d = inverse_diagonal_[j];
    z[3 * j] = d * z[3 * j];
    z[3 * j + 1] = d * z[3 * j + 1];
    z[3 * j + 2] = d * z[3 * j + 2];
  }
  // L^T z = w, row j of L^T is column j of L: z_j = w_j - sum_i L_ij z_i over i > j.
  for (Eigen::Index j = n - 1; j >= 0; --j) {
    double s0 = z[3 * j], s1 = z[3 * j + 1], s2 = z[3 * j + 2];
    for (int p = start[j]; p < start[j + 1]; ++p) {
      const double* zi = z + 3 * row[p];
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
