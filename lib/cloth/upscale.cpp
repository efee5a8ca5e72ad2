#include "cloth/upscale.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::cloth {
namespace {

/// Up to four (node, weight) taps of a 1-D interpolation at parameter t in [0, m - 1].
struct Taps {
  std::array<int, 4> node{};
  std::array<double, 4> weight{};
  int count = 0;
  void add(int i, double w) {
    if (w == 0.0) return;  // e.g. Catmull-Rom at a node: one tap instead of four
    for (int k = 0; k < count; ++k)
      if (node[static_cast<std::size_t>(k)] == i) {
        weight[static_cast<std::size_t>(k)] += w;
        return;
      }
    node[static_cast<std::size_t>(count)] = i;
    weight[static_cast<std::size_t>(count)] = w;
    ++count;
  }
};

Taps taps_1d(double t, int m, Interpolation method) {
  Taps taps;
  if (m == 1) {
    taps.add(0, 1.0);
    return taps;
  }
  if (method == Interpolation::Biquadratic && m >= 3) {
    const int k = std::clamp(static_cast<int>(std::lround(t)), 1, m - 2);
    const double s = t - k;  // in [-1, 1]
    taps.add(k - 1, 0.5 * s * (s - 1.0));
    taps.add(k, 1.0 - s * s);
    taps.add(k + 1, 0.5 * s * (s + 1.0));
    return taps;
  }
  const int i0 = std::clamp(static_cast<int>(std::floor(t)), 0, m - 2);
  const double s = t - i0;
  if (method == Interpolation::Bicubic && m >= 3) {
    // Catmull-Rom; a node outside the grid is the linear extrapolation 2 p_end - p_next.
    const double s2 = s * s, s3 = s2 * s;
    const double w[4] = {0.5 * (-s3 + 2 * s2 - s), 0.5 * (3 * s3 - 5 * s2 + 2),
                         0.5 * (-3 * s3 + 4 * s2 + s), 0.5 * (s3 - s2)};
    for (int k = 0; k < 4; ++k) {
      const int i = i0 - 1 + k;
      if (i < 0) {
        taps.add(0, 2 * w[k]);
        taps.add(1, -w[k]);
      } else if (i > m - 1) {
        taps.add(m - 1, 2 * w[k]);
        taps.add(m - 2, -w[k]);
      } else {
        taps.add(i, w[k]);
      }
    }
    return taps;
  }
  taps.add(i0, 1.0 - s);
  taps.add(i0 + 1, s);
  return taps;
}

/// The interpolation base of each patch output (see PatchOptions), #3(f+1)^2 by #patches.
Eigen::MatrixXf patch_base(const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& g,
                           const PatchOptions& o) {
  const int f = g.factor;
  Eigen::MatrixXf base = Eigen::MatrixXf::Zero(g.output_size(), g.patch_count());
  if (!o.residual && !o.local) return base;
  const Points3 cubic =
      o.residual ? interpolate_upscale(mini_t, g, Interpolation::Bicubic) : Points3();
  const int tnx = g.target_nx();
  for (int r = 0; r + 1 < g.my; ++r) {
    for (int c = 0; c + 1 < g.mx; ++c) {
      const int p = r * (g.mx - 1) + c;
      Eigen::RowVector3d centroid = Eigen::RowVector3d::Zero();
      if (!o.residual) {
        centroid = 0.25 * f *
                   (mini_t.row(r * g.mx + c) + mini_t.row(r * g.mx + c + 1) +
                    mini_t.row((r + 1) * g.mx + c) + mini_t.row((r + 1) * g.mx + c + 1));
      }
      int k = 0;
      for (int a = 0; a <= f; ++a)
        for (int b = 0; b <= f; ++b, ++k) {
          const Eigen::RowVector3d v =
              o.residual ? Eigen::RowVector3d(cubic.row((f * r + a) * tnx + f * c + b)) : centroid;
          base.block(3 * k, p, 3, 1) = v.transpose().cast<float>();
        }
    }
  }
  return base;
}

}  // namespace

