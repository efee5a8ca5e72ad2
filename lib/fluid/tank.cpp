#include "fluid/tank.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace datadyn::fluid {

namespace {

double signed_area(const Polygon& poly) {
  double a = 0;
  for (std::size_t i = 0, n = poly.size(); i < n; ++i) {
    const Eigen::Vector2d& p = poly[i];
    const Eigen::Vector2d& q = poly[(i + 1) % n];
    a += p.x() * q.y() - q.x() * p.y();
  }
  return 0.5 * a;
}

std::string vertex_text(const Eigen::Vector2d& p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%g, %g)", p.x(), p.y());
  return buf;
}

double orientation(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  return (b.x() - a.x()) * (c.y() - a.y()) - (b.y() - a.y()) * (c.x() - a.x());
}

/// Whether segments pq and rs share a point (touching counts).
bool segments_meet(const Eigen::Vector2d& p, const Eigen::Vector2d& q, const Eigen::Vector2d& r,
                   const Eigen::Vector2d& s) {
  const double o1 = orientation(p, q, r), o2 = orientation(p, q, s);
  const double o3 = orientation(r, s, p), o4 = orientation(r, s, q);
  if (o1 == 0 && o2 == 0) {  // collinear: the extents overlap
    const auto overlap = [](double a0, double a1, double b0, double b1) {
      return std::max(std::min(a0, a1), std::min(b0, b1)) <=
             std::min(std::max(a0, a1), std::max(b0, b1));
    };
    return overlap(p.x(), q.x(), r.x(), s.x()) && overlap(p.y(), q.y(), r.y(), s.y());
  }
  return ((o1 <= 0 && o2 >= 0) || (o1 >= 0 && o2 <= 0)) &&
         ((o3 <= 0 && o4 >= 0) || (o3 >= 0 && o4 <= 0));
}

/// "edges i and j cross" for the first two edges of `poly` that are not neighbours and meet
/// (edge i runs from vertex i to vertex i + 1), or "".
std::string crossing_edges(const Polygon& poly) {
  const std::size_t n = poly.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // neighbours through vertex 0
      if (segments_meet(poly[i], poly[(i + 1) % n], poly[j], poly[(j + 1) % n]))
        return "edges " + std::to_string(i) + " " + vertex_text(poly[i]) + "-" +
               vertex_text(poly[(i + 1) % n]) + " and " + std::to_string(j) + " " +
               vertex_text(poly[j]) + "-" + vertex_text(poly[(j + 1) % n]) +
               " meet: expected a simple polygon (its edges meet only at their shared corners)";
    }
  return "";
}

}  // namespace

bool point_in_polygon(const Polygon& poly, const Eigen::Vector2d& p) {
  bool inside = false;
  for (std::size_t i = 0, n = poly.size(), j = n - 1; i < n; j = i++) {
    const Eigen::Vector2d& a = poly[i];
    const Eigen::Vector2d& b = poly[j];
    if ((a.y() > p.y()) != (b.y() > p.y()) &&
        p.x() < (b.x() - a.x()) * (p.y() - a.y()) / (b.y() - a.y()) + a.x())
      inside = !inside;
  }
  return inside;
}

std::string tank_shape_error(const TankShape& shape) {
  auto check_polygon = [](const Polygon& poly, const std::string& what) -> std::string {
    if (poly.size() < 3)
      return what + ": expected at least 3 vertices, got " + std::to_string(poly.size());
    for (const auto& v : poly)
      if (!v.allFinite()) return what + ": vertex " + vertex_text(v) + " is not finite";
    if (!(std::abs(signed_area(poly)) > 0)) return what + ": the polygon has no area";
    if (auto e = crossing_edges(poly); !e.empty()) return what + ": " + e;
    return "";
  };
  if (auto e = check_polygon(shape.vertices, "tank"); !e.empty()) return e;
  for (std::size_t k = 0; k < shape.obstacles.size(); ++k) {
    const std::string what = "obstacle " + std::to_string(k);
    if (auto e = check_polygon(shape.obstacles[k], what); !e.empty()) return e;
    // Every vertex inside the tank or on its boundary: test a point pulled slightly towards the
    // obstacle's centroid.
    Eigen::Vector2d c = Eigen::Vector2d::Zero();
    for (const auto& v : shape.obstacles[k]) c += v;
    c /= static_cast<double>(shape.obstacles[k].size());
    for (const auto& v : shape.obstacles[k]) {
      if (!point_in_polygon(shape.vertices, v + 1e-6 * (c - v)))
        return what + ": vertex " + vertex_text(v) + " is outside the tank";
    }
  }
  return "";
}

