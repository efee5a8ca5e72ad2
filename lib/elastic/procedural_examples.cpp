#include "elastic/procedural_examples.hpp"

#include <cmath>

#include "core/check.hpp"

namespace datadyn::elastic {

namespace {

/// Position along a planar centre line of piecewise-constant curvature: the line starts at the
/// origin heading along +t (tangent) and curves towards +u. `curvature(s)` for arc length s in
/// [0, L] is kappa1 on [0, split) and kappa2 on [split, L]. Returns the point and heading angle.
struct ArcPoint {
  double t, u, heading;
};

ArcPoint arc_piece(double s, double kappa) {
  if (std::abs(kappa) < 1e-12) return {s, 0.0, 0.0};
  const double phi = kappa * s;
  return {std::sin(phi) / kappa, (1.0 - std::cos(phi)) / kappa, phi};
}

ArcPoint arc_point(double s, double split, double kappa1, double kappa2) {
  if (s <= split) return arc_piece(s, kappa1);
  const ArcPoint a = arc_piece(split, kappa1);
  const ArcPoint b = arc_piece(s - split, kappa2);
  const double c = std::cos(a.heading), sn = std::sin(a.heading);
  return {a.t + c * b.t - sn * b.u, a.u + sn * b.t + c * b.u, a.heading + b.heading};
}

}  // namespace

Points3 deform(const Points3& rest, const Deformation& d) {
  DATADYN_CHECK(d.axis >= 0 && d.axis < 3);
  const Eigen::Vector3d lo = rest.colwise().minCoeff().transpose();
  const Eigen::Vector3d hi = rest.colwise().maxCoeff().transpose();
  const Eigen::Vector3d centre = 0.5 * (lo + hi);
  const int a = d.axis;
  const double length = hi(a) - lo(a);
  Points3 out = rest;
  for (Eigen::Index i = 0; i < rest.rows(); ++i) {
    const Eigen::Vector3d x = rest.row(i).transpose();
    Eigen::Vector3d y = x;
    const double s = length > 0.0 ? (x(a) - lo(a)) / length : 0.0;
    switch (d.kind) {
      case DeformationKind::Twist: {
        const int b = (a + 1) % 3, c = (a + 2) % 3;
        const double phi = d.angle * s;
        const double xb = x(b) - centre(b), xc = x(c) - centre(c);
        y(b) = centre(b) + std::cos(phi) * xb - std::sin(phi) * xc;
        y(c) = centre(c) + std::sin(phi) * xb + std::cos(phi) * xc;
        break;
      }
      case DeformationKind::Bend:
      case DeformationKind::SShape: {
        DATADYN_CHECK_NE(d.direction, a);
        const int u = d.direction;
        const double arc = s * length;
        double kappa1, kappa2, split;
        if (d.kind == DeformationKind::Bend) {
          kappa1 = kappa2 = length > 0.0 ? d.angle / length : 0.0;
          split = length;
        } else {
          kappa1 = length > 0.0 ? 2.0 * d.angle / length : 0.0;
          kappa2 = -kappa1;
          split = 0.5 * length;
        }
        const ArcPoint p = arc_point(arc, split, kappa1, kappa2);
        // Offset from the centre line in the bend plane (along u) goes along the arc's normal.
        const double off = x(u) - centre(u);
        y(a) = lo(a) + p.t - std::sin(p.heading) * off;
        y(u) = centre(u) + p.u + std::cos(p.heading) * off;
        break;
      }
      case DeformationKind::Shear: {
        DATADYN_CHECK_NE(d.direction, a);
        y(d.direction) += d.amount * (x(a) - centre(a));
        break;
      }
      case DeformationKind::Scale: {
        y = centre + d.factors.cwiseProduct(x - centre);
        break;
      }
    }
    out.row(i) = y.transpose();
  }
  return out;
}

}  // namespace datadyn::elastic
