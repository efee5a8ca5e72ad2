// The PPE solver's vector kernels at every level this CPU runs: each against its definition, and
// every level bit for bit against the scalar one. (The whole-run comparison of mps-gen at two
// levels can miss a kernel that rounds differently when no decision hinges on the last bit; here
// the couplings are made to sit exactly on the threshold.)

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/simd.hpp"
#include "fluid/ppe_kernels.hpp"
#include "support/simd_levels.hpp"

using namespace datadyn;
using namespace datadyn::fluid;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  // Empty vectors may hand memcmp null pointers, which it must not be given even for 0 bytes.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

TEST_CASE("product_rows: the four partial sums as defined, the same bits at every level") {
  // 40 rows of 0-37 entries each (every remainder of the four-wide loop), random columns of a
  // 60-vector.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> colu(0, 59);
  const int rows = 40;
  std::vector<int> outer{0}, col;
  std::vector<double> val;
  for (int i = 0; i < rows; ++i) {
    const int len = (i * 7) % 38;
    for (int k = 0; k < len; ++k) {
      col.push_back(colu(rng));
      val.push_back(u(rng));
    }
    outer.push_back(static_cast<int>(col.size()));
  }
  std::vector<double> v(60);
  for (double& x : v) x = u(rng);
  // The definition, written out.
  std::vector<double> expected(rows);
  double expected_dot = 0;
  for (int i = 0; i < rows; ++i) {
    double s[4] = {0, 0, 0, 0};
    const int e0 = outer[static_cast<std::size_t>(i)], e1 = outer[static_cast<std::size_t>(i) + 1];
    const int full = e0 + (e1 - e0) / 4 * 4;
    for (int e = e0; e < e1; ++e) {
      const std::size_t se = static_cast<std::size_t>(e);
      s[e < full ? (e - e0) % 4 : 0] += val[se] * v[static_cast<std::size_t>(col[se])];
    }
    expected[static_cast<std::size_t>(i)] = (s[0] + s[1]) + (s[2] + s[3]);
    expected_dot += expected[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(i)];
  }
  for (SimdLevel level : test::supported_simd_levels()) {
    CAPTURE(simd_level_name(level));
    std::vector<double> q(rows, -1.0);
    const double dot =
        product_rows(level, outer.data(), col.data(), val.data(), 0, rows, v.data(), q.data());
    CHECK(same_bits(q, expected));
    CHECK(std::memcmp(&dot, &expected_dot, sizeof dot) == 0);
  }
}

TEST_CASE("ap_slice: each row's sum in its entries' order, the same bits at every level") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> colu(0, 29);
  std::vector<double> xc(30);
  for (double& x : xc) x = u(rng);
  for (int width : {0, 1, 5, 9}) {
    CAPTURE(width);
    const int n = width * kSliceRows;
    std::vector<double> v(static_cast<std::size_t>(n));
    std::vector<int> col(v.size());
    for (int e = 0; e < n; ++e) {
      v[static_cast<std::size_t>(e)] = u(rng);
      col[static_cast<std::size_t>(e)] = colu(rng);
    }
    std::vector<double> expected(kSliceRows, 0.0);
    for (int k = 0; k < width; ++k)
      for (int r = 0; r < kSliceRows; ++r) {
        const std::size_t e = static_cast<std::size_t>(k * kSliceRows + r);
        expected[static_cast<std::size_t>(r)] += v[e] * xc[static_cast<std::size_t>(col[e])];
      }
    for (SimdLevel level : test::supported_simd_levels()) {
      CAPTURE(simd_level_name(level));
      std::vector<double> ap(kSliceRows, -1.0);
      ap_slice(level, v.data(), col.data(), 0, n, xc.data(), ap.data());
      CHECK(same_bits(ap, expected));
    }
  }
}

TEST_CASE("strong_couplings: the couplings at the threshold and in range, at every level") {
  // strong2 = 1/4 and diag[c] = 36: v² >= 9 is strong, so |v| = 3 sits exactly on the threshold
  // (3² = 9 = 36 / 4 exactly) and one unit in the last place below it must not count. Columns
  // run over [0, 24); the range [lo, hi) = [3, 20) cuts some of them off.
  const double strong2 = 0.25;
  std::vector<double> diag(24, 36.0);
  const double below = std::nextafter(3.0, 0.0), above = std::nextafter(3.0, 4.0);
  const std::vector<double> magnitudes = {3.0, below, above, 1.0, 5.0, 0.0};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> colu(0, 23);
  std::vector<int> inner;
  std::vector<double> val;
  for (int e = 0; e < 45; ++e) {
    inner.push_back(colu(rng));
    const double m = magnitudes[static_cast<std::size_t>(e) % magnitudes.size()];
    val.push_back(e % 2 == 0 ? -m : m);
  }
  const int lo = 3, hi = 20;
  for (int e0 = 0; e0 < 9; ++e0) {
    for (int e1 = e0; e1 <= 45; ++e1) {
      std::vector<int> want_col;
      std::vector<double> want_val;
      for (int e = e0; e < e1; ++e) {
        const std::size_t se = static_cast<std::size_t>(e);
        const int c = inner[se];
        if (c >= lo && c < hi && val[se] * val[se] >= strong2 * diag[static_cast<std::size_t>(c)]) {
          want_col.push_back(c);
          want_val.push_back(val[se]);
        }
      }
      for (SimdLevel level : test::supported_simd_levels()) {
        CAPTURE(simd_level_name(level));
        CAPTURE(e0);
        CAPTURE(e1);
        std::vector<int> got_col(static_cast<std::size_t>(e1 - e0) + 8, -1);
        std::vector<double> got_val(got_col.size(), 0.0);
        const int n = strong_couplings(level, inner.data(), val.data(), e0, e1, diag.data(),
                                       strong2, lo, hi, got_col.data(), got_val.data());
        got_col.resize(static_cast<std::size_t>(n));
        got_val.resize(static_cast<std::size_t>(n));
        REQUIRE(got_col == want_col);
        REQUIRE(same_bits(got_val, want_val));
      }
    }
  }
  // The data reach both sides of the threshold and of the range.
  int strong = 0, weak_at_threshold = 0, out_of_range = 0;
  for (std::size_t e = 0; e < val.size(); ++e) {
    const bool in = inner[e] >= lo && inner[e] < hi;
    out_of_range += !in;
    strong += in && std::abs(val[e]) >= 3.0;
    weak_at_threshold += in && std::abs(val[e]) == below;
  }
  CHECK(strong > 5);
  CHECK(weak_at_threshold > 1);
  CHECK(out_of_range > 3);
}
