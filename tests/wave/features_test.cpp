// Database features (eqs. 4-5): D symmetric, zero on the diagonal, in [0, 1]; H_n the maximum of
// h_n over time; the arrival frame.

#include <doctest/doctest.h>

#include <random>

#include "wave/density_grid.hpp"
#include "wave/wave_features.hpp"

using namespace datadyn;
using namespace datadyn::wave;

namespace {

/// Water columns of height h on a grid: V = 2 below h, 0 above.
Grid2 column(const Grid2Spec& spec, double h) {
  Grid2 g{spec, std::vector<float>(spec.size(), 0.0f)};
  for (std::size_t j = 0; j < spec.ny; ++j)
    for (std::size_t i = 0; i < spec.nx; ++i)
      if (spec.position(i, j).y() <= h) g.at(i, j) = 2.0f;
  return g;
}

}  // namespace

TEST_CASE("features: D is symmetric, zero on the diagonal, in [0, 1] with a 1 somewhere") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.0f, 3.0f);
  Grid2Spec spec{12, 9, {0, 0}, 0.05};
  const std::size_t n = 5, frames = 4;
  FeatureBuilder b(spec, 1.0, n, frames);
  for (std::size_t t = 0; t < frames; ++t) {
    std::vector<Grid2> grids;
    for (std::size_t k = 0; k < n; ++k) {
      Grid2 g{spec, std::vector<float>(spec.size())};
      for (float& v : g.values) v = u(rng);
      grids.push_back(g);
    }
    b.add_frame(t, grids);
  }
  const WaveFeatures f = b.finish();
  CHECK(f.distance.rows() == 5);
  CHECK((f.distance - f.distance.transpose()).cwiseAbs().maxCoeff() == 0.0);
  CHECK(f.distance.diagonal().cwiseAbs().maxCoeff() == 0.0);
  CHECK(f.distance.minCoeff() >= 0.0);
  CHECK(f.distance.maxCoeff() == doctest::Approx(1.0));
}

TEST_CASE("features: D orders simulations by how much their fields differ") {
  Grid2Spec spec{10, 20, {0, 0}, 0.05};
  FeatureBuilder b(spec, 1.0, 3, 1);
  b.add_frame(0, {column(spec, 0.2), column(spec, 0.3), column(spec, 0.8)});
  const WaveFeatures f = b.finish();
  // Columns differ in (Δh / spacing) rows of 10 samples each, squared difference 4 per sample:
  // D is proportional to |Δh|: 0.1, 0.6, 0.5 -> normalised 1/6, 1, 5/6.
  CHECK(f.distance(0, 1) == doctest::Approx(1.0 / 6).epsilon(0.15));
  CHECK(f.distance(0, 2) == doctest::Approx(1.0));
  CHECK(f.distance(1, 2) == doctest::Approx(5.0 / 6).epsilon(0.05));
}

TEST_CASE("features: H_n is the highest water over time, arrival is the first rise") {
  Grid2Spec spec{6, 41, {0, 0}, 0.01};
  FeatureBuilder b(spec, 1.0, 1, 5);
  const double h[5] = {0.05, 0.08, 0.3, 0.2, 0.1};
  for (std::size_t t = 0; t < 5; ++t) b.add_frame(t, {column(spec, h[t])});
  const WaveFeatures f = b.finish();
  // The surface sits between the last wet row and the first dry one: within one spacing.
  CHECK(f.max_height(0, 0.02) == doctest::Approx(0.3).epsilon(0.01 / 0.3));
  for (std::size_t t = 0; t < 5; ++t) CHECK(std::abs(f.height(0, t, 0.02) - h[t]) <= 0.01);
  // Rise 0.05 -> 0.3: a quarter of it (0.1125) is first reached at frame 2.
  CHECK(f.arrival_frame(0, 0.02, 0.25) == 2);
  CHECK(f.arrival_frame(0, 0.02, 0.1) == 1);  // 0.075 reached at frame 1 (0.08)
}
