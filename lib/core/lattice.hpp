#pragma once
/// @file
/// Structured tetrahedral lattices of a box and of a cylinder: conforming meshes (two tets share
/// a whole face or nothing of their interiors) for examples, tests and shape-matching clusters.

#include <Eigen/Core>

#include "core/tet_mesh.hpp"

namespace datadyn {

/// An axis-aligned box filled with nx × ny × nz lattice points.
struct BoxLatticeSpec {
  int nx = 2;                                            ///< points along x, >= 2
  int ny = 2;                                            ///< points along y, >= 2
  int nz = 2;                                            ///< points along z, >= 2
  Eigen::Vector3d min_corner = Eigen::Vector3d::Zero();  ///< metres
  Eigen::Vector3d max_corner = Eigen::Vector3d::Ones();  ///< metres, > min_corner per axis
  int tets_per_cell = 6;                                 ///< 5 or 6, see box_lattice
};

/// Tetrahedral lattice of a box.
/// Vertex (i, j, k), 0 <= i < nx, ..., is row i + nx (j + ny k) at
/// min_corner + (i, j, k) ∘ (max_corner - min_corner) / (nx - 1, ny - 1, nz - 1).
/// Each of the (nx-1)(ny-1)(nz-1) cells is split into
/// - 6 tets (Kuhn / Freudenthal split): one tet per permutation of the axes, along the monotone
///   path from the cell's lowest corner to its highest; every cell is split the same way, all
///   share the main diagonal, and the result is conforming; or
/// - 5 tets: a central tet on the four corners of one parity plus four corner tets. The parity
///   alternates with (i + j + k) mod 2, so face diagonals of neighbouring cells match
///   (conforming).
/// Cells are emitted with x fastest, then y, then z; tets of a cell consecutively.
/// @return #V = nx ny nz vertices and #K = 5 or 6 × (nx-1)(ny-1)(nz-1) positively oriented tets.
/// @pre nx, ny, nz >= 2; max_corner > min_corner componentwise; tets_per_cell is 5 or 6.
TetMesh box_lattice(const BoxLatticeSpec& spec);

/// A solid cylinder around the y axis.
struct CylinderLatticeSpec {
  double radius = 0.5;  ///< metres, > 0
  double height = 1.0;  ///< metres, > 0; the cylinder spans y in [base.y, base.y + height]
  int rings = 2;        ///< radial subdivisions, >= 1
  int segments = 12;    ///< points per ring around the axis, >= 3
  int layers = 4;       ///< subdivisions along the axis, >= 1
  Eigen::Vector3d base = Eigen::Vector3d::Zero();  ///< centre of the bottom disk (metres)
};

/// Tetrahedral lattice of a cylinder (a prism over a regular polygon inscribed in the circle).
/// Each cross-section y = base.y + height l / layers, l = 0..layers, carries the same disk
/// triangulation: the centre point plus `rings` concentric rings of `segments` points at radii
/// radius r / rings (r = 1..rings) and angles 2π s / segments (s = 0..segments-1, starting on +x,
/// counter-clockwise seen from +y); a fan of triangles around the centre and two triangles per
/// quad between consecutive rings. Every disk triangle is extruded to a prism between
/// consecutive sections and the prism split into 3 tets by the vertex-index rule (each quad side
/// is cut along the diagonal from its lower-index bottom vertex to its higher-index top vertex),
/// which depends on the shared edge only, so the mesh is conforming.
/// Vertex numbering: section l, then the centre (index 0 in the section) followed by ring r
/// segment s at 1 + (r - 1) segments + s.
/// @return #V = (layers + 1)(1 + rings segments) vertices and #K = 3 layers segments (2 rings - 1)
///   positively oriented tets. Its volume is that of the inscribed polygon prism,
///   height × (segments / 2) radius^2 sin(2π / segments).
/// @pre radius > 0, height > 0, rings >= 1, segments >= 3, layers >= 1.
TetMesh cylinder_lattice(const CylinderLatticeSpec& spec);

}  // namespace datadyn
