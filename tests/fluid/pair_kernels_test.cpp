// The pair kernels of the neighbour search and the MPS pair loops at every vector level this CPU
// runs: each against a direct computation, and every level bit for bit against the scalar one.
// (A whole simulation at two levels can agree even when a kernel rounds differently, if no
// decision hinges on the last bit: an earlier AVX-512 distance with a fused multiply-add passed
// the mps-gen CLI comparison. Here the points are made to sit on the radius, where it would not.)

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/simd.hpp"
#include "fluid/pair_kernels.hpp"
#include "support/simd_levels.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

// n points (x, y interleaved) around (qx, qy) = (0.3, -0.2): random in a square of half-side 4,
// or (every other point) on the circle of radius 3 = sqrt(r2) at a random angle, or exactly on its
// axis or one unit in the last place inside. On the circle the squared distance is 9 to a few
// units in the last place, and one rounded differently (a fused multiply-add, say) flips the
// comparison with r2 for some of them.
std::vector<double> test_points(int n, unsigned seed, double qx, double qy) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0), angle(0.0, 6.283185307179586);
  std::vector<double> p(2 * static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    double dx = u(rng), dy = u(rng);
    if (j % 2 == 0) {
      const double a = angle(rng);
      dx = 3.0 * std::cos(a), dy = 3.0 * std::sin(a);
    }
    if (j % 10 == 1) dx = 3.0, dy = 0.0;
    if (j % 10 == 3) dx = std::nextafter(3.0, 0.0), dy = 0.0;
    p[2 * static_cast<std::size_t>(j)] = qx + dx;
    p[2 * static_cast<std::size_t>(j) + 1] = qy + dy;
  }
  return p;
}

}  // namespace

TEST_CASE("near_points: the brute-force neighbours at every vector level, every tail length") {
  const double qx = 0.3, qy = -0.2, r2 = 9.0;
  const std::vector<double> pts = test_points(61, 7, qx, qy);
  for (SimdLevel level : test::supported_simd_levels()) {
    CAPTURE(simd_level_name(level));
    // Ranges starting anywhere in the first 9 points and of every length up to 52 cover masked
    // tails of 1-7 points at each alignment; `self` inside and outside the range.
    for (int j0 = 0; j0 < 9; ++j0) {
      for (int j1 = j0; j1 <= j0 + 52; ++j1) {
        const int self = (j0 + j1) / 2;
        std::vector<int> expected;
        for (int j = j0; j < j1; ++j) {
          const double dx = pts[2 * static_cast<std::size_t>(j)] - qx;
          const double dy = pts[2 * static_cast<std::size_t>(j) + 1] - qy;
          if (dx * dx + dy * dy < r2 && j != self) expected.push_back(j);
        }
        std::vector<int> got(static_cast<std::size_t>(j1 - j0) + 16, -1);
        const int count = near_points(level, pts.data(), j0, j1, qx, qy, r2, self, got.data());
        got.resize(static_cast<std::size_t>(count));
        CAPTURE(j0);
        CAPTURE(j1);
        REQUIRE(got == expected);
      }
    }
  }
}

