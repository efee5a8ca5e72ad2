#include "flesh/skinning.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/check.hpp"
#include "core/errors.hpp"

namespace datadyn::flesh {
namespace {

double smoothstep(double x) {
  x = std::clamp(x, 0.0, 1.0);
  return x * x * (3.0 - 2.0 * x);
}

Eigen::Isometry3d rotation(double angle, const Eigen::Vector3d& axis) {
  Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
  T.linear() = Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
  return T;
}

Eigen::Isometry3d translation(const Eigen::Vector3d& d) {
  Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
  T.translation() = d;
  return T;
}

}  // namespace

std::vector<Eigen::Isometry3d> chain_pose(const BoneChain& chain, const ChainMotion& motion,
                                          double t) {
  const double w = 2.0 * std::numbers::pi * motion.frequency, A = motion.amplitude;
  const std::size_t B = chain.lengths.size();
  if (motion.kind == "keyframes") {
    const auto& K = motion.keyframes;
    DATADYN_CHECK(!K.empty());
    std::size_t k = 0;
    while (k + 1 < K.size() && K[k + 1].time <= t) ++k;
    const ChainKeyframe& a = K[k];
    const ChainKeyframe& b = K[std::min(k + 1, K.size() - 1)];
    const double s = b.time > a.time ? std::clamp((t - a.time) / (b.time - a.time), 0.0, 1.0) : 0.0;
    DATADYN_CHECK_EQ(a.joints.size(), B);
    std::vector<Eigen::Isometry3d> pose(B);
    Eigen::Isometry3d T = translation(chain.base + (1 - s) * a.root + s * b.root);
    T.linear() = a.root_rotation.slerp(s, b.root_rotation).toRotationMatrix();
    for (std::size_t j = 0; j < B; ++j) {
      if (j > 0) T = T * translation(Eigen::Vector3d(0.0, chain.lengths[j - 1], 0.0));
      Eigen::Isometry3d R = Eigen::Isometry3d::Identity();
      R.linear() = a.joints[j].slerp(s, b.joints[j]).toRotationMatrix();
      T = T * R;
      pose[j] = T;
    }
    return pose;
  }
  Eigen::Vector3d root = chain.base;
  Eigen::Isometry3d root_rot = Eigen::Isometry3d::Identity();
  std::vector<double> bend(B, 0.0);
  Eigen::Vector3d bend_axis = Eigen::Vector3d::UnitZ();
  if (motion.kind == "swing") {
    root.x() += A * std::sin(w * t);
    for (std::size_t j = 0; j < B; ++j) bend[j] = 1.5 * A * std::sin(w * t - 0.8 * double(j));
  } else if (motion.kind == "bounce") {
    root.y() += A * std::abs(std::sin(0.5 * w * t));
    for (std::size_t j = 0; j < B; ++j) bend[j] = 0.5 * A * std::sin(w * t + double(j));
    bend_axis = Eigen::Vector3d::UnitX();
  } else if (motion.kind == "twist") {
    root_rot = rotation(3.0 * A * std::sin(w * t), Eigen::Vector3d::UnitY());
    root.z() += 0.5 * A * std::sin(2.0 * w * t);
    for (std::size_t j = 0; j < B; ++j) bend[j] = A * std::sin(w * t + 0.5 * double(j));
    bend_axis = Eigen::Vector3d::UnitX();
  } else if (motion.kind == "shake") {
    // Stop and go: a smoothstep ramp per half period, then a hold.
    const double phase = std::fmod(2.0 * motion.frequency * t, 2.0);
    const double s = phase < 1.0 ? smoothstep(2.0 * phase) : 1.0 - smoothstep(2.0 * (phase - 1.0));
    root.x() += A * (2.0 * s - 1.0);
    for (std::size_t j = 0; j < B; ++j) bend[j] = 0.8 * A * (2.0 * s - 1.0) * (j % 2 ? -1 : 1);
  } else {
    throw InternalError("chain_pose: unknown motion kind \"" + motion.kind + "\"");
  }
  std::vector<Eigen::Isometry3d> pose(B);
  Eigen::Isometry3d T = translation(root) * root_rot;
  for (std::size_t j = 0; j < B; ++j) {
    if (j > 0) T = T * translation(Eigen::Vector3d(0.0, chain.lengths[j - 1], 0.0));
    T = T * rotation(bend[j], bend_axis);
    pose[j] = T;
  }
  return pose;
}

std::vector<Eigen::Isometry3d> skinning_transforms(const BoneChain& chain,
                                                   const std::vector<Eigen::Isometry3d>& pose) {
  DATADYN_CHECK_EQ(pose.size(), chain.lengths.size());
  std::vector<Eigen::Isometry3d> S(pose.size());
  double y = chain.base.y();
  for (std::size_t j = 0; j < pose.size(); ++j) {
    const Eigen::Isometry3d rest = translation(Eigen::Vector3d(chain.base.x(), y, chain.base.z()));
    S[j] = pose[j] * rest.inverse();
    y += chain.lengths[j];
  }
  return S;
}

Eigen::MatrixXd chain_weights(const BoneChain& chain, const Points3& rest) {
  const Eigen::Index B = static_cast<Eigen::Index>(chain.lengths.size());
  DATADYN_CHECK_GE(B, Eigen::Index{1});
  std::vector<double> joint(static_cast<std::size_t>(B),
                            chain.base.y());  // joint j: base of bone j
  for (Eigen::Index j = 1; j < B; ++j)
    joint[static_cast<std::size_t>(j)] =
        joint[static_cast<std::size_t>(j - 1)] + chain.lengths[static_cast<std::size_t>(j - 1)];
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(rest.rows(), B);
  const double width = std::max(chain.blend_width, 1e-9);
  for (Eigen::Index i = 0; i < rest.rows(); ++i) {
    // past[j]: how far the vertex is past joint j (1 above it, 0 below).
    std::vector<double> past(static_cast<std::size_t>(B) + 1, 0.0);
    past[0] = 1.0;
    for (Eigen::Index j = 1; j < B; ++j)
      past[static_cast<std::size_t>(j)] =
          smoothstep((rest(i, 1) - joint[static_cast<std::size_t>(j)]) / width + 0.5);
    for (Eigen::Index j = 0; j < B; ++j)
      W(i, j) = past[static_cast<std::size_t>(j)] - past[static_cast<std::size_t>(j + 1)];
  }
  return W;
}

Points3 linear_blend_skinning(const Points3& rest, const Eigen::MatrixXd& weights,
                              const std::vector<Eigen::Isometry3d>& transforms) {
  DATADYN_CHECK_EQ(weights.rows(), rest.rows());
  DATADYN_CHECK_EQ(static_cast<std::size_t>(weights.cols()), transforms.size());
  Points3 out = Points3::Zero(rest.rows(), 3);
  for (Eigen::Index i = 0; i < rest.rows(); ++i) {
    const Eigen::Vector3d x = rest.row(i).transpose();
    Eigen::Vector3d y = Eigen::Vector3d::Zero();
    for (Eigen::Index j = 0; j < weights.cols(); ++j)
      if (weights(i, j) != 0.0) y += weights(i, j) * (transforms[static_cast<std::size_t>(j)] * x);
    out.row(i) = y.transpose();
  }
  return out;
}

Points3 dual_quaternion_skinning(const Points3& rest, const Eigen::MatrixXd& weights,
                                 const std::vector<Eigen::Isometry3d>& transforms) {
  DATADYN_CHECK_EQ(weights.rows(), rest.rows());
  DATADYN_CHECK_EQ(static_cast<std::size_t>(weights.cols()), transforms.size());
  // Unit dual quaternion of each transform: real part r, dual part d = ½ (0, t) r.
  std::vector<Eigen::Vector4d> real(transforms.size()), dual(transforms.size());  // (w, x, y, z)
  for (std::size_t j = 0; j < transforms.size(); ++j) {
    const Eigen::Quaterniond r(transforms[j].linear());
    const Eigen::Vector3d t = transforms[j].translation();
    const Eigen::Quaterniond tq(0.0, t.x(), t.y(), t.z());
    const Eigen::Quaterniond d = tq * r;
    real[j] << r.w(), r.x(), r.y(), r.z();
    dual[j] << 0.5 * d.w(), 0.5 * d.x(), 0.5 * d.y(), 0.5 * d.z();
  }
  Points3 out(rest.rows(), 3);
  for (Eigen::Index i = 0; i < rest.rows(); ++i) {
    Eigen::Index heaviest = 0;
    weights.row(i).maxCoeff(&heaviest);
    const Eigen::Vector4d& pivot = real[static_cast<std::size_t>(heaviest)];
    Eigen::Vector4d br = Eigen::Vector4d::Zero(), bd = Eigen::Vector4d::Zero();
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
      const double w = weights(i, j);
      if (w == 0.0) continue;
      const double sign = real[static_cast<std::size_t>(j)].dot(pivot) < 0 ? -1.0 : 1.0;
      br += sign * w * real[static_cast<std::size_t>(j)];
      bd += sign * w * dual[static_cast<std::size_t>(j)];
    }
    const double norm = br.norm();
    br /= norm;
    bd /= norm;
    const Eigen::Quaterniond r(br[0], br[1], br[2], br[3]);
    const Eigen::Quaterniond d(bd[0], bd[1], bd[2], bd[3]);
    // Translation t = 2 d r*; the blended dual part's component along r is dropped (Kavan eq. 4).
    const Eigen::Quaterniond tq = d * r.conjugate();
    const Eigen::Vector3d t = 2.0 * Eigen::Vector3d(tq.x(), tq.y(), tq.z());
    out.row(i) = (r * Eigen::Vector3d(rest.row(i).transpose()) + t).transpose();
  }
  return out;
}

}  // namespace datadyn::flesh