Tank::Tank(TankShape shape, double l0, int wall_layers, int dummy_layers)
    : shape_(std::move(shape)), l0_(l0), wall_layers_(wall_layers), dummy_layers_(dummy_layers) {
  DATADYN_CHECK(l0 > 0);
  DATADYN_CHECK(wall_layers >= 1 && dummy_layers >= 0);
  DATADYN_CHECK_EQ(tank_shape_error(shape_), std::string());
  min_ = max_ = shape_.vertices.front();
  for (const auto& v : shape_.vertices) {
    min_ = min_.cwiseMin(v);
    max_ = max_.cwiseMax(v);
  }

  // Samples of the wetted boundary: every wall edge sampled l0/8 apart, kept where the water side
  // of the edge is in Ω (so edges buried in another solid, e.g. the bottom under a beach, drop).
  std::vector<Eigen::Vector2d> samples;
  auto sample_edges = [&](const Polygon& poly, bool solid_inside, bool is_tank) {
    const double orient = signed_area(poly) > 0 ? 1.0 : -1.0;  // +1: counter-clockwise
    for (std::size_t i = 0, n = poly.size(); i < n; ++i) {
      const Eigen::Vector2d a = poly[i], b = poly[(i + 1) % n];
      if (is_tank && shape_.open_top && a.y() == rim() && b.y() == rim()) continue;
      const Eigen::Vector2d d = b - a;
      const double len = d.norm();
      if (len == 0) continue;
      // Left normal points into a counter-clockwise polygon; water is inside the tank and
      // outside an obstacle.
      Eigen::Vector2d water(-d.y() / len, d.x() / len);
      water *= orient * (solid_inside ? -1.0 : 1.0);
      const int m = std::max(1, static_cast<int>(std::ceil(len / (l0_ / 8))));
      for (int k = 0; k <= m; ++k) {
        const Eigen::Vector2d s = a + d * (static_cast<double>(k) / m);
        if (contains(s + 1e-4 * l0_ * water)) samples.push_back(s);
      }
    }
  };
  sample_edges(shape_.vertices, false, true);
  for (const auto& o : shape_.obstacles) sample_edges(o, true, false);

  const double reach = (wall_layers_ + dummy_layers_ + 1) * l0_;
  const Eigen::Vector2d pad = Eigen::Vector2d::Constant(2 * reach);
  sample_grid_ = CellGrid(min_ - pad, max_ + pad, reach);
  Points2 raw(static_cast<Eigen::Index>(samples.size()), 2);
  for (std::size_t i = 0; i < samples.size(); ++i)
    raw.row(static_cast<Eigen::Index>(i)) = samples[i].transpose();
  sample_grid_.bin(raw);
  samples_.resize(raw.rows(), 2);
  for (std::size_t k = 0; k < sample_grid_.order().size(); ++k)
    samples_.row(static_cast<Eigen::Index>(k)) = raw.row(sample_grid_.order()[k]);

  // Boundary particles on the lattice.
  const int layers = wall_layers_ + dummy_layers_;
  const int i0 = -layers - 1, j0 = -layers - 1;
  const int i1 = static_cast<int>(std::ceil((max_.x() - min_.x()) / l0_)) + layers + 1;
  const int j1 = static_cast<int>(std::ceil((max_.y() - min_.y()) / l0_)) + layers + 1;
  std::vector<Eigen::Vector2d> pts;
  std::vector<ParticleType> types;
  for (int j = j0; j <= j1; ++j) {
    for (int i = i0; i <= i1; ++i) {
      const Eigen::Vector2d p = min_ + l0_ * Eigen::Vector2d(i + 0.5, j + 0.5);
      if (shape_.open_top && p.y() >= rim()) continue;
      if (contains(p)) continue;
      const double d = depth(p, layers * l0_);
      if (d < wall_layers_ * l0_) {
        pts.push_back(p);
        types.push_back(ParticleType::Wall);
      } else if (d < layers * l0_) {
        pts.push_back(p);
        types.push_back(ParticleType::Dummy);
      }
    }
  }
  boundary_.resize(static_cast<Eigen::Index>(pts.size()), 2);
  for (std::size_t k = 0; k < pts.size(); ++k)
    boundary_.row(static_cast<Eigen::Index>(k)) = pts[k].transpose();
  boundary_type_ = std::move(types);
}

