#include "wave/level_set_2d.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/check.hpp"

namespace datadyn::wave {

namespace {

/// Distance from point p to segment [a, b].
double segment_distance(const Eigen::Vector2d& p, const Eigen::Vector2d& a,
                        const Eigen::Vector2d& b) {
  const Eigen::Vector2d ab = b - a;
  const double len2 = ab.squaredNorm();
  const double t = len2 > 0 ? std::clamp((p - a).dot(ab) / len2, 0.0, 1.0) : 0.0;
  return (a + t * ab - p).norm();
}

/// Highest y in column i where the field crosses iso from inside below to outside above.
double column_height(const Grid2& v, std::size_t i, double iso) {
  const Grid2Spec& g = v.spec;
  for (std::size_t j = g.ny; j-- > 0;) {
    if (v.at(i, j) >= iso) {
      if (j + 1 == g.ny) return g.position(i, j).y();
      const double a = v.at(i, j), b = v.at(i, j + 1);  // a >= iso > b
      const double t = (a - iso) / (a - b);
      return g.position(i, j).y() + t * g.spacing;
    }
  }
  return g.origin.y();
}

}  // namespace

Grid2 signed_distance(const Grid2& density, double iso, double band_voxels) {
  const Grid2Spec& g = density.spec;
  DATADYN_CHECK_GE(g.nx, std::size_t{2});
  DATADYN_CHECK_GE(g.ny, std::size_t{2});
  const double band = band_voxels * g.spacing;
  std::vector<double> dist(g.size(), band);
  const auto inside = [&](std::size_t i, std::size_t j) { return density.at(i, j) > iso; };
  // Crossing point on the edge between samples a and b (one inside, one not).
  const auto crossing = [&](std::size_t ia, std::size_t ja, std::size_t ib, std::size_t jb) {
    const double va = density.at(ia, ja), vb = density.at(ib, jb);
    const double t = std::clamp((iso - va) / (vb - va), 0.0, 1.0);
    return Eigen::Vector2d((1 - t) * g.position(ia, ja) + t * g.position(ib, jb));
  };
  const long reach = static_cast<long>(std::ceil(band_voxels)) + 1;
  for (std::size_t j = 0; j + 1 < g.ny; ++j) {
    for (std::size_t i = 0; i + 1 < g.nx; ++i) {
      // Corners counter-clockwise: (i,j), (i+1,j), (i+1,j+1), (i,j+1); edges between them.
      const std::array<std::array<std::size_t, 2>, 4> c{
          {{i, j}, {i + 1, j}, {i + 1, j + 1}, {i, j + 1}}};
      std::array<Eigen::Vector2d, 4> points;
      int count = 0;
      for (int e = 0; e < 4; ++e) {
        const auto& a = c[static_cast<std::size_t>(e)];
        const auto& b = c[static_cast<std::size_t>((e + 1) % 4)];
        if (inside(a[0], a[1]) != inside(b[0], b[1])) {
          points[static_cast<std::size_t>(count++)] = crossing(a[0], a[1], b[0], b[1]);
        }
      }
      if (count == 0) continue;
      std::array<std::array<int, 2>, 2> segments{{{0, 1}, {-1, -1}}};
      int segment_count = 1;
      if (count == 4) {
        // Saddle: the cell centre's mean value decides which corners connect.
        const double centre = 0.25 * (density.at(i, j) + density.at(i + 1, j) +
                                      density.at(i + 1, j + 1) + density.at(i, j + 1));
        const bool corner0_inside = inside(i, j);
        // Crossings are on edges 0,1,2,3 in order. If the centre agrees with corner 0, corner 0's
        // region is joined to corner 2's: cut off corners 1 and 3 (edges 0-1 and 2-3).
        if ((centre > iso) == corner0_inside)
          segments = {{{0, 1}, {2, 3}}};
        else
          segments = {{{3, 0}, {1, 2}}};
        segment_count = 2;
      }
      for (int s = 0; s < segment_count; ++s) {
        const Eigen::Vector2d& a =
            points[static_cast<std::size_t>(segments[static_cast<std::size_t>(s)][0])];
        const Eigen::Vector2d& b =
            points[static_cast<std::size_t>(segments[static_cast<std::size_t>(s)][1])];
        const long i0 = std::max(0L, static_cast<long>(i) - reach);
        const long i1 = std::min(static_cast<long>(g.nx) - 1, static_cast<long>(i) + 1 + reach);
        const long j0 = std::max(0L, static_cast<long>(j) - reach);
        const long j1 = std::min(static_cast<long>(g.ny) - 1, static_cast<long>(j) + 1 + reach);
        for (long jj = j0; jj <= j1; ++jj) {
          for (long ii = i0; ii <= i1; ++ii) {
            const std::size_t k =
                static_cast<std::size_t>(jj) * g.nx + static_cast<std::size_t>(ii);
            const double dd = segment_distance(
                g.position(static_cast<std::size_t>(ii), static_cast<std::size_t>(jj)), a, b);
            if (dd < dist[k]) dist[k] = dd;
          }
        }
      }
    }
  }
  Grid2 out{g, std::vector<float>(g.size())};
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) {
      const std::size_t k = j * g.nx + i;
      out.values[k] = static_cast<float>(inside(i, j) ? -dist[k] : dist[k]);
    }
  return out;
}

double water_height(const Grid2& density, double x, double iso) {
  const Grid2Spec& g = density.spec;
  const double u = std::clamp((x - g.origin.x()) / g.spacing, 0.0, static_cast<double>(g.nx - 1));
  const auto i0 = static_cast<std::size_t>(std::floor(u));
  const std::size_t i1 = std::min(i0 + 1, g.nx - 1);
  const double t = u - static_cast<double>(i0);
  return (1 - t) * column_height(density, i0, iso) + t * column_height(density, i1, iso);
}

}  // namespace datadyn::wave
