#pragma once
/// @file
/// A simulation body from a rigged surface mesh (Jin et al. 2022, section 7: a tetrahedral
/// mesh of the character with its skinning carried inside): welding the file's split vertices,
/// skin weights for the interior vertices, and the vertices that follow the bones.

#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::flesh {

/// Merges vertices closer than `tolerance` (same unit as `points`, > 0) to the first of them.
/// File formats split a vertex wherever its normal or texture coordinate changes, which leaves a
/// closed surface with cracks in its indexing.
/// @param points #V by 3. @return #V indices into the merged points (first occurrence order)
///   and the merged points.
struct WeldedVertices {
  std::vector<int> index;  ///< #V: the merged vertex of each input vertex
  Points3 points;          ///< #W by 3 merged positions (the first of each group)
};
WeldedVertices weld_vertices(const Points3& points, double tolerance);

/// Skin weights at arbitrary points: each point takes the weights of its nearest surface vertex,
/// normalised to sum 1 (files store rows that sum to 0.95..1.4).
/// @param surface #S by 3; @param weights #S by #B (>= 0, no row all zero);
/// @param points #P by 3, same unit as surface. @return #P by #B, rows summing to 1.
Eigen::MatrixXd nearest_vertex_weights(const Points3& surface, const Eigen::MatrixXd& weights,
                                       const Points3& points);

/// Points within `radius` of a bone: the segment from each bone's parent joint to its joint,
/// or the joint itself for a root bone.
/// @param points #P by 3; @param joints #B joint positions; @param parents #B parent index or
///   -1; radius >= 0, same unit. @return #P flags.
std::vector<bool> near_bones(const Points3& points, const std::vector<Eigen::Vector3d>& joints,
                             const std::vector<int>& parents, double radius);

}  // namespace datadyn::flesh
