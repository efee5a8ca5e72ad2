#pragma once
/// @file
/// A tetrahedral mesh: vertices and positively oriented tetrahedra.

#include "core/types.hpp"

namespace datadyn {

/// Tetrahedral mesh.
struct TetMesh {
  /// #V by 3 vertex positions (metres).
  Points3 vertices;
  /// #K by 4 vertex indices (0-based), positively oriented:
  /// (x1 - x0) · ((x2 - x0) × (x3 - x0)) > 0.
  Tets tets;
};

}  // namespace datadyn
