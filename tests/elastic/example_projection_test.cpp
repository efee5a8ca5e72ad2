// Strain projection (Koyama et al. eqs. 6-7, section 4.4): known weights are recovered, weights
// sum to 1, β pulls towards the rest, groups have their own weights, and dependent examples are
// either an error (no ridge) or share their weight (ridge).

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>

#include <Eigen/Eigenvalues>

#include "elastic/example_projection.hpp"
#include "fixtures.hpp"

using namespace datadyn;
using namespace datadyn::elastic;
using namespace datadyn::elastic::test;

namespace {

struct Setup {
  TetMesh mesh = standard_cuboid();
  RegionSet regions;
  std::vector<Points3> examples;
  Setup() {
    regions = one_ring_regions(mesh.vertices, mesh.tets, lumped_masses(mesh, 1000.0));
    examples = {twisted(mesh), s_shaped(mesh)};
    Deformation shear;
    shear.kind = DeformationKind::Shear;
    shear.direction = 2;
    shear.amount = 0.4;
    examples.push_back(deform(mesh.vertices, shear));
  }
};

/// S = Σ_k w_k S_k for weights w (w_0 = 1 − Σ w_k).
std::vector<double> combination(const ExampleSpace& space, const std::vector<double>& w) {
  std::vector<double> s = space.rest_strain;
  const std::size_t size = s.size();
  for (std::size_t k = 0; k < w.size(); ++k)
    for (std::size_t j = 0; j < size; ++j) s[j] += w[k] * space.offsets[size * k + j];
  return s;
}

}  // namespace

TEST_CASE("projection recovers known weights and they sum to 1") {
  Setup t;
  const ExampleSpace space = build_example_space(t.regions, t.mesh.vertices, t.examples, {}, 0.0);
  CHECK(space.condition[0] < 1e6);  // three distinct examples: well conditioned
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<double> w{u(rng), u(rng), u(rng)};
    std::vector<double> weights;
    project_strain(space, combination(space, w), 1.0, false, weights);
    INFO("w = " << w[0] << ", " << w[1] << ", " << w[2]);
    // ~1e-10: eq. 7 in double precision with cond(LᵀL) < 1e6.
    for (int k = 0; k < 3; ++k)
      CHECK(weights[static_cast<std::size_t>(k) + 1] ==
            doctest::Approx(w[static_cast<std::size_t>(k)]).epsilon(1e-10));
    CHECK(weights[0] + weights[1] + weights[2] + weights[3] == doctest::Approx(1.0).epsilon(1e-14));
  }
  // An example's own strain gives that example alone.
  std::vector<double> weights;
  project_strain(space, strain_vector(t.regions, t.examples[1]), 1.0, true, weights);
  CHECK(weights[0] == doctest::Approx(0.0).epsilon(1e-10));
  CHECK(weights[2] == doctest::Approx(1.0).epsilon(1e-10));
}

TEST_CASE("any strain gives weights that sum to 1, with beta and with the default ridge") {
  Setup t;
  const ExampleSpace space = build_example_space(t.regions, t.mesh.vertices, t.examples, {}, 1e-5);
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0.0, 0.1);
  for (double beta : {1.0, 0.995, 0.5, 0.0}) {
    std::vector<double> s = space.rest_strain;
    for (double& v : s) v += n(rng);
    for (const bool convex : {false, true}) {
      std::vector<double> w;
      project_strain(space, s, beta, convex, w);
      double sum = 0;
      for (double x : w) sum += x;
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-14));
    }
  }
  // β scales the example weights: w_k(β) = β w_k(1).
  const std::vector<double> s = combination(space, {0.3, -0.2, 0.5});
  std::vector<double> w1, wb;
  project_strain(space, s, 1.0, false, w1);
  project_strain(space, s, 0.9, false, wb);
  for (int k = 1; k <= 3; ++k)
    CHECK(wb[static_cast<std::size_t>(k)] ==
          doctest::Approx(0.9 * w1[static_cast<std::size_t>(k)]).epsilon(1e-14));
  // The default ridge biases recovered weights by about ridge x cond: well below 1e-3 here.
  CHECK(w1[1] == doctest::Approx(0.3).epsilon(1e-3));
  CHECK(w1[3] == doctest::Approx(0.5).epsilon(1e-3));
}

