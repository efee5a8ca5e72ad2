#pragma once
/// @file
/// Procedural example poses: the rest pose deformed by a twist, a bend, an S-shape, a shear or a
/// scale, as an artist would model the example poses of Koyama et al. 2013 (figs. 1, 8, 9, 10).
/// Each is a smooth map of the rest positions, measured on the body's bounding box along an
/// `axis`: s = (x_axis − lo) / (hi − lo) in [0, 1] runs along the body, the centre line goes
/// through the box centre.

#include <string>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::elastic {

enum class DeformationKind {
  Twist,   ///< cross-section at s turned by angle × s about the centre line
  Bend,    ///< the centre line bent into one circular arc turning by `angle` towards `direction`
  SShape,  ///< two arcs of opposite curvature, each turning by `angle` (first towards direction)
  Shear,   ///< displacement amount × (x_axis − centre) along `direction` (metres per metre)
  Scale,   ///< each coordinate scaled about the centre by factors (x, y, z)
};

/// A procedural deformation.
struct Deformation {
  DeformationKind kind = DeformationKind::Twist;
  int axis = 1;       ///< 0, 1, 2 = x, y, z: the long axis the deformation runs along
  int direction = 0;  ///< 0, 1, 2: bend/shear direction, != axis
  double angle = 3.14159265358979323846;              ///< radians (twist, bend, S-shape)
  double amount = 0.5;                                ///< shear, dimensionless
  Eigen::Vector3d factors = Eigen::Vector3d::Ones();  ///< scale, dimensionless, > 0
};

/// The rest pose deformed.
/// @param rest #V by 3 rest positions (metres).
/// @return #V by 3 positions (metres). Bend and S-shape keep the length of the centre line
///   (an arc of length hi − lo) and map cross-sections rigidly onto the normal plane of the arc;
///   twist and shear keep the volume; scale changes it by the product of the factors.
/// @pre axis != direction for bend, S-shape and shear; angle >= 0 for bend and S-shape keeps
///   the bend towards +direction (negative turns the other way).
Points3 deform(const Points3& rest, const Deformation& d);

}  // namespace datadyn::elastic
