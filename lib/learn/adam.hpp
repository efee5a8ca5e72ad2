#pragma once
/// @file
/// Adam (Kingma and Ba 2014, algorithm 1) on a flat parameter vector: the optimiser of Lee, Oh,
/// Lee 2019 (sec. 3.4, learning rate 1e-4).

#include <utility>

#include <Eigen/Core>

namespace datadyn::learn {

struct AdamParams {
  double learning_rate = 1e-4;  ///< alpha
  double beta1 = 0.9;           ///< decay of the first moment, in [0, 1)
  double beta2 = 0.999;         ///< decay of the second moment, in [0, 1)
  double epsilon = 1e-8;        ///< added to sqrt(v) in the denominator, > 0
};

template <class Scalar>
class Adam {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  Adam(Eigen::Index size, AdamParams params)
      : params_(params), m_(Vector::Zero(size)), v_(Vector::Zero(size)) {}
  /// Continues from saved moments after `steps` steps (e.g. a training checkpoint).
  Adam(AdamParams params, Vector m, Vector v, long steps)
      : params_(params), m_(std::move(m)), v_(std::move(v)), t_(steps) {}

  /// One step: theta -= alpha m_hat / (sqrt(v_hat) + eps) for the gradient g of the loss.
  void step(Vector& theta, const Vector& g) {
    ++t_;
    const Scalar b1 = static_cast<Scalar>(params_.beta1), b2 = static_cast<Scalar>(params_.beta2);
    m_ = b1 * m_ + (Scalar(1) - b1) * g;
    v_ = b2 * v_ + (Scalar(1) - b2) * g.cwiseAbs2();
    const double c1 = 1.0 - std::pow(params_.beta1, static_cast<double>(t_));
    const double c2 = 1.0 - std::pow(params_.beta2, static_cast<double>(t_));
    const Scalar step = static_cast<Scalar>(params_.learning_rate / c1);
    const Scalar eps = static_cast<Scalar>(params_.epsilon);
    const Scalar inv_c2 = static_cast<Scalar>(1.0 / c2);
    theta.array() -= step * m_.array() / ((v_.array() * inv_c2).sqrt() + eps);
  }
  long steps() const { return t_; }
  /// First and second moment estimates (algorithm 1's m and v), one per parameter.
  const Vector& first_moment() const { return m_; }
  const Vector& second_moment() const { return v_; }

 private:
  AdamParams params_;
  Vector m_, v_;
  long t_ = 0;
};

}  // namespace datadyn::learn
