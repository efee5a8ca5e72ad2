#pragma once
/// @file
/// Which vertex of one point set each vertex of another lies on: the vertex order of a mesh as
/// a DCC tool holds it, recovered by position from a simulated copy of it whose vertices were
/// welded and reordered (a rigged mesh read through assimp, a render mesh split at its seams);
/// and the welding itself. Both hash the points into the same cell grid.

#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn {

struct VertexMatch {
  /// #M: for reference vertex j, the point it lies on (the nearest within the tolerance; of
  /// points equally near, the lowest index), or -1 when none is within it.
  std::vector<int> point;
  Eigen::Index unmatched = 0;  ///< reference vertices on no point
  Eigen::Index unreached = 0;  ///< points no reference vertex lies on
  /// The first reference vertex on no point (-1 for none), and the distance to the nearest
  /// point of all from it (infinity for an empty point set): what a message about it says.
  Eigen::Index first_unmatched = -1;
  double first_unmatched_distance = 0;
  /// Reference vertices with a second point within the tolerance (two points of `points` at
  /// one place: the motion of the farther is in no vertex), and the first of them.
  Eigen::Index ambiguous = 0;
  Eigen::Index first_ambiguous = -1;
};

/// Matches each row of `reference` (#M by 3) to the row of `points` (#N by 3, same units and
/// frame) at its position, within `tolerance` (same unit, > 0). Several reference vertices may
/// lie on one point (a vertex split at a seam in the reference, welded in `points`).
/// Hashes `points` into cells `tolerance` wide: O(N + M) for points further apart than the
/// tolerance, and one scan of all points for the first unmatched vertex.
/// @pre both finite; tolerance > 0
VertexMatch match_vertices(const Eigen::Ref<const Points3>& points,
                           const Eigen::Ref<const Points3>& reference, double tolerance);

/// Merges vertices closer than `tolerance` (same unit as `points`, > 0): each vertex joins the
/// nearest merged vertex within the tolerance (of those equally near, the first), or starts a
/// new one. File formats split a vertex wherever its normal or texture coordinate changes, which
/// leaves a closed surface with cracks in its indexing.
struct WeldedVertices {
  std::vector<int> index;  ///< #V: the merged vertex of each input vertex
  Points3 points;          ///< #W by 3 merged positions (the first of each group), in order of
                           ///< their first vertex
};
/// @pre points finite; tolerance > 0
WeldedVertices weld_vertices(const Eigen::Ref<const Points3>& points, double tolerance);

}  // namespace datadyn