Points3 interpolate_upscale(const Eigen::Ref<const Points3>& mini, const MiniatureGrid& g,
                            Interpolation method) {
  DATADYN_CHECK_EQ(mini.rows(), static_cast<Eigen::Index>(g.mx) * g.my);
  const int f = g.factor, tnx = g.target_nx(), tny = g.target_ny();
  std::vector<Taps> tu(static_cast<std::size_t>(tnx)), tv(static_cast<std::size_t>(tny));
  for (int j = 0; j < tnx; ++j)
    tu[static_cast<std::size_t>(j)] = taps_1d(static_cast<double>(j) / f, g.mx, method);
  for (int i = 0; i < tny; ++i)
    tv[static_cast<std::size_t>(i)] = taps_1d(static_cast<double>(i) / f, g.my, method);
  Points3 out(static_cast<Eigen::Index>(tnx) * tny, 3);
  parallel_for(static_cast<std::size_t>(tny), 16, [&](std::size_t i0, std::size_t i1) {
    for (auto i = static_cast<int>(i0); i < static_cast<int>(i1); ++i) {
      const Taps& a = tv[static_cast<std::size_t>(i)];
      for (int j = 0; j < tnx; ++j) {
        const Taps& b = tu[static_cast<std::size_t>(j)];
        Eigen::RowVector3d v = Eigen::RowVector3d::Zero();
        for (int ka = 0; ka < a.count; ++ka)
          for (int kb = 0; kb < b.count; ++kb)
            v += (a.weight[static_cast<std::size_t>(ka)] * b.weight[static_cast<std::size_t>(kb)]) *
                 mini.row(a.node[static_cast<std::size_t>(ka)] * g.mx +
                          b.node[static_cast<std::size_t>(kb)]);
        out.row(i * tnx + j) = f * v;
      }
    }
  });
  return out;
}

int patch_input_size(const PatchOptions& options) {
  return 12 * options.history + (options.velocities ? 12 : 0);
}

Eigen::MatrixXf patch_inputs(const Eigen::Ref<const Points3>& mini_t2,
                             const Eigen::Ref<const Points3>& mini_t1,
                             const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& g,
                             const PatchOptions& o) {
  const double f = g.factor;
  DATADYN_CHECK(o.history >= 1 && o.history <= 3);
  Eigen::MatrixXf in(patch_input_size(o), g.patch_count());
  parallel_for(static_cast<std::size_t>(g.my - 1), 16, [&](std::size_t r0, std::size_t r1) {
    for (auto r = static_cast<int>(r0); r < static_cast<int>(r1); ++r) {
      for (int c = 0; c + 1 < g.mx; ++c) {
        const int p = r * (g.mx - 1) + c;
        const int nodes[4] = {r * g.mx + c, r * g.mx + c + 1, (r + 1) * g.mx + c,
                              (r + 1) * g.mx + c + 1};
        Eigen::RowVector3d centroid = Eigen::RowVector3d::Zero();
        if (o.local)
          for (int q : nodes) centroid += 0.25 * f * mini_t.row(q);
        int k = 0;
        for (int t = 3 - o.history; t < 3; ++t) {
          const auto& m = t == 0 ? mini_t2 : (t == 1 ? mini_t1 : mini_t);
          for (int q : nodes) {
            in.block(3 * k, p, 3, 1) = (f * m.row(q) - centroid).transpose().cast<float>();
            ++k;
          }
        }
        if (o.velocities)
          for (int q : nodes) {
            in.block(3 * k, p, 3, 1) =
                (f * (mini_t.row(q) - mini_t1.row(q))).transpose().cast<float>();
            ++k;
          }
      }
    }
  });
  return in;
}

Eigen::MatrixXf patch_outputs(const Eigen::Ref<const Points3>& target,
                              const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& g,
                              const PatchOptions& o) {
  const int f = g.factor, tnx = g.target_nx();
  DATADYN_CHECK_EQ(target.rows(), static_cast<Eigen::Index>(tnx) * g.target_ny());
  Eigen::MatrixXf out = -patch_base(mini_t, g, o);
  for (int r = 0; r + 1 < g.my; ++r)
    for (int c = 0; c + 1 < g.mx; ++c) {
      const int p = r * (g.mx - 1) + c;
      int k = 0;
      for (int a = 0; a <= f; ++a)
        for (int b = 0; b <= f; ++b, ++k)
          out.block(3 * k, p, 3, 1) +=
              target.row((f * r + a) * tnx + f * c + b).transpose().cast<float>();
    }
  return out;
}