TEST_CASE("groups have their own weights (localised examples)") {
  Setup t;
  std::vector<int> groups(225);
  for (int i = 0; i < 225; ++i)
    groups[static_cast<std::size_t>(i)] = t.mesh.vertices(i, 1) < 0.8 ? 0 : 1;
  const ExampleSpace space =
      build_example_space(t.regions, t.mesh.vertices, t.examples, groups, 0.0);
  REQUIRE(space.group_count == 2);
  // Group 0 posed as the twist, group 1 as the S-shape: each group recovers its own example.
  const std::vector<double> twist = strain_vector(t.regions, t.examples[0]);
  const std::vector<double> s_shape = strain_vector(t.regions, t.examples[1]);
  std::vector<double> mixed(twist.size());
  for (int r = 0; r < 225; ++r)
    for (int c = 0; c < 6; ++c) {
      const auto j = static_cast<std::size_t>(6 * r + c);
      mixed[j] = groups[static_cast<std::size_t>(r)] == 0 ? twist[j] : s_shape[j];
    }
  std::vector<double> w;
  project_strain(space, mixed, 1.0, true, w);
  CHECK(w[1] == doctest::Approx(1.0).epsilon(1e-10));  // group 0: twist
  CHECK(w[2] == doctest::Approx(0.0).epsilon(1e-10));
  CHECK(w[4 + 2] == doctest::Approx(1.0).epsilon(1e-10));  // group 1: S-shape
  CHECK(w[4 + 1] == doctest::Approx(0.0).epsilon(1e-10));
  std::vector<double> blended;
  blend_strains(space, w, blended);
  for (std::size_t j = 0; j < mixed.size(); ++j)
    CHECK(blended[j] == doctest::Approx(mixed[j]).epsilon(1e-10));
}

TEST_CASE("two identical examples: an error without a ridge, an equal split with one") {
  Setup t;
  const std::vector<Points3> twins{t.examples[0], t.examples[0]};
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, twins, {}, 0.0),
                  std::invalid_argument);
  const ExampleSpace space = build_example_space(t.regions, t.mesh.vertices, twins, {}, 1e-5);
  CHECK(space.condition[0] > 1e10);
  std::vector<double> w;
  project_strain(space, strain_vector(t.regions, t.examples[0]), 1.0, true, w);
  CHECK(w[1] == doctest::Approx(w[2]).epsilon(1e-9));
  // Together they carry the example (the ridge takes ~ridge/2 of it).
  CHECK(w[1] + w[2] == doctest::Approx(1.0).epsilon(1e-4));
  // An example equal to the rest pose gets weight 0 (with the ridge), not a NaN.
  const ExampleSpace rest =
      build_example_space(t.regions, t.mesh.vertices, {t.mesh.vertices}, {}, 1e-5);
  project_strain(rest, strain_vector(t.regions, t.examples[0]), 1.0, true, w);
  CHECK(w[1] == 0.0);
  CHECK(w[0] == 1.0);
}

TEST_CASE("bad examples and groups are rejected") {
  Setup t;
  Points3 short_pose = t.examples[0].topRows(100);
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, {short_pose}, {}, 1e-5),
                  std::invalid_argument);
  Points3 nan_pose = t.examples[0];
  nan_pose(3, 1) = std::nan("");
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, {nan_pose}, {}, 1e-5),
                  std::invalid_argument);
  std::vector<int> groups(225, 0);
  groups[5] = 2;  // group 1 empty
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, t.examples, groups, 1e-5),
                  std::invalid_argument);
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, t.examples, {}, -1.0),
                  std::invalid_argument);
  std::vector<Points3> many(kMaxExamples + 1, t.examples[0]);
  CHECK_THROWS_AS(build_example_space(t.regions, t.mesh.vertices, many, {}, 1e-5),
                  std::invalid_argument);
}

