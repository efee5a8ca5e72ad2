#include "wave/wave_features.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "wave/level_set_2d.hpp"

namespace datadyn::wave {

double WaveFeatures::height(std::size_t n, std::size_t t, double x) const {
  const double u =
      std::clamp((x - grid.origin.x()) / grid.spacing, 0.0, static_cast<double>(grid.nx - 1));
  const auto i0 = static_cast<std::size_t>(std::floor(u));
  const std::size_t i1 = std::min(i0 + 1, grid.nx - 1);
  const double w = u - static_cast<double>(i0);
  const float* row = heights.data() + (n * frames + t) * grid.nx;
  return (1 - w) * row[i0] + w * row[i1];
}

double WaveFeatures::max_height(std::size_t n, double x) const {
  double h = -std::numeric_limits<double>::infinity();
  for (std::size_t t = 0; t < frames; ++t) h = std::max(h, height(n, t, x));
  return h;
}

std::size_t WaveFeatures::arrival_frame(std::size_t n, double x, double fraction) const {
  const double start = height(n, 0, x), top = max_height(n, x);
  const double level = start + fraction * (top - start);
  if (!(top > start)) return 0;
  for (std::size_t t = 0; t < frames; ++t)
    if (height(n, t, x) >= level) return t;
  return frames - 1;
}

FeatureBuilder::FeatureBuilder(const Grid2Spec& grid, double iso, std::size_t simulations,
                               std::size_t frames) {
  f_.grid = grid;
  f_.iso = iso;
  f_.simulations = simulations;
  f_.frames = frames;
  f_.heights.assign(simulations * frames * grid.nx, 0.0f);
  sums_ = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(simulations),
                                static_cast<Eigen::Index>(simulations));
}

void FeatureBuilder::add_frame(std::size_t t, const std::vector<Grid2>& densities) {
  const std::size_t n = f_.simulations;
  DATADYN_CHECK_EQ(densities.size(), n);
  DATADYN_CHECK_LT(t, f_.frames);
  for (const Grid2& g : densities) DATADYN_CHECK(g.spec == f_.grid);
  const Grid2Spec& spec = f_.grid;
  for (std::size_t s = 0; s < n; ++s) {
    float* row = f_.heights.data() + (s * f_.frames + t) * spec.nx;
    for (std::size_t i = 0; i < spec.nx; ++i)
      row[i] = static_cast<float>(water_height(
          densities[s], spec.origin.x() + spec.spacing * static_cast<double>(i), f_.iso));
  }
  // Pairwise sums of squared differences, one pair per task, each summed in sample order.
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) pairs.emplace_back(a, b);
  std::vector<double> part(pairs.size(), 0.0);
  parallel_for(pairs.size(), 1, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p) {
      const auto& va = densities[pairs[p].first].values;
      const auto& vb = densities[pairs[p].second].values;
      double sum = 0.0;
      for (std::size_t k = 0; k < va.size(); ++k) {
        const double d = static_cast<double>(va[k]) - vb[k];
        sum += d * d;
      }
      part[p] = sum;
    }
  });
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto a = static_cast<Eigen::Index>(pairs[p].first),
               b = static_cast<Eigen::Index>(pairs[p].second);
    sums_(a, b) += part[p];
    sums_(b, a) = sums_(a, b);
  }
}

WaveFeatures FeatureBuilder::finish() {
  const double top = sums_.size() ? sums_.maxCoeff() : 0.0;
  f_.distance = top > 0 ? Eigen::MatrixXd(sums_ / top) : sums_;
  return std::move(f_);
}

}  // namespace datadyn::wave