bool Tank::contains(const Eigen::Vector2d& p) const {
  if (shape_.open_top && p.y() > rim()) return p.x() >= min_.x() && p.x() <= max_.x();
  if (!point_in_polygon(shape_.vertices, p)) return false;
  for (const auto& o : shape_.obstacles)
    if (point_in_polygon(o, p)) return false;
  return true;
}

double Tank::depth(const Eigen::Vector2d& p, double search) const {
  if (contains(p)) return 0.0;
  DATADYN_CHECK_LE(search, sample_grid_.cell_size());
  double best = search * search;
  bool found = false;
  sample_grid_.for_each_candidate_slot(p, [&](int k) {
    const double d2 = (samples_.row(k).transpose() - p).squaredNorm();
    if (d2 < best || (!found && d2 == best)) {
      best = d2;
      found = true;
    }
  });
  return found ? std::sqrt(best) : std::numeric_limits<double>::infinity();
}

bool Tank::nearest_wet_point(const Eigen::Vector2d& p, double search, Eigen::Vector2d& out) const {
  DATADYN_CHECK_LE(search, sample_grid_.cell_size());
  double best = search * search;
  int found = -1;
  sample_grid_.for_each_candidate_slot(p, [&](int k) {
    const double d2 = (samples_.row(k).transpose() - p).squaredNorm();
    if (d2 < best) {
      best = d2;
      found = k;
    }
  });
  if (found < 0) return false;
  out = samples_.row(found).transpose();
  return true;
}

Points2 Tank::lattice_points(const std::function<bool(const Eigen::Vector2d&)>& region,
                             double max_y) const {
  const int i1 = static_cast<int>(std::ceil((max_.x() - min_.x()) / l0_));
  const int j1 = static_cast<int>(std::ceil((max_y - min_.y()) / l0_));
  std::vector<Eigen::Vector2d> pts;
  for (int j = 0; j <= j1; ++j) {
    for (int i = 0; i <= i1; ++i) {
      const Eigen::Vector2d p = min_ + l0_ * Eigen::Vector2d(i + 0.5, j + 0.5);
      if (p.y() > max_y) continue;
      if (region(p) && contains(p)) pts.push_back(p);
    }
  }
  Points2 out(static_cast<Eigen::Index>(pts.size()), 2);
  for (std::size_t k = 0; k < pts.size(); ++k)
    out.row(static_cast<Eigen::Index>(k)) = pts[k].transpose();
  return out;
}

Eigen::Vector2d Tank::lattice_point(const Eigen::Vector2d& p) const {
  const Eigen::Vector2d f = (p - min_) / l0_ - Eigen::Vector2d::Constant(0.5);
  return min_ + l0_ * (f.array().round() + 0.5).matrix();
}

}  // namespace datadyn::fluid
