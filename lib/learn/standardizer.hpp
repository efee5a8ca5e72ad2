#pragma once
/// @file
/// Per-feature standardisation (x - mean) / std of network inputs and outputs, fitted on the
/// training set and stored with the model.

#include <Eigen/Core>

namespace datadyn::learn {

struct Standardizer {
  Eigen::VectorXd mean;  ///< #features
  Eigen::VectorXd std;   ///< #features, > 0 (features with std below 1e-12 keep std 1)

  /// Mean and standard deviation of each row of `samples` (#features by #samples), summed in
  /// column order (deterministic).
  template <class Derived>
  static Standardizer fit(const Eigen::MatrixBase<Derived>& samples) {
    Standardizer s;
    const Eigen::Index n = samples.cols();
    s.mean = Eigen::VectorXd::Zero(samples.rows());
    s.std = Eigen::VectorXd::Ones(samples.rows());
    if (n == 0) return s;
    Eigen::VectorXd sq = Eigen::VectorXd::Zero(samples.rows());
    for (Eigen::Index j = 0; j < n; ++j) s.mean += samples.col(j).template cast<double>();
    s.mean /= static_cast<double>(n);
    for (Eigen::Index j = 0; j < n; ++j)
      sq += (samples.col(j).template cast<double>() - s.mean).cwiseAbs2();
    for (Eigen::Index i = 0; i < samples.rows(); ++i) {
      const double sd = std::sqrt(sq[i] / static_cast<double>(n));
      s.std[i] = sd > 1e-12 ? sd : 1.0;
    }
    return s;
  }
  /// (x - mean) / std, column by column.
  template <class Scalar>
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> apply(
      const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& x) const {
    const auto m = mean.cast<Scalar>().eval();
    const auto inv = std.cwiseInverse().cast<Scalar>().eval();
    return ((x.colwise() - m).array().colwise() * inv.array()).matrix();
  }
  /// x std + mean, column by column (inverse of apply).
  template <class Scalar>
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> invert(
      const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& x) const {
    const auto m = mean.cast<Scalar>().eval();
    const auto s = std.cast<Scalar>().eval();
    return ((x.array().colwise() * s.array()).matrix().colwise() + m);
  }
};

}  // namespace datadyn::learn
