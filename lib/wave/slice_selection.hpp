#pragma once
/// @file
/// Which simulation goes on which slice (Chiba et al. 2011, section 5).
///
/// Scores for N simulations and S slices:
///   S_h(n, i) = 1 − |H_n(s) − T(i)| / max_m |H_m(s) − T(i)|          (eq. 6; 1 when all equal)
///   S_d(n, i) = mean over the neighbours j ∈ {i−1, i+1} of (1 − D_{n, d(j)})
///   objective(d) = Σ_i α S_h(d(i), i) + (1 − α) S_d(d(i), i)           (eq. 7)
/// The paper averages over both neighbours; at the two end slices, which have one neighbour, we
/// take that one (a chain of one slice has no S_d term). Eq. 7 is then a sum of unary terms and
/// terms on neighbouring pairs, so dynamic programming over the chain (Viterbi) finds its exact
/// maximum in O(S N²).
///
/// Greedy (eq. 8): fixed slices take their best S_h; the others are filled outward, each from the
/// neighbour on the side of its nearest fixed slice j: argmax_n α S_h(n, i) + (1 − α)(1 − D_{n,
/// d(j)}). Ties go to the lowest simulation index.

#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace datadyn::wave {

/// A slice whose simulation is given: `simulation` < 0 means "its best S_h match".
struct FixedSlice {
  std::size_t slice = 0;
  int simulation = -1;
};

struct SelectionProblem {
  Eigen::VectorXd heights;   ///< H_n(s), N simulations, metres
  Eigen::VectorXd target;    ///< T(i), S slices, metres
  Eigen::MatrixXd distance;  ///< D, N by N, symmetric, zero diagonal, in [0, 1]
  double alpha = 0.7;        ///< in [0, 1]: 1 = shape only, 0 = neighbour similarity only
  std::vector<FixedSlice> fixed;
};

struct Selection {
  std::vector<int> simulation;  ///< d(i) for each slice
  double objective = 0.0;       ///< eq. 7 of this choice
};

/// S_h, N by S (eq. 6).
Eigen::MatrixXd shape_scores(const Eigen::VectorXd& heights, const Eigen::VectorXd& target);

/// Eq. 7 for a given choice d.
double selection_objective(const SelectionProblem& p, const std::vector<int>& d);

/// The paper's greedy fill (eq. 8). @pre at least one fixed slice.
Selection select_greedy(const SelectionProblem& p);

/// The exact maximum of eq. 7 with the fixed slices as hard constraints (dynamic programming).
Selection select_optimal(const SelectionProblem& p);

/// Exhaustive search of eq. 7 over all N^S choices (tests; small instances only).
Selection select_brute_force(const SelectionProblem& p);

}  // namespace datadyn::wave
