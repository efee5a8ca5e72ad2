#include "learn/mlp.hpp"

#include <cmath>
#include <random>

#include "core/check.hpp"

namespace datadyn::learn {

template <class Scalar>
Eigen::Index Mlp<Scalar>::parameter_count(const std::vector<int>& sizes) {
  Eigen::Index n = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l)
    n += static_cast<Eigen::Index>(sizes[l] + 1) * sizes[l + 1];
  return n;
}

template <class Scalar>
void Mlp<Scalar>::compute_offsets() {
  DATADYN_CHECK_GE(sizes_.size(), 2u);
  for (int s : sizes_) DATADYN_CHECK_GT(s, 0);
  offsets_.clear();
  Eigen::Index o = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    offsets_.push_back(o);
    o += static_cast<Eigen::Index>(sizes_[l] + 1) * sizes_[l + 1];
  }
}

template <class Scalar>
Mlp<Scalar>::Mlp(std::vector<int> sizes, std::uint64_t seed) : sizes_(std::move(sizes)) {
  compute_offsets();
  params_ = Vector::Zero(parameter_count(sizes_));
  // A generator whose output is fixed by the standard (mt19937_64) and a Box-Muller transform
  // written out here, so the initial weights are the same with every standard library.
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  for (int l = 0; l < layer_count(); ++l) {
    const double std_dev = std::sqrt(2.0 / sizes_[static_cast<std::size_t>(l)]);
    const Eigen::Index n = static_cast<Eigen::Index>(sizes_[static_cast<std::size_t>(l)]) *
                           sizes_[static_cast<std::size_t>(l) + 1];
    for (Eigen::Index i = 0; i < n; ++i) {
      const double u1 = uniform(), u2 = uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      params_[weight_offset(l) + i] = static_cast<Scalar>(std_dev * z);
    }
  }
}

template <class Scalar>
Mlp<Scalar>::Mlp(std::vector<int> sizes, Vector params)
    : sizes_(std::move(sizes)), params_(std::move(params)) {
  compute_offsets();
  DATADYN_CHECK_EQ(params_.size(), parameter_count(sizes_));
}

template <class Scalar>
Eigen::Map<const typename Mlp<Scalar>::Matrix> Mlp<Scalar>::weight(int l) const {
  return {params_.data() + weight_offset(l), sizes_[static_cast<std::size_t>(l) + 1],
          sizes_[static_cast<std::size_t>(l)]};
}

template <class Scalar>
Eigen::Map<const typename Mlp<Scalar>::Vector> Mlp<Scalar>::bias(int l) const {
  return {params_.data() + bias_offset(l), sizes_[static_cast<std::size_t>(l) + 1]};
}

template <class Scalar>
typename Mlp<Scalar>::Matrix Mlp<Scalar>::forward(const Eigen::Ref<const Matrix>& x) const {
  DATADYN_CHECK_EQ(x.rows(), input_size());
  Matrix a = x;
  for (int l = 0; l < layer_count(); ++l) {
    Matrix z = weight(l) * a;
    z.colwise() += bias(l);
    if (l + 1 < layer_count()) z = z.cwiseMax(Scalar(0));
    a = std::move(z);
  }
  return a;
}

template <class Scalar>
Scalar Mlp<Scalar>::accumulate_squared_error(const Eigen::Ref<const Matrix>& x,
                                             const Eigen::Ref<const Matrix>& y,
                                             Vector& gradient) const {
  DATADYN_CHECK_EQ(x.rows(), input_size());
  DATADYN_CHECK_EQ(y.rows(), output_size());
  DATADYN_CHECK_EQ(x.cols(), y.cols());
  DATADYN_CHECK_EQ(gradient.size(), params_.size());
  const int L = layer_count();
  // activations[l] is the input of layer l (post-ReLU of layer l-1).
  std::vector<Matrix> activations(static_cast<std::size_t>(L) + 1);
  activations[0] = x;
  for (int l = 0; l < L; ++l) {
    Matrix z = weight(l) * activations[static_cast<std::size_t>(l)];
    z.colwise() += bias(l);
    if (l + 1 < L) z = z.cwiseMax(Scalar(0));
    activations[static_cast<std::size_t>(l) + 1] = std::move(z);
  }
  Matrix delta = activations[static_cast<std::size_t>(L)] - y;  // d(sum e^2)/d out = 2 delta
  const Scalar sum = delta.squaredNorm();
  delta *= Scalar(2);
  for (int l = L - 1; l >= 0; --l) {
    const Matrix& a = activations[static_cast<std::size_t>(l)];
    Eigen::Map<Matrix> gw(gradient.data() + weight_offset(l), weight(l).rows(), weight(l).cols());
    Eigen::Map<Vector> gb(gradient.data() + bias_offset(l), weight(l).rows());
    gw.noalias() += delta * a.transpose();
    gb += delta.rowwise().sum();
    if (l > 0) {
      Matrix back = weight(l).transpose() * delta;
      // ReLU derivative: 1 where the activation is positive.
      delta = back.cwiseProduct((a.array() > Scalar(0)).template cast<Scalar>().matrix());
    }
  }
  return sum;
}

template class Mlp<float>;
template class Mlp<double>;

}  // namespace datadyn::learn
