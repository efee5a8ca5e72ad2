#pragma once
/// @file
/// The MPS weight function and the constants of a perfect particle lattice (Koshizuka & Oka 1996,
/// "Moving-particle semi-implicit method for fragmentation of incompressible fluid", Nucl. Sci.
/// Eng. 123, eqs. 3-4 and 11).

#include <cmath>

namespace datadyn::fluid {

/// MPS weight w(r) = r_e / r - 1 for 0 < r < r_e, and 0 for r >= r_e (Koshizuka & Oka eq. 3).
/// @param r   distance between two particles (metres), > 0
/// @param re  radius of influence r_e (metres), > 0
/// @note w is singular at r = 0: two particles never sit on the same spot (the collision model
///       keeps them apart); callers skip i == j.
inline double mps_weight(double r, double re) {
  return r < re ? re / r - 1.0 : 0.0;
}

/// Constants of the MPS operators taken from a perfect lattice.
struct LatticeConstants {
  double n0 = 0;      ///< particle number density n0 = Σ_j w(|r_j|) (dimensionless)
  double lambda = 0;  ///< λ = Σ_j |r_j|² w(|r_j|) / Σ_j w(|r_j|) (metres²), Laplacian model eq. 11
  int neighbours = 0;  ///< lattice points j ≠ 0 with |r_j| < r_e
};

/// n0 and λ around one particle of a square (2D) or cubic (3D) lattice of spacing l0, summed over
/// every other lattice point within r_e.
/// @param re         radius of influence (metres), > 0
/// @param l0         lattice spacing (metres), > 0
/// @param dimension  2 or 3
/// @note For l0 = 1 in 2D: r_e = 2.1 gives 12 neighbours, n0 = 6.539697, λ = 1.388351; r_e = 3.1
///       gives 28 neighbours, n0 = 18.976417, λ = 2.448472 (eqs. 3 and 11 summed over the lattice).
///       n0 does not depend on l0; λ scales with l0².
LatticeConstants lattice_constants(double re, double l0, int dimension = 2);

}  // namespace datadyn::fluid
