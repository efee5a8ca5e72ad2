#pragma once
/// @file
/// A bone chain along +y, a procedural animation of it, and the two skinning methods the flesh
/// pipeline uses to pose a body from its bones: linear blend skinning (Magnenat-Thalmann et al.
/// 1988) and dual quaternion skinning (Kavan et al. 2008, "Geometric skinning with approximate
/// dual quaternion blending", eq. 3-5).

#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "core/types.hpp"

namespace datadyn::flesh {

/// A chain of bones stacked along +y from `base`; bone j spans [base.y + Σ_{i<j} l_i, + l_j].
struct BoneChain {
  std::vector<double> lengths = {0.3, 0.3, 0.3};   ///< metres, > 0 each
  Eigen::Vector3d base = Eigen::Vector3d::Zero();  ///< metres
  double blend_width = 0.15;  ///< metres: skin weights blend over this height around a joint
};

/// A procedural animation of the chain: root translation and rotation plus joint bends.
/// `kind` is "swing" (side to side with bends), "bounce" (vertical hops), "twist" (turns about
/// y with forward bends), "shake" (stop-and-go side shakes) or "keyframes" (sampled poses, e.g.
/// motion capture). The same kind, amplitude and
/// frequency always give the same poses.
/// One sampled pose of a chain (e.g. from motion capture): root placement and each bone's
/// rotation relative to its parent bone.
struct ChainKeyframe {
  double time = 0.0;                                                  ///< s
  Eigen::Vector3d root = Eigen::Vector3d::Zero();                     ///< m, added to base
  Eigen::Quaterniond root_rotation = Eigen::Quaterniond::Identity();  ///< of the whole chain
  std::vector<Eigen::Quaterniond> joints;                             ///< #B local rotations
};

struct ChainMotion {
  std::string kind = "swing";
  double amplitude = 0.15;  ///< metres of root travel; joint angles scale with it (rad per m)
  double frequency = 1.0;   ///< Hz
  /// kind "keyframes": poses sampled at increasing times, interpolated linearly (slerp for
  /// rotations) and held outside their range.
  std::vector<ChainKeyframe> keyframes;
};

/// World transforms of the bones at time t (s): #B rigid transforms, bone j's frame at its base.
std::vector<Eigen::Isometry3d> chain_pose(const BoneChain& chain, const ChainMotion& motion,
                                          double t);

/// The skinning transforms S_j = T_j(t) R_j^{-1} (R_j = the rest frame of bone j).
std::vector<Eigen::Isometry3d> skinning_transforms(const BoneChain& chain,
                                                   const std::vector<Eigen::Isometry3d>& pose);

/// Skin weights of rest positions: each vertex blends the bones whose joints lie within
/// blend_width/2 of its height with a smoothstep; rows sum to 1 (partition of unity).
/// @param rest #V by 3 rest positions (metres). @return #V by #B weights in [0, 1].
Eigen::MatrixXd chain_weights(const BoneChain& chain, const Points3& rest);

/// Linear blend skinning x_i = Σ_j w_ij S_j x̄_i.
/// @param rest #V by 3 (metres); @param weights #V by #B; @param transforms #B.
Points3 linear_blend_skinning(const Points3& rest, const Eigen::MatrixXd& weights,
                              const std::vector<Eigen::Isometry3d>& transforms);

/// Dual quaternion skinning: the weighted sum of the bones' unit dual quaternions (each sign
/// aligned with the vertex's heaviest bone), normalised, applied to x̄_i (Kavan et al. eq. 4).
/// Rigid for every vertex (no candy-wrapper collapse). Same parameters as
/// linear_blend_skinning.
Points3 dual_quaternion_skinning(const Points3& rest, const Eigen::MatrixXd& weights,
                                 const std::vector<Eigen::Isometry3d>& transforms);

}  // namespace datadyn::flesh
