#pragma once
/// @file
/// A skinned mesh and its skeleton animation read with assimp (glTF 2, FBX, Collada): the bind
/// pose, the per-bone vertex weights and the skinning transforms at a time, for
/// linear_blend_skinning / dual_quaternion_skinning (flesh/skinning.hpp).

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "core/types.hpp"
#include "flesh/skinning.hpp"

namespace datadyn::flesh {

/// Everything is in the scene's world (the mesh's and the armature's object transforms applied)
/// in metres with Y up, converted from the axes and unit the file declares (FBX); a file that
/// declares none (glTF) is taken as metres, Y up.
struct LoadedSkin {
  Points3 rest;         ///< #V by 3 bind-pose positions of the first skinned mesh
  Triangles triangles;  ///< #T by 3
  /// #V by 2 texture coordinates of the first UV channel, or no rows: the mesh has none. Files
  /// split vertices where these change, so they are one per vertex here.
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> uv;
  Eigen::MatrixXd weights;  ///< #V by #B vertex weights (rows as stored; glTF rows sum to 1)
  /// #B skinning transforms S_j = G_j(t) B_j^{-1} (global joint transform at t times the inverse
  /// bind matrix), with G_j from the first animation sampled at t (linear keys, slerped
  /// rotations; the node's own transform where a joint has no channel).
  std::vector<Eigen::Isometry3d> transforms;
  std::vector<Eigen::Vector3d> joints;  ///< #B bone origins in the bind pose
  std::vector<int> parents;             ///< #B index of the parent bone, -1 for a root
  /// load_skin_animation: the skinning transforms at each requested time (transforms = the first).
  std::vector<std::vector<Eigen::Isometry3d>> motion;
  /// The axes and unit the file declares and how they were converted, for the log.
  std::string axes;
  /// Whether the file declared a left-handed frame, which the conversion mirrors (and turns the
  /// triangles' winding back, so that they face out again).
  bool mirrored = false;
  /// The skinned mesh's name, and how many meshes with bones the file has (the first is read).
  std::string mesh_name;
  int skinned_meshes = 0;
  /// The file's first animation: whether there is one, and its length (s, from its first key).
  bool animated = false;
  double duration = 0.0;
};

/// Loads the first skinned mesh of `path` and evaluates its first animation at `time` (s).
/// @throws IoError naming the file if assimp cannot read it, it has no skinned mesh, or it
/// declares impossible axes or unit.
LoadedSkin load_skin(const std::filesystem::path& path, double time);
/// The same, with the skinning transforms at every time of `times` (s; held after the end of the
/// animation) in `motion`, from one reading of the file.
LoadedSkin load_skin_animation(const std::filesystem::path& path, const std::vector<double>& times);

/// A joint named in the config that the motion file's skeleton does not have: which one (-1 for
/// the root, else its index in the joints), and the names the skeleton has, so that the caller
/// can name the config key.
class MissingJoint : public IoError {
 public:
  MissingJoint(const std::string& message, int joint, std::vector<std::string> names)
      : IoError(message), joint(joint), names(std::move(names)) {}
  int joint;
  std::vector<std::string> names;  ///< the skeleton's joints, in depth-first order
};

/// A bone-chain animation from a skeleton animation file (BVH motion capture, e.g. the CMU
/// captures): `root`'s global placement drives the chain's root (translation relative to the
/// first sample, times `scale`), and the local rotations of `joints` (one per chain bone) drive
/// the bones. Sampled every 1/frame_rate s from `start` for `frames` samples (held at the end).
/// @throws IoError naming the file if it does not parse or has no animation; MissingJoint if it
///   lacks a joint.
ChainMotion load_chain_motion(const std::filesystem::path& path, const std::string& root,
                              const std::vector<std::string>& joints, double scale, double start,
                              double frame_rate, int frames);

}  // namespace datadyn::flesh
