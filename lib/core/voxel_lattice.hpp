#pragma once
/// @file
/// A tetrahedral lattice that fills a triangle surface, for bodies whose surface TetGen cannot
/// take (open, with holes, or intersecting itself - typical of production characters). The
/// surface is then carried as an embedded render mesh (Koyama et al., fig. 9; FastLSM's lattice
/// over a character). Inside is decided by the generalized winding number (Jacobson et al. 2013,
/// "Robust inside-outside segmentation using generalized winding numbers"), which degrades
/// gracefully on holes and overlaps where ray parity does not.

#include <Eigen/Core>

#include "core/surface_mesh.hpp"
#include "core/tet_mesh.hpp"

namespace datadyn {

/// Generalized winding number of a triangle soup at a point: Σ_t Ω_t(p) / 4π with Ω_t the signed
/// solid angle of triangle t seen from p (Van Oosterom & Strackee 1983). 1 inside and 0 outside a
/// closed, outward oriented surface; between 0 and 1 near holes.
/// @param surface #V by 3 vertices (metres), #T by 3 triangles, counter-clockwise seen from
/// outside.
/// @param point query point (metres).
/// @return the winding number (dimensionless). A point on a triangle counts that triangle as 0.
double winding_number(const SurfaceMesh& surface, const Eigen::Vector3d& point);

/// Which lattice cells become tets.
enum class VoxelFill {
  Inside,  ///< cells whose centre has winding number >= 0.5
  Cover,   ///< those plus every cell the surface passes through (the body covers its surface)
};

struct VoxelLatticeSpec {
  double cell_size = 0.1;  ///< edge of a cubic cell (metres), > 0
  VoxelFill fill = VoxelFill::Cover;
  int tets_per_cell = 5;          ///< 5 or 6, as box_lattice
  bool largest_component = true;  ///< keep only the largest face-connected group of cells
};

struct VoxelLattice {
  TetMesh mesh;           ///< kept cells' tets, vertices renumbered (no unused vertex)
  int cells_inside = 0;   ///< cells kept because their centre is inside
  int cells_surface = 0;  ///< cells kept only because the surface passes through them
  int cells_dropped = 0;  ///< kept cells left out as not in the largest component
  int components = 0;     ///< face-connected groups of cells before dropping
};

/// Cubic cells of edge cell_size on a grid centred on the surface's bounding box (each axis
/// gets ceil(extent / cell_size) cells, at least one), filled as `fill` says and split into tets
/// as box_lattice does (cells in x-fastest order, so the result depends on the inputs only).
/// @param surface #V by 3 vertices (metres), #T by 3 triangles; need not be closed or manifold.
/// @pre cell_size > 0; surface has at least one triangle; tets_per_cell is 5 or 6.
/// @return the lattice; its mesh is empty when no cell qualifies.
VoxelLattice voxel_lattice(const SurfaceMesh& surface, const VoxelLatticeSpec& spec);

}  // namespace datadyn
