#pragma once
/// @file
/// The sparse LDL^T factorisation of the global matrix of Liu et al. 2013 (eq. 13: M + h^2 L),
/// solved for its three right-hand sides (x, y, z) together. The factor is Eigen's
/// SimplicialLDLT with its fill-reducing AMD ordering, P A P^T = L D L^T with L unit lower
/// triangular; the substitutions are written out here over Eigen's storage of L so that every
/// entry of L is read once per pass for all three columns (memory traffic, not arithmetic, bounds
/// a sparse triangular solve) instead of once per column. The arithmetic per column is the one of
/// SimplicialLDLT::solve, in the same order.
///
/// Both substitutions run on two threads over the elimination tree: the tree is cut into a top
/// (every ancestor of a cut subtree) and two groups of whole subtrees of about equal cost. The
/// forward substitution is written row by row (y_i = c_i - sum_j L_ij y_j, j increasing: the
/// order of the column-oriented form), so a subtree reads only its own rows: the groups run in
/// parallel, then the top. The backward substitution runs the top first, then the groups. Every
/// sum keeps its order, so the result has the same bits on one thread or two.

#include <array>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

namespace datadyn::cloth {

/// The two-thread schedule of the substitutions: the rows of an elimination tree (`parent[j]` >
/// j, or -1 for a root) split into a top (every ancestor of a cut subtree) and two groups of
/// whole subtrees whose costs (the sum of `own_cost` over their rows) differ by at most 5 % of
/// the total. Roots are cut heaviest first until the remaining subtrees, placed heaviest first
/// into the lighter group, are that balanced; if that would take more than a quarter of the cost
/// into the top, everything is the top. Each part lists its rows in increasing order.
std::array<std::vector<int>, 3> split_elimination_tree(const std::vector<int>& parent,
                                                       const std::vector<double>& own_cost);

/// #n by 3, one right-hand side or solution per column, rows contiguous.
using ThreeColumns = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

class ThreeColumnLdlt {
 public:
  /// Factors the symmetric matrix `a` (#n by #n, both triangles stored). Returns false if the
  /// factorisation fails (a zero pivot).
  bool compute(const Eigen::SparseMatrix<double>& a);

  Eigen::Index size() const { return inverse_diagonal_.size(); }

  /// The fill-reducing ordering: row i of A is row permuted_row()[i] of P A P^T.
  const Eigen::VectorXi& permuted_row() const { return permuted_row_; }

  /// Solves (P A P^T) z = c in place: `c` holds the three right-hand sides already in the permuted
  /// order (row permuted_row()[i] = row i of the original right-hand side) and receives z.
  /// @param c #n by 3
  void solve_permuted(Eigen::Ref<ThreeColumns> c) const;

  /// Solves A x = b for three columns (permutes, solve_permuted, permutes back).
  /// @param b #n by 3; returns #n by 3
  ThreeColumns solve(const Eigen::Ref<const ThreeColumns>& b) const;

  /// Rows of the top, then of group 0 and of group 1, each increasing.
  const std::vector<int>& schedule(int part) const {
    return parts_[static_cast<std::size_t>(part)];
  }

 private:
  void forward(const std::vector<int>& rows, double* z) const;
  void backward(const std::vector<int>& rows, double* z) const;

  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt_;
  Eigen::VectorXi permuted_row_;
  Eigen::VectorXd inverse_diagonal_;  // 1 / D, as SimplicialLDLT::solve applies D^-1
  // L row by row (strictly lower, columns increasing), for the forward substitution.
  std::vector<int> row_start_, row_column_;
  std::vector<double> row_value_;
  std::array<std::vector<int>, 3> parts_;  // top, group 0, group 1
};

}  // namespace datadyn::cloth
