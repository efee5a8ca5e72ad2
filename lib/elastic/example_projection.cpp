#include "elastic/example_projection.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "core/parallel.hpp"

namespace datadyn::elastic {

namespace {
constexpr std::size_t kRegionGrain = 256;
using Partial = std::array<double, kMaxExamples>;
}  // namespace

ExampleSpace build_example_space(const RegionSet& regions, const Points3& rest,
                                 const std::vector<Points3>& examples,
                                 const std::vector<int>& region_group, double ridge) {
  const int m = regions.region_count();
  const int n = static_cast<int>(examples.size());
  if (n > kMaxExamples)
    throw std::invalid_argument("at most " + std::to_string(kMaxExamples) +
                                " examples per body, got " + std::to_string(n));
  if (!(ridge >= 0.0)) throw std::invalid_argument("ridge must be >= 0");
  if (rest.rows() != m)
    throw std::invalid_argument("rest pose: expected " + std::to_string(m) + " vertices");
  ExampleSpace space;
  space.example_count = n;
  space.rest_strain = strain_vector(regions, rest);
  const std::size_t size = static_cast<std::size_t>(kStrainSize) * static_cast<std::size_t>(m);
  space.offsets.resize(size * static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const Points3& x = examples[static_cast<std::size_t>(k)];
    if (x.rows() != m)
      throw std::invalid_argument("example " + std::to_string(k + 1) + ": expected " +
                                  std::to_string(m) + " vertices (one per particle), got " +
                                  std::to_string(x.rows()));
    if (!x.allFinite())
      throw std::invalid_argument("example " + std::to_string(k + 1) +
                                  ": a coordinate is not finite");
    const std::vector<double> s = strain_vector(regions, x);
    for (std::size_t j = 0; j < size; ++j)
      space.offsets[size * static_cast<std::size_t>(k) + j] = s[j] - space.rest_strain[j];
  }
  // Groups.
  space.region_group =
      region_group.empty() ? std::vector<int>(static_cast<std::size_t>(m), 0) : region_group;
  if (static_cast<int>(space.region_group.size()) != m)
    throw std::invalid_argument("groups: expected " + std::to_string(m) + " group ids, got " +
                                std::to_string(space.region_group.size()));
  int groups = 0;
  for (int g : space.region_group) {
    if (g < 0) throw std::invalid_argument("groups: negative group id " + std::to_string(g));
    groups = std::max(groups, g + 1);
  }
  space.group_count = groups;
  space.group_regions.assign(static_cast<std::size_t>(groups), {});
  for (int r = 0; r < m; ++r)
    space.group_regions[static_cast<std::size_t>(space.region_group[static_cast<std::size_t>(r)])]
        .push_back(r);
  for (int g = 0; g < groups; ++g)
    if (space.group_regions[static_cast<std::size_t>(g)].empty())
      throw std::invalid_argument("groups: group " + std::to_string(g) + " has no region");
  // LᵀL per group and its regularised inverse.
  for (int g = 0; g < groups; ++g) {
    Eigen::MatrixXd ltl = Eigen::MatrixXd::Zero(n, n);
    for (int r : space.group_regions[static_cast<std::size_t>(g)])
      for (int a = 0; a < n; ++a)
        for (int b = a; b < n; ++b) {
          const double* la = &space.offsets[size * static_cast<std::size_t>(a) +
                                            kStrainSize * static_cast<std::size_t>(r)];
          const double* lb = &space.offsets[size * static_cast<std::size_t>(b) +
                                            kStrainSize * static_cast<std::size_t>(r)];
          double dot = 0.0;
          for (int c = 0; c < kStrainSize; ++c) dot += la[c] * lb[c];
          ltl(a, b) += dot;
        }
    ltl = ltl.selfadjointView<Eigen::Upper>();
    double condition = 1.0;
    if (n > 0) {
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(ltl);
      const double lo = eig.eigenvalues()(0), hi = eig.eigenvalues()(n - 1);
      condition = lo > 0.0 ? hi / lo : std::numeric_limits<double>::infinity();
    }
    const double lambda = n > 0 ? ridge * ltl.trace() / n : 0.0;
    Eigen::MatrixXd reg = ltl;
    reg.diagonal().array() += lambda;
    Eigen::MatrixXd inverse = Eigen::MatrixXd::Zero(n, n);
    if (n > 0) {
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(reg);
      const double lo = eig.eigenvalues()(0), hi = eig.eigenvalues()(n - 1);
      if (hi <= 0.0) {
        // Every example equals the rest pose in this group: L = 0, weights 0 (with a ridge).
        if (ridge == 0.0)
          throw std::invalid_argument(
              "group " + std::to_string(g) +
              ": every example equals the rest pose (L = 0); use a ridge > 0");
      } else if (!(lo > 1e-14 * hi)) {
        if (ridge == 0.0)
          throw std::invalid_argument(
              "group " + std::to_string(g) +
              ": the examples are linearly dependent (LᵀL is singular); remove the duplicate or "
              "use a ridge > 0");
        inverse = eig.eigenvectors() *
                  eig.eigenvalues()
                      .unaryExpr([&](double v) { return v > 1e-14 * hi ? 1.0 / v : 0.0; })
                      .asDiagonal() *
                  eig.eigenvectors().transpose();
      } else {
        inverse = eig.eigenvectors() * eig.eigenvalues().cwiseInverse().asDiagonal() *
                  eig.eigenvectors().transpose();
      }
    }
    space.normal.push_back(reg);
    space.normal_inverse.push_back(inverse);
    space.ridge.push_back(lambda);
    space.condition.push_back(condition);
  }
  return space;
}

Eigen::VectorXd convex_weights(const Eigen::MatrixXd& A, const Eigen::VectorXd& d) {
  const Eigen::Index n = d.size();
  Eigen::VectorXd u = Eigen::VectorXd::Zero(n);  // the rest pose: feasible
  std::vector<char> at_zero(static_cast<std::size_t>(n), 1);
  bool at_sum = false;  // Σ u = 1 (w_0 = 0) held as an equality
  const double tol = 1e-12 * (A.cwiseAbs().maxCoeff() + d.cwiseAbs().maxCoeff() + 1e-300);
  // Each pass either moves to a new working set's minimum or drops a constraint; a bound on the
  // passes guards against cycling on degenerate data (u stays feasible whenever it stops).
  for (int pass = 0; pass < 8 * static_cast<int>(n + 1); ++pass) {
    std::vector<Eigen::Index> free;
    for (Eigen::Index k = 0; k < n; ++k)
      if (!at_zero[static_cast<std::size_t>(k)]) free.push_back(k);
    // The minimum with the working set's constraints as equalities.
    Eigen::VectorXd target = Eigen::VectorXd::Zero(n);
    if (!free.empty()) {
      const auto m = static_cast<Eigen::Index>(free.size());
      Eigen::MatrixXd a(m, m);
      Eigen::VectorXd b(m);
      for (Eigen::Index i = 0; i < m; ++i) {
        b[i] = d[free[static_cast<std::size_t>(i)]];
        for (Eigen::Index j = 0; j < m; ++j)
          a(i, j) = A(free[static_cast<std::size_t>(i)], free[static_cast<std::size_t>(j)]);
      }
      const Eigen::LDLT<Eigen::MatrixXd> solver(a);
      Eigen::VectorXd x = solver.solve(b);
      if (at_sum) {  // x = a⁻¹ (b − μ 1) with 1ᵀ x = 1
        const Eigen::VectorXd y = solver.solve(Eigen::VectorXd::Ones(m));
        x -= (x.sum() - 1.0) / y.sum() * y;
      }
      for (Eigen::Index i = 0; i < m; ++i) target[free[static_cast<std::size_t>(i)]] = x[i];
    }
    const Eigen::VectorXd step = target - u;
    if (step.cwiseAbs().maxCoeff() <= 1e-13) {
      // A minimum of the working set: optimal when no active constraint pulls the wrong way.
      // KKT: A u − d = Σ λ_k e_k − λ_0 1, λ >= 0.
      const Eigen::VectorXd g = A * u - d;
      const double lambda0 = at_sum && !free.empty() ? -g[free.front()] : 0.0;
      double worst = -tol;
      Eigen::Index release = -1;  // -1: none, n: the sum
      for (Eigen::Index k = 0; k < n; ++k)
        if (at_zero[static_cast<std::size_t>(k)] && g[k] + lambda0 < worst) {
          worst = g[k] + lambda0;
          release = k;
        }
      if (at_sum && lambda0 < worst) release = n;
      if (release < 0) break;
      if (release == n)
        at_sum = false;
      else
        at_zero[static_cast<std::size_t>(release)] = 0;
      continue;
    }
    // Go towards the target until a constraint blocks.
    double alpha = 1.0;
    Eigen::Index block = -1;
    for (Eigen::Index k : free)
      if (step[k] < 0 && -u[k] / step[k] < alpha) {
        alpha = -u[k] / step[k];
        block = k;
      }
    if (!at_sum && step.sum() > 0 && (1.0 - u.sum()) / step.sum() < alpha) {
      alpha = (1.0 - u.sum()) / step.sum();
      block = n;
    }
    u += alpha * step;
    if (block == n) {
      at_sum = true;
    } else if (block >= 0) {
      at_zero[static_cast<std::size_t>(block)] = 1;
      u[block] = 0.0;
    }
  }
  return u;
}

void project_strain(const ExampleSpace& space, const std::vector<double>& strain, double beta,
                    bool convex, std::vector<double>& weights) {
  const int n = space.example_count;
  const std::size_t size = space.rest_strain.size();
  weights.assign(static_cast<std::size_t>(space.group_count) * static_cast<std::size_t>(n + 1),
                 0.0);
  for (int g = 0; g < space.group_count; ++g) {
    const std::vector<int>& regions = space.group_regions[static_cast<std::size_t>(g)];
    Partial zero{};
    // d = Lᵀ (S − S_0) over the group's regions.
    const Partial d = parallel_reduce(
        regions.size(), kRegionGrain, zero,
        [&](std::size_t begin, std::size_t end) {
          Partial part{};
          for (std::size_t j = begin; j < end; ++j) {
            const std::size_t base = kStrainSize * static_cast<std::size_t>(regions[j]);
            double e[kStrainSize];
            for (int c = 0; c < kStrainSize; ++c)
              e[c] = strain[base + static_cast<std::size_t>(c)] -
                     space.rest_strain[base + static_cast<std::size_t>(c)];
            for (int k = 0; k < n; ++k) {
              const double* l = &space.offsets[size * static_cast<std::size_t>(k) + base];
              part[static_cast<std::size_t>(k)] +=
                  l[0] * e[0] + l[1] * e[1] + l[2] * e[2] + l[3] * e[3] + l[4] * e[4] + l[5] * e[5];
            }
          }
          return part;
        },
        [n](Partial a, const Partial& b) {
          for (int k = 0; k < n; ++k)
            a[static_cast<std::size_t>(k)] += b[static_cast<std::size_t>(k)];
          return a;
        });
    const Eigen::MatrixXd& inverse = space.normal_inverse[static_cast<std::size_t>(g)];
    double* w = &weights[static_cast<std::size_t>(g) * static_cast<std::size_t>(n + 1)];
    Eigen::VectorXd u(n);
    for (int k = 0; k < n; ++k) {
      double v = 0.0;
      for (int j = 0; j < n; ++j) v += inverse(k, j) * d[static_cast<std::size_t>(j)];
      u[k] = v;
    }
    // Eq. 7's weights when they lie in the hull (the common case: no extra work), else the
    // hull's constrained solution.
    if (convex && n > 0 && (u.minCoeff() < 0.0 || u.sum() > 1.0))
      u = convex_weights(space.normal[static_cast<std::size_t>(g)],
                         Eigen::Map<const Eigen::VectorXd>(d.data(), n));
    double sum = 0.0;
    for (int k = 0; k < n; ++k) {
      w[k + 1] = beta * u[k];  // β blending of the example weights
      sum += u[k];
    }
    // w_0 = 1 − Σ w_k, then + (1 − β) Σ w_k: together 1 − β Σ w_k.
    w[0] = 1.0 - beta * sum;
  }
}

void blend_strains(const ExampleSpace& space, const std::vector<double>& weights,
                   std::vector<double>& projected) {
  const int n = space.example_count;
  const std::size_t size = space.rest_strain.size();
  const std::size_t m = size / kStrainSize;
  projected.resize(size);
  parallel_for(m, kRegionGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const double* w = &weights[static_cast<std::size_t>(space.region_group[r]) *
                                 static_cast<std::size_t>(n + 1)];
      const std::size_t base = kStrainSize * r;
      double s[kStrainSize];
      for (int c = 0; c < kStrainSize; ++c)
        s[c] = space.rest_strain[base + static_cast<std::size_t>(c)];
      for (int k = 0; k < n; ++k) {
        const double* l = &space.offsets[size * static_cast<std::size_t>(k) + base];
        const double wk = w[k + 1];
        for (int c = 0; c < kStrainSize; ++c) s[c] += wk * l[c];
      }
      for (int c = 0; c < kStrainSize; ++c) projected[base + static_cast<std::size_t>(c)] = s[c];
    }
  });
}

}  // namespace datadyn::elastic
