// wave-edit speed, measured in one run against straightforward reference implementations:
//  1. optimal slice selection for 100 simulations x 64 slices (goal <= 10 ms) against a DP that
//     recomputes every score where it is used;
//  2. a 120-frame edit at 256 x 128 x 64 voxels (goal <= 60 s on 2 cores): density grids, 2D SDFs,
//     the blend and the cache write, against a reference SDF that measures every sample's distance
//     to every surface crossing of the grid (no narrow band), timed on two frames.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>

#include "core/parallel.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "wave/density_grid.hpp"
#include "wave/level_set_2d.hpp"
#include "wave/slice_blend.hpp"
#include "wave/slice_selection.hpp"

using namespace datadyn;
using namespace datadyn::wave;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Eq. 7 by a DP that recomputes S_h (eq. 6, a max over all simulations) each time it needs it.
double reference_optimal(const SelectionProblem& p) {
  const auto n = p.heights.size(), s = p.target.size();
  auto sh = [&](Eigen::Index m, Eigen::Index i) {
    double worst = 0;
    for (Eigen::Index k = 0; k < n; ++k)
      worst = std::max(worst, std::abs(p.heights(k) - p.target(i)));
    return worst > 0 ? 1 - std::abs(p.heights(m) - p.target(i)) / worst : 1.0;
  };
  auto neighbours = [&](Eigen::Index i) { return (i > 0 ? 1.0 : 0.0) + (i + 1 < s ? 1.0 : 0.0); };
  std::vector<double> best(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  for (Eigen::Index m = 0; m < n; ++m) best[static_cast<std::size_t>(m)] = p.alpha * sh(m, 0);
  for (Eigen::Index i = 1; i < s; ++i) {
    const double w = (1 - p.alpha) * (1 / neighbours(i - 1) + 1 / neighbours(i));
    for (Eigen::Index m = 0; m < n; ++m) {
      double v = -std::numeric_limits<double>::infinity();
      for (Eigen::Index k = 0; k < n; ++k)
        v = std::max(v, best[static_cast<std::size_t>(k)] + w * (1 - p.distance(k, m)));
      next[static_cast<std::size_t>(m)] = v + p.alpha * sh(m, i);
    }
    best.swap(next);
  }
  return *std::max_element(best.begin(), best.end());
}

/// Reference SDF: the distance of every sample to every crossing point on the grid's edges.
Grid2 reference_sdf(const Grid2& v, double iso, double band) {
  const Grid2Spec& g = v.spec;
  std::vector<Eigen::Vector2d> crossings;
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) {
      const bool in = v.at(i, j) > iso;
      if (i + 1 < g.nx && in != (v.at(i + 1, j) > iso)) {
        const double t = (iso - v.at(i, j)) / (v.at(i + 1, j) - v.at(i, j));
        crossings.push_back(g.position(i, j) + Eigen::Vector2d(t * g.spacing, 0));
      }
      if (j + 1 < g.ny && in != (v.at(i, j + 1) > iso)) {
        const double t = (iso - v.at(i, j)) / (v.at(i, j + 1) - v.at(i, j));
        crossings.push_back(g.position(i, j) + Eigen::Vector2d(0, t * g.spacing));
      }
    }
  Grid2 out{g, std::vector<float>(g.size())};
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) {
      double d = band * g.spacing;
      for (const auto& c : crossings) d = std::min(d, (c - g.position(i, j)).norm());
      out.at(i, j) = static_cast<float>(v.at(i, j) > iso ? -d : d);
    }
  return out;
}

/// Simulation k at frame t: water below a travelling, breaking-ish profile on an l0 lattice.
Points2 particles(int k, int t, double l0) {
  std::vector<Eigen::Vector2d> pts;
  for (double x = 0.5 * l0; x < 2.5; x += l0) {
    const double top = 0.25 + 0.02 * k +
                       0.15 * std::exp(-std::pow(x - 0.4 - 0.012 * t * (1 + 0.05 * k), 2) / 0.02);
    for (double y = 0.5 * l0; y < top; y += l0) pts.emplace_back(x, y);
  }
  Points2 p(static_cast<Eigen::Index>(pts.size()), 2);
  for (std::size_t i = 0; i < pts.size(); ++i)
    p.row(static_cast<Eigen::Index>(i)) = pts[i].transpose();
  return p;
}

}  // namespace

