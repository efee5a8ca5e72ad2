#pragma once
/// @file
/// A triangle surface mesh.

#include "core/types.hpp"

namespace datadyn {

/// Triangle surface mesh.
struct SurfaceMesh {
  /// #V by 3 vertex positions (metres).
  Points3 vertices;
  /// #T by 3 vertex indices (0-based), counter-clockwise seen from outside for closed surfaces.
  Triangles triangles;
};

}  // namespace datadyn
