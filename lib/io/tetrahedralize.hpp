#pragma once
/// @file
/// Tetrahedral meshing of the solid enclosed by a closed triangle surface, with TetGen 1.5
/// (H. Si, "TetGen, a Delaunay-based quality tetrahedral mesh generator", ACM TOMS 41(2), 2015):
/// a constrained Delaunay tetrahedralization of the surface, refined by Delaunay refinement for
/// a radius-edge bound and a maximum volume.

#include <string>

#include "core/surface_mesh.hpp"
#include "core/tet_mesh.hpp"

namespace datadyn {

/// Options of tetrahedralize_surface; each maps to a TetGen switch (see tetgen_switches).
struct TetrahedralizeOptions {
  /// Largest tet volume (m^3), TetGen switch `a`; 0 = no volume constraint. TetGen refines
  /// until every tet is below it, then its mesh optimization (flips and vertex smoothing) may
  /// enlarge a few tets again, by up to ~20% in our tests: a target, not a hard bound.
  double max_volume = 0.0;
  /// Radius-edge ratio bound (circumradius / shortest edge, dimensionless), switch `q`;
  /// 0 = no quality refinement. TetGen terminates for bounds >= about 1.1; 1.414 is usual.
  double radius_edge_ratio = 1.414;
  /// No Steiner points on the surface (switch `Y`): the boundary of the result is exactly the
  /// input triangles. Otherwise refinement may split surface triangles (the new points lie on
  /// them, so the enclosed volume is unchanged).
  bool preserve_surface = false;
  /// Suppress TetGen's progress output on stdout (switch `Q`).
  bool quiet = true;
};

/// The TetGen switch string for the options, e.g. "pzJq1.414a0.001Q": p (mesh a piecewise
/// linear complex), z (0-based numbering), J (keep unused input points, so input vertex i stays
/// vertex i), then q, a, Y and Q as set. For provenance logs.
std::string tetgen_switches(const TetrahedralizeOptions& options);

/// Tetrahedralizes the solid bounded by a closed surface.
/// @param surface #V by 3 vertices (metres) and #T by 3 triangles of a closed, edge-manifold,
///   non-self-intersecting surface (every edge shared by exactly two triangles); the winding
///   does not matter.
/// @return vertices: rows 0..#V-1 are the input vertices, unchanged and in order (TetGen keeps
///   input points first and, with J, keeps all of them), followed by the Steiner points TetGen
///   added that some tet uses (quality refinement can leave one in none); tets: positively
///   oriented (TetGen's orientation is checked and fixed per tet). An input vertex that no
///   triangle uses is kept as a row; it is in no tet if it lies outside.
/// Self-intersections are looked for first by TetGen's detection pass (switches "pzJdQ"),
/// because TetGen 1.5.0 may crash instead of failing cleanly when meshing such a surface.
/// @throws IoError if the surface is unusable: an index out of range, a non-finite coordinate,
///   a degenerate triangle, an edge not shared by exactly two triangles (open or non-manifold),
///   triangles that intersect or touch each other, or near-touching facets found by TetGen while
///   meshing (its codes 3, 4, 5).
/// @throws RunError if TetGen fails otherwise (out of memory, internal error: codes 1, 2).
/// @pre options.max_volume >= 0; options.radius_edge_ratio == 0 or >= 1.
/// @note Several disjoint closed shells are meshed as separate solids. Nested shells are meshed
///   as one solid with the inner shell as internal faces (no holes are carved).
/// @note TetGen may print diagnostics to stdout when it fails, even with `quiet`.
TetMesh tetrahedralize_surface(const SurfaceMesh& surface, const TetrahedralizeOptions& options);

}  // namespace datadyn
