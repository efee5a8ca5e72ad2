#include "wave/slice_selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.hpp"

namespace datadyn::wave {

namespace {

/// Weight of the pair term between slices i and i+1 in eq. 7: slice i averages over its
/// neighbours, so the pair gets 1/(neighbours of i) + 1/(neighbours of i+1).
double pair_weight(std::size_t i, std::size_t slices) {
  auto neighbours = [&](std::size_t k) {
    return (k > 0 ? 1.0 : 0.0) + (k + 1 < slices ? 1.0 : 0.0);
  };
  return 1.0 / neighbours(i) + 1.0 / neighbours(i + 1);
}

/// Simulation each fixed slice is pinned to (-1: free), validated.
std::vector<int> pinned(const SelectionProblem& p, const Eigen::MatrixXd& sh) {
  const auto slices = static_cast<std::size_t>(p.target.size());
  const int n = static_cast<int>(p.heights.size());
  std::vector<int> pin(slices, -1);
  for (const FixedSlice& f : p.fixed) {
    DATADYN_CHECK_LT(f.slice, slices);
    DATADYN_CHECK_LT(f.simulation, n);
    int best = f.simulation;
    if (best < 0) {
      best = 0;
      for (int m = 1; m < n; ++m)
        if (sh(m, static_cast<Eigen::Index>(f.slice)) >
            sh(best, static_cast<Eigen::Index>(f.slice)))
          best = m;
    }
    pin[f.slice] = best;
  }
  return pin;
}

void check_problem(const SelectionProblem& p) {
  DATADYN_CHECK_GT(p.heights.size(), 0);
  DATADYN_CHECK_GT(p.target.size(), 0);
  DATADYN_CHECK_EQ(p.distance.rows(), p.heights.size());
  DATADYN_CHECK_EQ(p.distance.cols(), p.heights.size());
  DATADYN_CHECK(p.alpha >= 0.0 && p.alpha <= 1.0);
}

}  // namespace

Eigen::MatrixXd shape_scores(const Eigen::VectorXd& heights, const Eigen::VectorXd& target) {
  Eigen::MatrixXd sh(heights.size(), target.size());
  for (Eigen::Index i = 0; i < target.size(); ++i) {
    const Eigen::VectorXd err = (heights.array() - target(i)).abs();
    const double worst = err.maxCoeff();
    sh.col(i) = worst > 0.0 ? Eigen::VectorXd(1.0 - err.array() / worst)
                            : Eigen::VectorXd::Ones(heights.size());
  }
  return sh;
}

double selection_objective(const SelectionProblem& p, const std::vector<int>& d) {
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  const std::size_t slices = d.size();
  double total = 0.0;
  for (std::size_t i = 0; i < slices; ++i) {
    total += p.alpha * sh(d[i], static_cast<Eigen::Index>(i));
    double sum = 0.0, count = 0.0;
    if (i > 0) sum += 1.0 - p.distance(d[i], d[i - 1]), count += 1.0;
    if (i + 1 < slices) sum += 1.0 - p.distance(d[i], d[i + 1]), count += 1.0;
    if (count > 0) total += (1.0 - p.alpha) * sum / count;
  }
  return total;
}

Selection select_greedy(const SelectionProblem& p) {
  check_problem(p);
  DATADYN_CHECK(!p.fixed.empty());
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  const auto slices = static_cast<std::size_t>(p.target.size());
  const int n = static_cast<int>(p.heights.size());
  std::vector<int> d = pinned(p, sh);
  // Each free slice is filled from its neighbour on the side of its nearest fixed slice (ties:
  // the one on the left), in order of distance, so that neighbour is always filled first.
  std::vector<long> distance(slices, 0), from(slices, -1);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < slices; ++i) {
    if (d[i] >= 0) continue;
    long nearest = -1;
    for (std::size_t k = 0; k < slices; ++k) {
      if (d[k] < 0) continue;
      const long gap = std::labs(static_cast<long>(k) - static_cast<long>(i));
      if (nearest < 0 || gap < std::labs(nearest - static_cast<long>(i)))
        nearest = static_cast<long>(k);
    }
    distance[i] = std::labs(nearest - static_cast<long>(i));
    from[i] = nearest < static_cast<long>(i) ? static_cast<long>(i) - 1 : static_cast<long>(i) + 1;
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return distance[a] < distance[b]; });
  for (std::size_t i : order) {
    const int neighbour = d[static_cast<std::size_t>(from[i])];
    DATADYN_CHECK_GE(neighbour, 0);
    int best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int m = 0; m < n; ++m) {
      const double score = p.alpha * sh(m, static_cast<Eigen::Index>(i)) +
                           (1.0 - p.alpha) * (1.0 - p.distance(m, neighbour));
      if (score > best_score) best_score = score, best = m;
    }
    d[i] = best;
  }
  return {d, selection_objective(p, d)};
}

