#pragma once
/// @file
/// A render mesh carried by the simulation tets (Koyama et al. 2013 fig. 9): every render vertex
/// is a fixed barycentric combination of the four particles of one tet.

#include <vector>

#include <Eigen/Core>

#include "core/surface_mesh.hpp"
#include "core/tet_mesh.hpp"
#include "core/types.hpp"

namespace datadyn::elastic {

/// Render vertices as barycentric combinations of particles.
struct Embedding {
  /// #R by 4 particle indices per render vertex.
  Eigen::Matrix<int, Eigen::Dynamic, 4, Eigen::RowMajor> particles;
  /// #R by 4 weights per render vertex, summing to 1 (negative for a vertex outside its tet).
  Eigen::Matrix<double, Eigen::Dynamic, 4, Eigen::RowMajor> weights;
  /// #T by 3 triangles of the render mesh, indexing render vertices: its faces cut into
  /// triangles, but for those kept in `quads`.
  Triangles triangles;
  /// #Q by 4 quads of the render mesh: the four-corner faces of its file, whole, as a
  /// subdivision surface needs them, wound as their triangles are.
  Quads quads;
  /// The render mesh's texture coordinates per triangle corner (carried to the exported surface),
  /// or no corners.
  FaceVaryingUv uv;
  /// #Q by 4 rows of uv.coordinates per quad corner, or no rows.
  Quads uv_quads;
  /// Largest distance (metres) from a render vertex to the point of its tet with the clamped
  /// barycentric coordinates (0 when every vertex is inside a tet); at least the vertex's
  /// distance to the tet mesh.
  double max_outside_distance = 0.0;
};

/// Binds every vertex of `surface` to the tet of `mesh` that contains it, or, for a vertex in no
/// tet, to the tet whose smallest barycentric coordinate is largest (the nearest in that sense),
/// extrapolating linearly. Cost: #R times the tets whose bounding box holds the vertex (all
/// tets for a vertex outside the mesh).
/// @param mesh rest tets (metres), positively oriented.
/// @param surface render mesh in the same frame (metres). The four-corner faces of its file
///   (surface.polygons) become the embedding's quads, the rest its triangles.
Embedding embed_surface(const TetMesh& mesh, const SurfaceMesh& surface);

/// The boundary of the tet mesh as an embedding: one render vertex per particle on the boundary
/// (in ascending particle order) and the outward boundary triangles.
Embedding boundary_embedding(const TetMesh& mesh);

/// Render vertex positions from particle positions.
/// @param x #V by 3 particle positions (metres).
/// @param out #R by 3 positions (metres), resized.
void embedded_positions(const Embedding& e, const Eigen::Ref<const Points3>& x, Points3& out);

}  // namespace datadyn::elastic
