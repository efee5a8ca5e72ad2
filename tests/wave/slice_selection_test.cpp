// Slice selection (Chiba et al. 2011, eqs. 6-8): greedy against a brute-force search of eq. 8,
// optimal against a brute-force maximum of eq. 7.

#include <doctest/doctest.h>

#include <random>

#include "wave/slice_selection.hpp"

using namespace datadyn::wave;

namespace {

SelectionProblem random_problem(std::mt19937& rng, int n, int s, double alpha) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SelectionProblem p;
  p.heights = Eigen::VectorXd(n);
  p.target = Eigen::VectorXd(s);
  for (int k = 0; k < n; ++k) p.heights(k) = 0.1 + 0.4 * u(rng);
  for (int i = 0; i < s; ++i) p.target(i) = 0.1 + 0.4 * u(rng);
  p.distance = Eigen::MatrixXd::Zero(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) p.distance(a, b) = p.distance(b, a) = u(rng);
  p.distance /= std::max(p.distance.maxCoeff(), 1e-12);  // normalised as eq. 5
  p.alpha = alpha;
  return p;
}

/// Eq. 8 as the paper states it, with one fixed slice k: every tuple d is tried, and the one whose
/// every free slice maximises eq. 8 given its neighbour toward k (lowest index on ties) is it.
std::vector<int> brute_force_eq8(const SelectionProblem& p, std::size_t k) {
  const int n = static_cast<int>(p.heights.size());
  const auto s = static_cast<std::size_t>(p.target.size());
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  std::vector<int> d(s, 0), found;
  int matches = 0;
  while (true) {
    bool ok = true;
    for (std::size_t i = 0; i < s && ok; ++i) {
      int best = 0;
      double best_score = -1e300;
      for (int m = 0; m < n; ++m) {
        double score;
        if (i == k)
          score = sh(m, static_cast<Eigen::Index>(i));  // eq. 6 at the fixed slice
        else {
          const int neighbour = d[i < k ? i + 1 : i - 1];
          score = p.alpha * sh(m, static_cast<Eigen::Index>(i)) +
                  (1 - p.alpha) * (1 - p.distance(m, neighbour));
        }
        if (score > best_score) best_score = score, best = m;
      }
      ok = d[i] == best;
    }
    if (ok) found = d, ++matches;
    std::size_t i = 0;
    while (i < s && ++d[i] == n) d[i++] = 0;
    if (i == s) break;
  }
  CHECK(matches == 1);  // eq. 8 determines the choice uniquely
  return found;
}

}  // namespace

TEST_CASE("S_h: 1 for the best match, 0 for the worst, in [0, 1]") {
  Eigen::VectorXd h(3), t(2);
  h << 0.2, 0.3, 0.5;
  t << 0.3, 0.45;
  const Eigen::MatrixXd sh = shape_scores(h, t);
  CHECK(sh(1, 0) == 1.0);
  CHECK(sh(2, 0) == 0.0);  // |0.5 - 0.3| is the largest error
  CHECK(sh(0, 0) == doctest::Approx(0.5));
  CHECK(sh(0, 1) == 0.0);
  CHECK(sh.minCoeff() >= 0.0);
  CHECK(sh.maxCoeff() <= 1.0);
}

TEST_CASE("greedy equals a brute-force search of eq. 8 on every small instance") {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 4, s = 1 + (trial / 4) % 5;
    const double alpha = (trial % 5) / 4.0;
    SelectionProblem p = random_problem(rng, n, s, alpha);
    const std::size_t k = static_cast<std::size_t>(trial % s);
    p.fixed = {{k, -1}};
    INFO("trial " << trial << " N " << n << " S " << s << " alpha " << alpha << " k " << k);
    CHECK(select_greedy(p).simulation == brute_force_eq8(p, k));
  }
}

TEST_CASE("optimal equals a brute-force maximum of eq. 7, with and without fixed slices") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 4, s = 1 + (trial / 4) % 5;
    SelectionProblem p = random_problem(rng, n, s, (trial % 7) / 6.0);
    if (trial % 3 == 1) p.fixed = {{static_cast<std::size_t>(trial % s), -1}};
    if (trial % 3 == 2 && s > 1) p.fixed = {{0, n - 1}, {static_cast<std::size_t>(s - 1), 0}};
    INFO("trial " << trial);
    const Selection opt = select_optimal(p), brute = select_brute_force(p);
    // Same maximum; both evaluated by the same eq. 7 sum, rounding differs by the order of DP
    // additions only (1e-12 of values of order S).
    CHECK(opt.objective == doctest::Approx(brute.objective).epsilon(1e-12));
    CHECK(opt.objective == doctest::Approx(selection_objective(p, opt.simulation)).epsilon(1e-12));
    for (const FixedSlice& f : p.fixed)
      if (f.simulation >= 0) CHECK(opt.simulation[f.slice] == f.simulation);
  }
}

TEST_CASE("optimal is never worse than greedy on random instances") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    SelectionProblem p = random_problem(rng, 2 + trial % 30, 1 + trial % 17, (trial % 9) / 8.0);
    p.fixed = {{static_cast<std::size_t>(trial % p.target.size()), -1}};
    CHECK(select_optimal(p).objective >= select_greedy(p).objective - 1e-12);
  }
}

TEST_CASE("alpha = 1 picks each slice's best match") {
  std::mt19937 rng(3);
  SelectionProblem p = random_problem(rng, 6, 9, 1.0);
  p.fixed = {{4, -1}};
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  for (const Selection& sel : {select_greedy(p), select_optimal(p)}) {
    for (Eigen::Index i = 0; i < p.target.size(); ++i) {
      Eigen::Index best;
      sh.col(i).maxCoeff(&best);
      CHECK(sel.simulation[static_cast<std::size_t>(i)] == best);
    }
  }
}

TEST_CASE("alpha = 0 with a fixed slice makes every slice copy its neighbour") {
  std::mt19937 rng(5);
  SelectionProblem p = random_problem(rng, 5, 7, 0.0);
  p.fixed = {{3, 2}};
  // D has a zero diagonal: the same simulation as the neighbour scores 1, the maximum.
  CHECK(select_greedy(p).simulation == std::vector<int>(7, 2));
  CHECK(select_optimal(p).simulation == std::vector<int>(7, 2));
}