Selection select_optimal(const SelectionProblem& p) {
  check_problem(p);
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  const auto slices = static_cast<std::size_t>(p.target.size());
  const auto n = static_cast<Eigen::Index>(p.heights.size());
  const std::vector<int> pin = pinned(p, sh);
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd similarity = 1.0 - p.distance.array();
  // best(m) = max objective of slices 0..i with d(i) = m; back(i, m) = argmax predecessor.
  Eigen::VectorXd best(n), next(n);
  Eigen::MatrixXi back(static_cast<Eigen::Index>(slices), n);
  for (Eigen::Index m = 0; m < n; ++m)
    best(m) = (pin[0] >= 0 && pin[0] != m) ? kNone : p.alpha * sh(m, 0);
  for (std::size_t i = 1; i < slices; ++i) {
    const double w = (1.0 - p.alpha) * pair_weight(i - 1, slices);
    for (Eigen::Index m = 0; m < n; ++m) {
      if (pin[i] >= 0 && pin[i] != m) {
        next(m) = kNone;
        back(static_cast<Eigen::Index>(i), m) = 0;
        continue;
      }
      Eigen::Index arg = 0;
      double value = kNone;
      for (Eigen::Index k = 0; k < n; ++k) {
        const double v = best(k) + w * similarity(k, m);
        if (v > value) value = v, arg = k;
      }
      next(m) = value + p.alpha * sh(m, static_cast<Eigen::Index>(i));
      back(static_cast<Eigen::Index>(i), m) = static_cast<int>(arg);
    }
    best.swap(next);
  }
  std::vector<int> d(slices);
  Eigen::Index arg = 0;
  for (Eigen::Index m = 1; m < n; ++m)
    if (best(m) > best(arg)) arg = m;
  for (std::size_t i = slices; i-- > 0;) {
    d[i] = static_cast<int>(arg);
    if (i > 0) arg = back(static_cast<Eigen::Index>(i), arg);
  }
  return {d, selection_objective(p, d)};
}

Selection select_brute_force(const SelectionProblem& p) {
  check_problem(p);
  const Eigen::MatrixXd sh = shape_scores(p.heights, p.target);
  const std::vector<int> pin = pinned(p, sh);
  const std::size_t slices = pin.size();
  const int n = static_cast<int>(p.heights.size());
  std::vector<int> d(slices, 0);
  Selection best{{}, -std::numeric_limits<double>::infinity()};
  while (true) {
    bool allowed = true;
    for (std::size_t i = 0; i < slices; ++i)
      if (pin[i] >= 0 && pin[i] != d[i]) allowed = false;
    if (allowed) {
      const double v = selection_objective(p, d);
      if (v > best.objective) best = {d, v};
    }
    std::size_t i = 0;
    while (i < slices && ++d[i] == n) d[i++] = 0;
    if (i == slices) break;
  }
  return best;
}

}  // namespace datadyn::wave