// The order sum_lanes defines, written out: lane k mod 8 in candidate order, then the tree.
template <class Term>
double in_lanes(int len, Term term) {
  double lane[8] = {};
  for (int k = 0; k < len; ++k) lane[k % 8] += term(k);
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

TEST_CASE("viscosity_sums: the Laplacian sums in the lanes' order, the same bits at every level") {
  // Candidates around (0.3, -0.2): every other one on the circle r = 3 = r_e, where the cut-off
  // decides on the last bit of r², gathered in a scrambled order; lengths 0-40 cover every tail.
  const double xi = 0.3, yi = -0.2, ui = 0.25, vi = -0.5, re_l = 3.0, rl2 = 9.0;
  const std::vector<double> pos = test_points(40, 11, xi, yi);
  std::vector<double> vel(pos.size());
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uv(-1.0, 1.0);
  for (double& v : vel) v = uv(rng);
  std::vector<int> index(40);
  for (int k = 0; k < 40; ++k) index[static_cast<std::size_t>(k)] = (7 * k) % 40;
  int inside = 0;
  for (int len = 0; len <= 40; ++len) {
    // The definition: w = r_e (1 / r) - 1 inside r_e (1 / r and the square root correctly
    // rounded, as IEEE arithmetic does them at every width), 0 beyond.
    const auto w = [&](int k) {
      const std::size_t j = static_cast<std::size_t>(index[static_cast<std::size_t>(k)]);
      const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi, r2 = dx * dx + dy * dy;
      return r2 < rl2 ? re_l * (1.0 / std::sqrt(r2)) - 1.0 : 0.0;
    };
    const auto v = [&](int k, int c) {
      return vel[2 * static_cast<std::size_t>(index[static_cast<std::size_t>(k)]) +
                 static_cast<std::size_t>(c)];
    };
    const double lx = in_lanes(len, [&](int k) { return (v(k, 0) - ui) * w(k); });
    const double ly = in_lanes(len, [&](int k) { return (v(k, 1) - vi) * w(k); });
    if (len == 40)
      for (int k = 0; k < len; ++k) {
        const std::size_t j = static_cast<std::size_t>(index[static_cast<std::size_t>(k)]);
        const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
        inside += dx * dx + dy * dy < rl2;
      }
    for (SimdLevel level : test::supported_simd_levels()) {
      CAPTURE(simd_level_name(level));
      CAPTURE(len);
      const VelocityLaplacian got = viscosity_sums(level, pos.data(), vel.data(), index.data(), len,
                                                   xi, yi, ui, vi, re_l, rl2);
      // Bit for bit: every level adds the same products in the same order.
      REQUIRE(std::memcmp(&got.x, &lx, sizeof lx) == 0);
      REQUIRE(std::memcmp(&got.y, &ly, sizeof ly) == 0);
    }
  }
  // The data exercise both sides of the cut-off.
  CHECK(inside > 10);
  CHECK(inside < 35);
}

TEST_CASE("close_candidates: the candidates within the collision distance at every level") {
  const double xi = 0.3, yi = -0.2, dc2 = 9.0;
  const std::vector<double> pos = test_points(40, 13, xi, yi);
  std::vector<int> index(40);
  for (int k = 0; k < 40; ++k) index[static_cast<std::size_t>(k)] = (11 * k) % 40;
  for (int len = 0; len <= 40; ++len) {
    std::vector<int> expected;
    for (int k = 0; k < len; ++k) {
      const std::size_t j = static_cast<std::size_t>(index[static_cast<std::size_t>(k)]);
      const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi;
      if (dx * dx + dy * dy < dc2) expected.push_back(k);
    }
    if (len == 40) REQUIRE(expected.size() > 5);
    for (SimdLevel level : test::supported_simd_levels()) {
      CAPTURE(simd_level_name(level));
      CAPTURE(len);
      std::vector<int> got(static_cast<std::size_t>(len) + 16, -1);
      got.resize(static_cast<std::size_t>(
          close_candidates(level, pos.data(), index.data(), len, xi, yi, dc2, got.data())));
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("density_pairs: weights and pair lists as defined, the same bits at every level") {
  // A particle at (xi, yi) with 45 candidates: radii r_e(density) = 2.1, r_e(Laplacian) = 3.1 in
  // units of l0 = 1; every fourth candidate a dummy (counted in n only); velocities for the
  // divergence.
  const double xi = 0.3, yi = -0.2, re_d = 2.1, re_l = 3.1;
  const int len = 45;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-3.3, 3.3), uv(-1.0, 1.0);
  std::vector<double> pos(2 * len), vel(2 * len);
  std::vector<std::int32_t> solid(len);
  std::vector<int> cand(len);
  for (int j = 0; j < len; ++j) {
    const std::size_t s = static_cast<std::size_t>(j);
    pos[2 * s] = xi + u(rng);
    pos[2 * s + 1] = yi + u(rng);
    vel[2 * s] = uv(rng);
    vel[2 * s + 1] = uv(rng);
    solid[s] = j % 4 == 3 ? 0 : 1;
    cand[s] = (11 * j) % len;
  }
  pos[0] = xi + re_d;  // exactly on the density radius: outside (r < r_e)
  pos[1] = yi;
  struct Out {
    DensitySums s;
    std::vector<int> grad_index, lap_index;
    std::vector<double> grad_x, grad_y, lap_w;
  };
  const auto run = [&](SimdLevel level) {
    Out o;
    o.grad_index.assign(len, -1);
    o.lap_index.assign(len, -1);
    o.grad_x.assign(len, 0.0);
    o.grad_y.assign(len, 0.0);
    o.lap_w.assign(len, 0.0);
    o.s = density_pairs(level, pos.data(), cand.data(), solid.data(), len, xi, yi, re_d, re_l,
                        re_d * re_d, re_l * re_l, vel.data(), 0.1, -0.3, o.grad_index.data(),
                        o.grad_x.data(), o.grad_y.data(), o.lap_index.data(), o.lap_w.data());
    return o;
  };
  const Out base = run(SimdLevel::Baseline);

  // Against the definitions, summed in candidate order: w(r) = r_e / r − 1 for r < r_e (dummies
  // included in n), gradient pairs r_ij w / r² and Laplacian pairs for non-dummies. The kernel
  // forms r_e (1 / r) instead of r_e / r and adds in eight lanes (sum_lanes): a relative
  // difference of a few units in the last place per term, 1e-13 on these sums of at most 45
  // terms of size <= 20.
  double n = 0, div = 0, cxx = 0;
  int grad = 0, lap = 0;
  for (int k = 0; k < len; ++k) {
    const std::size_t j = static_cast<std::size_t>(cand[static_cast<std::size_t>(k)]);
    const double dx = pos[2 * j] - xi, dy = pos[2 * j + 1] - yi, r = std::hypot(dx, dy);
    if (r < re_d) {
      const double w = re_d / r - 1.0;
      n += w;
      if (solid[j] != 0) {
        const double gx = dx * w / (r * r), gy = dy * w / (r * r);
        CHECK(base.grad_index[static_cast<std::size_t>(grad)] == static_cast<int>(j));
        CHECK(base.grad_x[static_cast<std::size_t>(grad)] == doctest::Approx(gx).epsilon(1e-13));
        div += (vel[2 * j] - 0.1) * gx + (vel[2 * j + 1] + 0.3) * gy;
        cxx += gx * dx;
        ++grad;
      }
    }
    if (r < re_l && solid[j] != 0) {
      CHECK(base.lap_index[static_cast<std::size_t>(lap)] == static_cast<int>(j));
      CHECK(base.lap_w[static_cast<std::size_t>(lap)] ==
            doctest::Approx(re_l / r - 1.0).epsilon(1e-13));
      ++lap;
    }
  }
  REQUIRE(grad > 3);
  REQUIRE(lap > grad);
  CHECK(base.s.grad == grad);
  CHECK(base.s.lap == lap);
  CHECK(base.s.n == doctest::Approx(n).epsilon(1e-13));
  // Each divergence term multiplies three rounded factors (velocity difference, coordinate
  // difference, w / r²) formed in another order than here, and its terms have both signs, so the
  // sum may cancel for other data (here a close pair dominates: −65 of −68): ten times the margin.
  CHECK(base.s.div == doctest::Approx(div).epsilon(1e-12));
  CHECK(base.s.cxx == doctest::Approx(cxx).epsilon(1e-13));

  const auto same_bits = [](const auto& a, const auto& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof a[0]) == 0;
  };
  for (SimdLevel level : test::supported_simd_levels()) {
    CAPTURE(simd_level_name(level));
    const Out o = run(level);
    const double sums[] = {o.s.n, o.s.div, o.s.cxx, o.s.cxy, o.s.cyy};
    const double base_sums[] = {base.s.n, base.s.div, base.s.cxx, base.s.cxy, base.s.cyy};
    CHECK(std::memcmp(sums, base_sums, sizeof sums) == 0);
    CHECK(o.s.grad == base.s.grad);
    CHECK(o.s.lap == base.s.lap);
    // Only the pairs' slots are defined (the scalar version also writes the slot after).
    const auto g = static_cast<std::size_t>(base.s.grad), l = static_cast<std::size_t>(base.s.lap);
    const auto head = [](const auto& v, std::size_t k) {
      return std::vector(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
    };
    CHECK(same_bits(head(o.grad_index, g), head(base.grad_index, g)));
    CHECK(same_bits(head(o.grad_x, g), head(base.grad_x, g)));
    CHECK(same_bits(head(o.grad_y, g), head(base.grad_y, g)));
    CHECK(same_bits(head(o.lap_index, l), head(base.lap_index, l)));
    CHECK(same_bits(head(o.lap_w, l), head(base.lap_w, l)));
  }
}