int main() {
  // 1. Selection.
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  SelectionProblem p;
  const int n = 100, s = 64;
  p.heights = Eigen::VectorXd(n);
  p.target = Eigen::VectorXd(s);
  for (int k = 0; k < n; ++k) p.heights(k) = 0.2 + 0.3 * u(rng);
  for (int i = 0; i < s; ++i) p.target(i) = 0.25 + 0.2 * std::sin(0.1 * i);
  p.distance = Eigen::MatrixXd::Zero(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      p.distance(a, b) = p.distance(b, a) = std::abs(p.heights(a) - p.heights(b)) / 0.3;
  p.alpha = 0.7;
  p.fixed = {{32, -1}};
  const int reps = 20;
  auto t0 = Clock::now();
  double objective = 0;
  for (int r = 0; r < reps; ++r) objective = select_optimal(p).objective;
  const double ours = since(t0) / reps;
  p.fixed.clear();  // the reference has no constraints: compare like with like
  const double free_objective = select_optimal(p).objective;
  t0 = Clock::now();
  double ref_objective = 0;
  for (int r = 0; r < reps; ++r) ref_objective = reference_optimal(p);
  const double ref = since(t0) / reps;
  std::printf(
      "optimal selection, %d simulations x %d slices: %.3f ms (goal <= 10 ms, %.2fx of it), "
      "reference DP %.3f ms, "
      "ratio %.1fx; objective %.6f (unconstrained %.6f, reference %.6f)\n",
      n, s, ours * 1e3, 10e-3 / ours, ref * 1e3, ref / ours, objective, free_objective,
      ref_objective);

  // 2. A 120-frame edit at 256 x 128 x 64 voxels.
  const double h = 0.01, l0 = 0.01;
  const Grid2Spec grid{256, 128, {0.0, 0.0}, h};
  const DensityParams density{2.1 * l0, 0.25};
  const double iso = 0.5 * M_PI * 2.1 * 2.1;
  const int slices = 10, frames = 120;
  const SliceLayout layout{0.0, 63 * h / (slices - 1), 0.0, h, 64};
  const auto path = std::filesystem::temp_directory_path() / "datadyn-bench-wave.h5";
  io::GridSpec spec;
  spec.nx = 256;
  spec.ny = 128;
  spec.nz = 64;
  spec.voxel_size = h;
  t0 = Clock::now();
  double prep = 0;
  {
    io::CacheWriter w(path, {"bench", "", "{}", ""});
    auto& seq = w.add_sequence("surface", {30.0, 3});
    seq.declare_grid("surface", spec);
    std::vector<float> volume(64 * grid.size());
    for (int t = 0; t < frames; ++t) {
      const auto tp = Clock::now();
      std::vector<Points2> pos;
      for (int k = 0; k < slices; ++k) pos.push_back(particles(k, t, l0));
      prep += since(tp);
      std::vector<Grid2> fields(slices);
      parallel_for(slices, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k)
          fields[k] = signed_distance(density_grid(pos[k], grid, density), iso, 3.0);
      });
      std::vector<const Grid2*> ptrs;
      for (const auto& f : fields) ptrs.push_back(&f);
      blend_slices(ptrs, layout, BlendMethod::Linear, volume);
      seq.append_frame(t, t / 30.0, {{"grids/surface", io::view(volume, {64, 128, 256})}});
    }
    w.commit();
  }
  const double total = since(t0) - prep;
  const double size_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::filesystem::remove(path);

  t0 = Clock::now();
  double ours_sdf = 0, ref_sdf = 0;
  for (int t = 0; t < 2; ++t) {
    const Grid2 v = density_grid(particles(3, 40 * t, l0), grid, density);
    auto ta = Clock::now();
    const Grid2 a = signed_distance(v, iso, 3.0);
    ours_sdf += since(ta);
    ta = Clock::now();
    const Grid2 b = reference_sdf(v, iso, 3.0);
    ref_sdf += since(ta);
    double diff = 0;
    for (std::size_t k = 0; k < a.values.size(); ++k)
      diff = std::max(diff, std::abs(static_cast<double>(a.values[k] - b.values[k])));
    if (t == 0)
      std::printf("  SDF: segments vs crossing points differ by at most %.2f voxels\n", diff / h);
  }
  std::printf(
      "120-frame edit at 256 x 128 x 64 voxels, %d slices: %.1f s (goal <= 60 s, %.2fx of it), "
      "%.0f ms/frame, "
      "file %.0f MB\n",
      slices, total, 60.0 / total, 1e3 * total / frames, size_mb);
  std::printf(
      "  2D SDF per slice: ours %.2f ms, reference (all crossings, no band) %.1f ms, ratio %.0fx; "
      "the "
      "reference would add %.0f s to the edit\n",
      ours_sdf / 2 * 1e3, ref_sdf / 2 * 1e3, ref_sdf / ours_sdf,
      (ref_sdf - ours_sdf) / 2 * slices * frames);
  return 0;
}