TEST_CASE(
    "convex weights: a strain beyond one example gives that example, one before it the rest") {
  // One example: the hull is the segment from the rest pose to the example, and the constrained
  // least squares of eq. 7 is eq. 7's weight clamped to [0, 1] (closed form). Eq. 7 as written
  // gives 3 and -1: the extrapolation that flattened a body squashed past its squash example.
  Setup t;
  const ExampleSpace space =
      build_example_space(t.regions, t.mesh.vertices, {t.examples[1]}, {}, 0.0);
  for (const auto& [along, expected] :
       std::vector<std::pair<double, double>>{{3.0, 1.0}, {-1.0, 0.0}, {0.4, 0.4}, {1.0, 1.0}}) {
    INFO("S = S_0 + " << along << " (S_1 - S_0)");
    std::vector<double> w, free;
    project_strain(space, combination(space, {along}), 1.0, true, w);
    project_strain(space, combination(space, {along}), 1.0, false, free);
    CHECK(free[1] == doctest::Approx(along).epsilon(1e-10));
    CHECK(w[1] == doctest::Approx(expected).epsilon(1e-10));
    CHECK(w[0] == doctest::Approx(1.0 - expected).epsilon(1e-10));
    // β blends what the hull gives: the example's weight is β times it.
    project_strain(space, combination(space, {along}), 0.995, true, w);
    CHECK(w[1] == doctest::Approx(0.995 * expected).epsilon(1e-10));
  }
}

TEST_CASE("convex weights solve the hull's least squares: projected gradient agrees") {
  // A second method for the constrained problem min ½ uᵀ A u − dᵀ u, u >= 0, Σ u <= 1: projected
  // gradient descent with step 1 / ||A|| (it converges for a convex quadratic) and the exact
  // Euclidean projection onto that set. 1e-6 in the weights: 2e5 iterations of a problem with
  // condition below 1e3 converge far past it.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto project = [](Eigen::VectorXd v) {
    v = v.cwiseMax(0.0);
    if (v.sum() <= 1.0) return v;
    // Onto the simplex Σ = 1: subtract the threshold tau found by sorting.
    Eigen::VectorXd sorted = v;
    std::sort(sorted.data(), sorted.data() + sorted.size(), std::greater<>());
    double cumulative = 0, tau = 0;
    for (Eigen::Index i = 0; i < sorted.size(); ++i) {
      cumulative += sorted[i];
      const double candidate = (cumulative - 1.0) / static_cast<double>(i + 1);
      if (sorted[i] > candidate) tau = candidate;
    }
    return (v.array() - tau).cwiseMax(0.0).matrix().eval();
  };
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 1 + trial % 5;
    Eigen::MatrixXd L(12, n);
    for (Eigen::Index i = 0; i < L.size(); ++i) L.data()[i] = normal(rng);
    const Eigen::MatrixXd A = L.transpose() * L + 0.1 * Eigen::MatrixXd::Identity(n, n);
    Eigen::VectorXd d(n);
    for (int k = 0; k < n; ++k) d[k] = 3.0 * normal(rng);
    const Eigen::VectorXd u = convex_weights(A, d);
    INFO("trial " << trial << ", n = " << n);
    CHECK(u.minCoeff() >= 0.0);
    CHECK(u.sum() <= 1.0 + 1e-12);
    const double step = 1.0 / A.operatorNorm();
    Eigen::VectorXd v = Eigen::VectorXd::Zero(n);
    for (int it = 0; it < 200000; ++it) v = project(v - step * (A * v - d));
    CHECK((u - v).cwiseAbs().maxCoeff() < 1e-6);
  }
}
