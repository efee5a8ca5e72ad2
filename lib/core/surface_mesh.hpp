#pragma once
/// @file
/// A triangle surface mesh, with its texture coordinates where it has them.

#include <vector>

#include "core/types.hpp"

namespace datadyn {

/// Texture coordinates given per triangle corner, as OBJ's `vt` indices and USD's indexed
/// faceVarying primvars store them: a seam (one vertex with two coordinates, where a texture
/// island ends) then needs no split vertex, and a vertex stays one simulated point.
struct FaceVaryingUv {
  /// #M by 2 (u, v); (0, 0) is the texture's lower left corner.
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> coordinates;
  /// #T by 3 (one row per triangle of the mesh): corner c of triangle t has coordinates
  /// row corners(t, c). No rows: the mesh has no texture coordinates.
  Triangles corners;

  bool empty() const { return corners.rows() == 0; }
};

/// The faces of a mesh file as it gave them, before they were cut into triangles: face f has
/// sizes[f] corners (vertex indices), listed in order in corners after the earlier faces'.
struct Polygons {
  std::vector<int> sizes, corners;
  bool operator==(const Polygons&) const = default;
};

/// Triangle surface mesh.
struct SurfaceMesh {
  /// #V by 3 vertex positions (metres).
  Points3 vertices;
  /// #T by 3 vertex indices (0-based), counter-clockwise seen from outside for closed surfaces.
  Triangles triangles;
  /// Texture coordinates of the triangles' corners, or empty.
  FaceVaryingUv uv;
  /// The file's faces (OBJ): two files with the same faces hold one mesh in two poses, while
  /// their triangles may differ where a concave face is cut by its shape. Empty for a mesh not
  /// read from a file of faces.
  Polygons polygons;
};

}  // namespace datadyn
