#pragma once
/// @file
/// Volumes, boundary and adjacency of tetrahedral meshes. Every output is in a deterministic order
/// that depends only on the input arrays (no hash-table iteration order).

#include <vector>

#include <Eigen/Core>

#include "core/tet_mesh.hpp"
#include "core/types.hpp"

namespace datadyn {

/// Signed volume of every tetrahedron, V_k = (x1 - x0) · ((x2 - x0) × (x3 - x0)) / 6.
/// @param vertices #V by 3 positions (metres).
/// @param tets #K by 4 vertex indices into vertices.
/// @return #K volumes (m^3); positive for positively oriented tets, negative for inverted ones.
/// @pre every index in tets is in [0, #V).
Eigen::VectorXd tet_volumes(const Points3& vertices, const Tets& tets);

/// The tets reordered so that every one has non-negative volume: a tet with negative volume gets
/// its vertices 2 and 3 swapped. Zero-volume tets are left as they are.
/// @param vertices #V by 3 positions (metres).
/// @param tets #K by 4 vertex indices into vertices.
/// @return #K by 4 indices, row k a permutation of row k of tets.
Tets orient_tets_positive(const Points3& vertices, const Tets& tets);

/// Faces of the tets that belong to exactly one tet, oriented outward (counter-clockwise seen
/// from outside, i.e. the right-hand normal points away from the tet's fourth vertex).
/// @param tets #K by 4 positively oriented vertex indices.
/// @return #B by 3 triangles, ordered by owning tet, then by the local face order
///   (1,2,3), (0,3,2), (0,1,3), (0,2,1) (the faces opposite vertex 0, 1, 2, 3).
/// @note Faces shared by three or more tets (a non-manifold input) are not boundary faces.
Triangles boundary_triangles(const Tets& tets);

/// Turns a closed surface outward: when its enclosed signed volume (divergence theorem) is
/// negative, swaps corners 1 and 2 of every triangle, and of every row of `corners` (the
/// triangles' texture coordinate indices, #T by 3, or empty) with them. Returns whether it did.
/// Files wind their faces either way; a renderer culls or shades by the winding. A surface that
/// is not closed (an edge not shared by exactly two triangles) is left as it is: its signed
/// volume depends on where the origin is.
bool orient_outward(const Points3& points, Triangles& triangles, Triangles& corners);

/// For each vertex the vertices that share a tet edge with it.
/// @param tets #K by 4 vertex indices.
/// @param vertex_count #V, the number of vertices (unreferenced vertices get an empty ring).
/// @return #V lists, each sorted ascending, without duplicates and without the vertex itself.
/// @pre every index in tets is in [0, vertex_count).
std::vector<std::vector<int>> vertex_one_ring(const Tets& tets, int vertex_count);

/// The mesh without the vertices no tet uses (TetGen keeps unused input points; a lattice cut to
/// a shape leaves some), the kept vertices renumbered in their original order.
/// @param mesh #V by 3 vertices, #K by 4 tets.
/// @return the same tets over #V' <= #V vertices.
TetMesh remove_unused_vertices(const TetMesh& mesh);

}  // namespace datadyn