Points3 assemble_patches(const Eigen::MatrixXf& outputs, const Eigen::Ref<const Points3>& mini_t,
                         const MiniatureGrid& g, const PatchOptions& o) {
  DATADYN_CHECK_EQ(outputs.rows(), g.output_size());
  DATADYN_CHECK_EQ(outputs.cols(), g.patch_count());
  const int f = g.factor, tnx = g.target_nx(), tny = g.target_ny();
  // The base the outputs are relative to (patch_base, float as the outputs): the bicubic target
  // particle itself (residual) or the patch's centroid (local).
  const Points3 cubic =
      o.residual ? interpolate_upscale(mini_t, g, Interpolation::Bicubic) : Points3();
  Eigen::Matrix<float, Eigen::Dynamic, 3, Eigen::RowMajor> centroid(g.patch_count(), 3);
  if (o.local && !o.residual)
    for (int r = 0; r + 1 < g.my; ++r)
      for (int c = 0; c + 1 < g.mx; ++c)
        centroid.row(r * (g.mx - 1) + c) =
            (0.25 * f *
             (mini_t.row(r * g.mx + c) + mini_t.row(r * g.mx + c + 1) +
              mini_t.row((r + 1) * g.mx + c) + mini_t.row((r + 1) * g.mx + c + 1)))
                .cast<float>();
  // Each target particle gathers the patches that cover it in patch order and takes their mean.
  Points3 out(static_cast<Eigen::Index>(tnx) * tny, 3);
  auto covering = [f](int i, int last, int& lo, int& hi) {
    lo = std::max(0, i % f == 0 ? i / f - 1 : i / f);
    hi = std::min(i / f, last);
  };
  parallel_for(static_cast<std::size_t>(tny), 16, [&](std::size_t i0, std::size_t i1) {
    for (auto ti = static_cast<int>(i0); ti < static_cast<int>(i1); ++ti) {
      int r0 = 0, r1 = 0;
      covering(ti, g.my - 2, r0, r1);
      for (int tj = 0; tj < tnx; ++tj) {
        int c0 = 0, c1 = 0;
        covering(tj, g.mx - 2, c0, c1);
        const int i = ti * tnx + tj;
        Eigen::RowVector3f base = Eigen::RowVector3f::Zero();
        if (o.residual) base = cubic.row(i).cast<float>();
        Eigen::RowVector3d sum = Eigen::RowVector3d::Zero();
        double count = 0.0;
        for (int r = r0; r <= r1; ++r)
          for (int c = c0; c <= c1; ++c) {
            const int p = r * (g.mx - 1) + c;
            const int k = (ti - f * r) * (f + 1) + (tj - f * c);
            if (o.local && !o.residual) base = centroid.row(p);
            const Eigen::RowVector3f v = outputs.block(3 * k, p, 3, 1).transpose() + base;
            sum += v.cast<double>();
            count += 1.0;
          }
        out.row(i) = sum / count;
      }
    }
  });
  return out;
}

Points3 regressor_upscale(const Eigen::Ref<const Points3>& mini_t2,
                          const Eigen::Ref<const Points3>& mini_t1,
                          const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                          const PatchOptions& options, const PatchRegressor& regressor) {
  const Eigen::MatrixXf in = patch_inputs(mini_t2, mini_t1, mini_t, grid, options);
  return assemble_patches(regressor(in), mini_t, grid, options);
}

double grid_roughness(const Eigen::Ref<const Points3>& x, int nx, int ny) {
  DATADYN_CHECK_EQ(x.rows(), static_cast<Eigen::Index>(nx) * ny);
  double sum = 0.0;
  long count = 0;
  for (int r = 0; r < ny; ++r)
    for (int c = 1; c + 1 < nx; ++c, ++count)
      sum += (x.row(r * nx + c - 1) - 2 * x.row(r * nx + c) + x.row(r * nx + c + 1)).norm();
  for (int r = 1; r + 1 < ny; ++r)
    for (int c = 0; c < nx; ++c, ++count)
      sum += (x.row((r - 1) * nx + c) - 2 * x.row(r * nx + c) + x.row((r + 1) * nx + c)).norm();
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

Points3 correct_miniature(const Eigen::Ref<const Points3>& mini_t2,
                          const Eigen::Ref<const Points3>& mini_t1,
                          const Eigen::Ref<const Points3>& mini_t, const MiniatureGrid& grid,
                          const PatchOptions& options, const PatchRegressor& regressor) {
  const Points3 target = regressor_upscale(mini_t2, mini_t1, mini_t, grid, options, regressor);
  const int f = grid.factor, tnx = grid.target_nx();
  Points3 out(mini_t.rows(), 3);
  for (int r = 0; r < grid.my; ++r)
    for (int c = 0; c < grid.mx; ++c)
      out.row(r * grid.mx + c) = target.row(f * r * tnx + f * c) / f;
  return out;
}

}  // namespace datadyn::cloth
