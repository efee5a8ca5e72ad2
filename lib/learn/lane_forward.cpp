#include "learn/lane_forward.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/check.hpp"

namespace datadyn::learn {
namespace {

// GCC vector types: 4, 8 and 16 floats. Arithmetic on them is lane by lane, so the code below is
// the same computation at every width; only how many samples share an instruction changes.
typedef float V4 __attribute__((vector_size(16)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

/// A network's layers and standardisation as plain arrays, in the float values predict() uses.
struct Plan {
  struct Layer {
    const float* w;  ///< #out by #in, column-major
    const float* b;
    int in, out;
  };
  std::vector<Layer> layers;
  std::vector<float> in_mean, in_inverse_std, out_std, out_mean;
  int widest = 0;
};

Plan make_plan(const Mlp<float>& net, const Standardizer& in, const Standardizer& out) {
  Plan plan;
  for (int l = 0; l < net.layer_count(); ++l) {
    const auto w = net.weight(l);
    plan.layers.push_back({w.data(), net.bias(l).data(), static_cast<int>(w.cols()),
                           static_cast<int>(w.rows())});
  }
  for (int s : net.sizes()) plan.widest = std::max(plan.widest, s);
  // As Standardizer::apply / invert: the mean and 1/std rounded from double to float.
  for (Eigen::Index i = 0; i < in.mean.size(); ++i) {
    plan.in_mean.push_back(static_cast<float>(in.mean[i]));
    plan.in_inverse_std.push_back(static_cast<float>(1.0 / in.std[i]));
  }
  for (Eigen::Index i = 0; i < out.mean.size(); ++i) {
    plan.out_std.push_back(static_cast<float>(out.std[i]));
    plan.out_mean.push_back(static_cast<float>(out.mean[i]));
  }
  return plan;
}

/// Rows [o, o + B) of a dense layer for L = NV * lanes(V) samples: z = w a + b, then ReLU.
/// a and z hold feature k of sample s at k * L + s.
template <class V, int NV, int B>
[[gnu::always_inline]] inline void dense_rows(const Plan::Layer& layer, int o, const float* a,
                                              float* z, bool relu) {
  constexpr int W = static_cast<int>(sizeof(V) / sizeof(float));
  constexpr int L = W * NV;
  V acc[B][NV] = {};
  for (int k = 0; k < layer.in; ++k) {
    V x[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&x[v], a + k * L + v * W, sizeof(V));
    const float* wk = layer.w + o + static_cast<std::ptrdiff_t>(k) * layer.out;
    for (int j = 0; j < B; ++j)
      for (int v = 0; v < NV; ++v) acc[j][v] += wk[j] * x[v];
  }
  const V zero = {};
  for (int j = 0; j < B; ++j)
    for (int v = 0; v < NV; ++v) {
      V r = acc[j][v] + layer.b[o + j];
      if (relu) r = r > zero ? r : zero;
      std::memcpy(z + (o + j) * L + v * W, &r, sizeof(V));
    }
}

template <class V, int NV>
[[gnu::always_inline]] inline void dense(const Plan::Layer& layer, const float* a, float* z,
                                         bool relu) {
  int o = 0;
  for (; o + 4 <= layer.out; o += 4) dense_rows<V, NV, 4>(layer, o, a, z, relu);
  for (; o < layer.out; ++o) dense_rows<V, NV, 1>(layer, o, a, z, relu);
}

/// Columns [p0, p1) of x through the network into y, L samples at a time (the last block padded).
template <class V, int NV>
[[gnu::always_inline]] inline void run(const Plan& plan, const float* x, Eigen::Index x_stride,
                                       float* y, Eigen::Index p0, Eigen::Index p1) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(float)) * NV;
  const int n_in = plan.layers.front().in, n_out = plan.layers.back().out;
  std::vector<float> buf_a(static_cast<std::size_t>(plan.widest) * L),
      buf_b(static_cast<std::size_t>(plan.widest) * L);
  for (Eigen::Index p = p0; p < p1; p += L) {
    const int m = static_cast<int>(std::min<Eigen::Index>(L, p1 - p));
    float* a = buf_a.data();
    float* z = buf_b.data();
    for (int s = 0; s < L; ++s) {
      const float* xs = x + (p + std::min(s, m - 1)) * x_stride;  // padding repeats a sample
      for (int k = 0; k < n_in; ++k)
        a[k * L + s] = (xs[k] - plan.in_mean[static_cast<std::size_t>(k)]) *
                       plan.in_inverse_std[static_cast<std::size_t>(k)];
    }
    for (std::size_t l = 0; l < plan.layers.size(); ++l) {
      dense<V, NV>(plan.layers[l], a, z, l + 1 < plan.layers.size());
      std::swap(a, z);
    }
    for (int s = 0; s < m; ++s)
      for (int o = 0; o < n_out; ++o)
        y[(p + s) * n_out + o] = a[o * L + s] * plan.out_std[static_cast<std::size_t>(o)] +
                                 plan.out_mean[static_cast<std::size_t>(o)];
  }
}

using RunFn = void (*)(const Plan&, const float*, Eigen::Index, float*, Eigen::Index,
                       Eigen::Index);

void run_baseline(const Plan& plan, const float* x, Eigen::Index stride, float* y,
                  Eigen::Index p0, Eigen::Index p1) {
  run<V4, 2>(plan, x, stride, y, p0, p1);
}
[[gnu::target("avx2")]] void run_avx2(const Plan& plan, const float* x, Eigen::Index stride,
                                      float* y, Eigen::Index p0, Eigen::Index p1) {
  run<V8, 2>(plan, x, stride, y, p0, p1);
}
[[gnu::target("avx512f")]] void run_avx512(const Plan& plan, const float* x, Eigen::Index stride,
                                           float* y, Eigen::Index p0, Eigen::Index p1) {
  run<V16, 2>(plan, x, stride, y, p0, p1);
}

}  // namespace

Eigen::MatrixXf lane_forward(const Mlp<float>& net, const Standardizer& in,
                             const Standardizer& out, const Eigen::Ref<const Eigen::MatrixXf>& x,
                             SimdLevel level) {
  DATADYN_CHECK_EQ(x.rows(), net.input_size());
  DATADYN_CHECK_EQ(in.mean.size(), net.input_size());
  DATADYN_CHECK_EQ(out.mean.size(), net.output_size());
  DATADYN_CHECK(simd_level_supported(level));
  const Plan plan = make_plan(net, in, out);
  Eigen::MatrixXf y(net.output_size(), x.cols());
  if (x.cols() == 0) return y;
  const RunFn fn = level == SimdLevel::Avx512 ? run_avx512
                   : level == SimdLevel::Avx2 ? run_avx2
                                              : run_baseline;
  fn(plan, x.data(), x.outerStride(), y.data(), 0, x.cols());
  return y;
}

}  // namespace datadyn::learn
