#pragma once
/// @file
/// Per-feature standardisation (x - mean) / std of network inputs and outputs, fitted on the
/// training set and stored with the model.

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

namespace datadyn::learn {

struct Standardizer {
  Eigen::VectorXd mean;  ///< #features
  /// #features, > 0: at least 1e-6 of the largest (a constant feature, e.g. the exact zero residual
  /// at a patch corner, must not get std 1: its de-normalised prediction error would be metres).
  Eigen::VectorXd std;

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
    const Eigen::VectorXd sd = (sq / static_cast<double>(n)).cwiseSqrt();
    const double floor = std::max(1e-6 * sd.maxCoeff(), 1e-30);
    for (Eigen::Index i = 0; i < samples.rows(); ++i) s.std[i] = std::max(sd[i], floor);
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
  /// apply() on x itself, with the same arithmetic (the same bits), without a second copy of a
  /// training set.
  template <class Scalar>
  void apply_in_place(Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& x) const {
    const auto m = mean.cast<Scalar>().eval();
    const auto inv = std.cwiseInverse().cast<Scalar>().eval();
    x.colwise() -= m;
    x.array().colwise() *= inv.array();
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
