#pragma once
/// @file
/// Self-collision of a cloth grid by particle thickness, as in particle-based cloth (Macklin,
/// Müller, Chentanez, Kim 2014, "Unified particle physics for real-time applications", where
/// cloth particles are spheres): every two particles that are not near each other on the grid are
/// pushed apart to `thickness` along the line between them. In an unstretched sheet every point
/// is within spacing / sqrt(2) of a particle (a cell's centre is that far from its corners), so
/// with thickness >= spacing / sqrt(2) no particle passes through the sheet, and with thickness >=
/// sqrt(1/2 + 1/4) spacing = 0.87 spacing no edge either (its ends are within half an edge of the
/// point where it crosses) - as long as nothing moves about a thickness in one step and the sheet
/// is not stretched open. Pairs whose rest distance is under 1.5 max(thickness, spacing) are never
/// tested (at thickness <= spacing: a particle's 8 grid neighbours), since the springs hold them
/// near their rest distance; two particles 2 rows apart are pushed apart only where the sheet
/// creases tighter than its thickness.
///
/// The separation is a Jacobi pass: each particle sums the pushes of all its overlapping partners
/// in a fixed order and moves by their mean, so any thread count gives the same bytes. A spatial
/// hash (Teschner et al. 2003, "Optimized spatial hashing for collision detection of deformable
/// objects") with cells as large as the search radius finds the partners.

#include <vector>

#include "cloth/cloth_params.hpp"
#include "core/types.hpp"

namespace datadyn::cloth {

/// Distance kept between particles: params.self_collision.thickness, or the rest spacing when 0.
double self_thickness(const ClothParams& params);

class SelfCollision {
 public:
  /// For the grid of `params`; particles listed in `pinned` never move.
  SelfCollision(const ClothParams& params, const std::vector<int>& pinned);

  /// Tested partners of every particle within `reach` (m): particle i's are
  /// partner[start[i] .. start[i + 1]), in a fixed order.
  struct Partners {
    std::vector<int> start, partner;
  };
  Partners partners(const Points3& x, double reach) const;

  /// What separate did: the largest overlap (thickness minus distance, m) left after its last
  /// pass, 0 if none, and how many passes moved particles (0: nothing overlapped).
  struct Separation {
    double overlap = 0.0;
    int passes = 0;
  };
  /// Up to `passes` Jacobi passes over x, among `near` (found at positions close to x). A pinned
  /// particle never moves; one with `fixed[i] != 0` (on a collider) moves only for a pinned
  /// partner or another on a collider, and a free partner takes the whole push.
  Separation separate(Points3& x, const std::vector<char>& fixed, const Partners& near,
                      int passes) const;
  /// The same among the partners within kReach thicknesses of x.
  Separation separate(Points3& x, const std::vector<char>& fixed, int passes) const;

  /// Moves x to `to` as a motion, not a jump: in equal steps, as few as keep the farthest-moving
  /// particle within `step` thicknesses a step, each followed by `passes` passes of
  /// separate(x, fixed, passes) (pinned particles move with the motion but are never pushed). A
  /// displacement applied in one go can put a layer through another; in steps of under a thickness
  /// the spheres meet first, as in the simulation. At most kMaxSteps steps: a longer motion takes
  /// longer ones. Returns the number of steps.
  int move(Points3& x, const Points3& to, double step, int passes) const;
  static constexpr int kMaxSteps = 256;

  /// Partners within this many thicknesses take part in separate(x, fixed, passes): the passes
  /// move particles by a fraction of a thickness, so a pair that comes within one is among them.
  static constexpr double kReach = 1.2;

  double thickness() const { return thickness_; }

  /// Smallest distance between two tested particles (m); +inf if no two are within kReach
  /// thicknesses.
  double closest_pair(const Points3& x) const;

 private:
  struct Grid;  // the spatial hash of one set of positions
  bool tested(int i, int j) const;

  double thickness_ = 0.0;
  int excluded_cells2_ = 0;  // pairs with dr^2 + dc^2 below this (grid units) are not tested
  std::vector<int> row_, column_;
  Points3 rest_;  // fallback directions for coincident particles
  std::vector<char> pinned_;
};

/// Edge-triangle intersections of a grid cloth: every edge of grid_triangles against every
/// triangle that shares no particle with it; an edge counts once per triangle it passes through.
/// A sheet that passes through itself has some; one that only comes close has none. A uniform
/// grid with cells of twice the mean edge length finds the candidates. For evaluation, tests and
/// benchmarks (a few ms a frame at 33 x 33), not for the solver. @pre finite positions
struct SheetCrossings {
  long crease = 0;  ///< edge and triangle within 2 rows and 2 columns: a crease folded through
  long layers = 0;  ///< farther apart on the grid: one layer through another
};
SheetCrossings count_crossings(const ClothParams& params, const Points3& x);

}  // namespace datadyn::cloth
