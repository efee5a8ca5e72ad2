#pragma once
/// @file
/// A simulation body from a rigged surface mesh (Jin et al. 2022, section 7: a tetrahedral
/// mesh of the character with its skinning carried inside): an order of the welded surface's own
/// (the welding is in core/vertex_match), skin weights for the interior vertices, and the
/// vertices that follow the bones.

#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"
#include "core/vertex_match.hpp"

namespace datadyn::flesh {

/// A vertex and triangle order that depends on the surface alone, not on the order a file lists
/// it in: vertices by position (x, then y, then z), each triangle turned to start at its lowest
/// vertex (its winding kept; of a degenerate one, the least of its turns), triangles in order of
/// their vertices. An exporter may write the same mesh's faces in another order each time
/// (Blender 3.4's FBX exporter does), which gave the welded vertices another order, and springs
/// fitted on one export were refused on the next.
/// @param points #W by 3, no two equal (welded); @param triangles #T by 3 into them.
struct CanonicalOrder {
  std::vector<int> vertex;             ///< #W: the new index of vertex w
  std::vector<Eigen::Index> triangle;  ///< #T: the input triangle that comes t-th
  std::vector<int> turn;  ///< #T: corner c of output triangle t is corner (c + turn[t]) % 3 of it
};
CanonicalOrder canonical_order(const Points3& points, const Triangles& triangles);

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
