#pragma once
/// @file
/// A 2D tank for MPS: a polygon holding the water, with solid obstacles inside it (a sloping
/// beach, a step, a reef), turned into the fixed boundary particles of MPS - layers of wall
/// particles (in the pressure Poisson equation) backed by dummy particles (counted in the number
/// density only), all on the same square lattice of spacing l0 as the water (Koshizuka & Oka 1996,
/// sec. "boundary conditions"; 2 wall + 2 dummy layers as in the textbook code).

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"
#include "fluid/neighbor_grid.hpp"

namespace datadyn::fluid {

/// A simple polygon, vertices in order (either orientation), metres.
using Polygon = std::vector<Eigen::Vector2d>;

/// Particle kinds, as stored in caches (int8).
enum class ParticleType : std::int8_t {
  Fluid = 0,  ///< water
  Wall = 1,   ///< fixed boundary particle solved in the pressure Poisson equation
  Dummy = 2,  ///< fixed particle behind the walls, counted in the number density only
};

/// The tank: its interior polygon and solid obstacles. The water domain Ω is the polygon's interior
/// minus the obstacles; with an open top, also everything above the rim (the highest vertex y)
/// within the polygon's x range, so splashes may rise above the walls.
struct TankShape {
  /// Interior of the tank (metres), >= 3 vertices. With open_top, horizontal edges at the rim are
  /// open (no wall particles); every other edge is a wall.
  Polygon vertices{{0.0, 0.0}, {1.0, 0.0}, {1.0, 0.6}, {0.0, 0.6}};
  bool open_top = true;
  /// Solid polygons inside the tank (metres), each >= 3 vertices; their edges facing the water are
  /// walls. E.g. a sloping beach {{1.2, 0}, {2.4, 0}, {2.4, 0.3}}.
  std::vector<Polygon> obstacles;
};

/// Why a tank shape is unusable ("" if it is fine): too few vertices, zero area, an obstacle
/// outside the tank, non-finite coordinates.
std::string tank_shape_error(const TankShape& shape);

/// Whether p lies inside polygon `poly` (even-odd rule; points on an edge count either way).
bool point_in_polygon(const Polygon& poly, const Eigen::Vector2d& p);

/// A tank discretised at particle spacing l0: the domain test, the distance into the solid, the
/// boundary particles and the lattice the water is placed on.
/// Lattice point (i, j) sits at origin + l0 (i + 1/2, j + 1/2), origin = the lower-left corner of
/// the tank polygon's bounding box, so axis-aligned walls through that corner lie half a spacing
/// from the nearest particles on both sides.
class Tank {
 public:
  /// @param shape         the tank; @pre tank_shape_error(shape) is empty
  /// @param l0            particle spacing (metres), > 0
  /// @param wall_layers   layers of wall particles, >= 1 (2 in Koshizuka's code)
  /// @param dummy_layers  layers of dummy particles behind them, >= 0 (2)
  Tank(TankShape shape, double l0, int wall_layers = 2, int dummy_layers = 2);

  const TankShape& shape() const { return shape_; }
  double l0() const { return l0_; }
  /// Lower-left and upper-right corners of the tank polygon's bounding box (metres).
  const Eigen::Vector2d& min_corner() const { return min_; }
  const Eigen::Vector2d& max_corner() const { return max_; }
  /// Height of the rim (the highest vertex, metres).
  double rim() const { return max_.y(); }

  /// Whether p is in the water domain Ω (see TankShape).
  bool contains(const Eigen::Vector2d& p) const;
  /// Distance (metres) from a point outside Ω to the nearest wetted boundary (the edges that face
  /// the water), accurate to l0 / 16; 0 for points in Ω; infinity beyond `search` (metres, <=
  /// (wall_layers + dummy_layers + 1) l0).
  double depth(const Eigen::Vector2d& p, double search) const;
  /// The point of the wetted boundary nearest to p (accurate to l0 / 16), if one lies within
  /// `search` (metres, <= depth_search()).
  bool nearest_wet_point(const Eigen::Vector2d& p, double search, Eigen::Vector2d& out) const;
  /// The largest `search` depth() accepts: (wall_layers + dummy_layers + 1) l0.
  double depth_search() const { return sample_grid_.cell_size(); }

  /// Boundary particles: lattice points outside Ω (below the rim if the top is open) whose depth is
  /// < wall_layers l0 (walls) or < (wall_layers + dummy_layers) l0 (dummies), in lattice order
  /// (rows of increasing y, x fastest). #B by 2 metres, and their types.
  const Points2& boundary_positions() const { return boundary_; }
  const std::vector<ParticleType>& boundary_types() const { return boundary_type_; }

  /// Lattice points in Ω for which `region` holds, in lattice order (#M by 2, metres). Only lattice
  /// rows up to `max_y` (metres) are visited.
  Points2 lattice_points(const std::function<bool(const Eigen::Vector2d&)>& region,
                         double max_y) const;
  /// The lattice point nearest to p (metres).
  Eigen::Vector2d lattice_point(const Eigen::Vector2d& p) const;

 private:
  TankShape shape_;
  double l0_;
  int wall_layers_, dummy_layers_;
  Eigen::Vector2d min_, max_;
  Points2 samples_;  // points on the wetted boundary, l0/8 apart
  CellGrid sample_grid_;
  Points2 boundary_;
  std::vector<ParticleType> boundary_type_;
};

}  // namespace datadyn::fluid
