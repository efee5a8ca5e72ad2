#pragma once
/// @file
/// A fully connected network with ReLU hidden layers and a linear output layer (the upscaling
/// network of Lee, Oh, Lee 2019, sec. 3.3: 36-64-64-64-27), its MSE loss (eq. 4) and the gradient
/// of that loss by backpropagation. Parameters live in one flat vector so that optimisers and
/// reductions treat them as one array.
///
/// Samples are columns: an input batch is `#in by B`, an output batch `#out by B`.

#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace datadyn::learn {

template <class Scalar>
class Mlp {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  Mlp() = default;
  /// Layer widths from input to output, e.g. {36, 64, 64, 64, 27}; weights are He-normal
  /// (std = sqrt(2 / fan_in)) drawn from a generator seeded with `seed`; biases are zero.
  /// @pre at least two sizes, each > 0
  Mlp(std::vector<int> sizes, std::uint64_t seed);
  /// A network with given parameters (e.g. read back from a file).
  /// @pre params.size() == parameter_count(sizes)
  Mlp(std::vector<int> sizes, Vector params);

  static Eigen::Index parameter_count(const std::vector<int>& sizes);

  const std::vector<int>& sizes() const { return sizes_; }
  int input_size() const { return sizes_.front(); }
  int output_size() const { return sizes_.back(); }
  int layer_count() const { return static_cast<int>(sizes_.size()) - 1; }

  /// All weights and biases: layer 0's weight (column-major, #out by #in), its bias, layer 1's ...
  const Vector& parameters() const { return params_; }
  Vector& parameters() { return params_; }
  /// Weight of layer l (#out by #in) and its bias (#out), views into parameters().
  Eigen::Map<const Matrix> weight(int l) const;
  Eigen::Map<const Vector> bias(int l) const;

  /// Output for a batch: #out by B for x #in by B.
  Matrix forward(const Eigen::Ref<const Matrix>& x) const;

  /// Sum over the batch and outputs of (f(x) - y)^2, and its gradient with respect to the
  /// parameters added into `gradient` (same layout as parameters()). Dividing both by B * #out
  /// gives the MSE of eq. 4 and its gradient.
  /// @param x #in by B, y #out by B
  Scalar accumulate_squared_error(const Eigen::Ref<const Matrix>& x,
                                  const Eigen::Ref<const Matrix>& y, Vector& gradient) const;

 private:
  Eigen::Index weight_offset(int l) const { return offsets_[static_cast<std::size_t>(l)]; }
  Eigen::Index bias_offset(int l) const {
    return offsets_[static_cast<std::size_t>(l)] +
           static_cast<Eigen::Index>(sizes_[static_cast<std::size_t>(l)]) *
               sizes_[static_cast<std::size_t>(l) + 1];
  }
  void compute_offsets();

  std::vector<int> sizes_;
  std::vector<Eigen::Index> offsets_;
  Vector params_;
};

extern template class Mlp<float>;
extern template class Mlp<double>;

}  // namespace datadyn::learn
