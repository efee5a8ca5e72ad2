#include "core/vertex_match.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "core/check.hpp"

namespace datadyn {

namespace {

using Cell = std::array<std::int64_t, 3>;

struct CellHash {
  std::size_t operator()(const Cell& c) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t v : c) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

/// Point indices hashed into cubic cells at least `tolerance` wide: every point within the
/// tolerance of a position is in the 27 cells around it.
class CellGrid {
 public:
  /// `largest`: the largest coordinate magnitude to be hashed or looked up, which widens the
  /// cells if need be so that a cell index fits 64 bits.
  CellGrid(double tolerance, double largest) : width_(std::max(tolerance, largest * 1e-15)) {}

  void add(const Eigen::Vector3d& x, int index) { cells_[cell_of(x)].push_back(index); }

  /// Calls visit(i) for each point in the cells around x, in a fixed order.
  template <class Visit>
  void near(const Eigen::Vector3d& x, Visit&& visit) const {
    const Cell c = cell_of(x);
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int e = -1; e <= 1; ++e) {
          const auto it = cells_.find({c[0] + a, c[1] + b, c[2] + e});
          if (it == cells_.end()) continue;
          for (int i : it->second) visit(i);
        }
  }

 private:
  Cell cell_of(const Eigen::Vector3d& x) const {
    return Cell{static_cast<std::int64_t>(std::floor(x.x() / width_)),
                static_cast<std::int64_t>(std::floor(x.y() / width_)),
                static_cast<std::int64_t>(std::floor(x.z() / width_))};
  }

  double width_;
  std::unordered_map<Cell, std::vector<int>, CellHash> cells_;
};

double largest_coefficient(const Eigen::Ref<const Points3>& points) {
  return points.size() ? points.cwiseAbs().maxCoeff() : 0.0;
}

/// The nearest point to x that the grid holds (of those equally near, the lowest index; -1 for
/// none near), its squared distance, and how many are within the tolerance.
struct Nearest {
  int index = -1;
  double d2 = std::numeric_limits<double>::infinity();
  int within = 0;
};

template <class PointAt>
Nearest nearest(const CellGrid& grid, const Eigen::Vector3d& x, double tolerance,
                PointAt&& point_at) {
  Nearest n;
  grid.near(x, [&](int i) {
    const double d2 = (point_at(i) - x).squaredNorm();
    if (std::sqrt(d2) <= tolerance) ++n.within;
    if (d2 < n.d2 || (d2 == n.d2 && i < n.index)) {
      n.index = i;
      n.d2 = d2;
    }
  });
  return n;
}

}  // namespace

VertexMatch match_vertices(const Eigen::Ref<const Points3>& points,
                           const Eigen::Ref<const Points3>& reference, double tolerance) {
  DATADYN_CHECK(tolerance > 0 && std::isfinite(tolerance));
  DATADYN_CHECK(points.allFinite() && reference.allFinite());
  CellGrid grid(tolerance, std::max(largest_coefficient(points), largest_coefficient(reference)));
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    grid.add(points.row(i).transpose(), static_cast<int>(i));
  const auto point_at = [&](int i) -> Eigen::Vector3d { return points.row(i).transpose(); };

  VertexMatch m;
  const auto count = static_cast<std::size_t>(reference.rows());
  m.point.assign(count, -1);
  std::vector<char> reached(static_cast<std::size_t>(points.rows()), 0);
  for (Eigen::Index j = 0; j < reference.rows(); ++j) {
    const Eigen::Vector3d x = reference.row(j).transpose();
    const Nearest n = nearest(grid, x, tolerance, point_at);
    if (n.within > 1 && m.ambiguous++ == 0) m.first_ambiguous = j;
    if (n.index >= 0 && std::sqrt(n.d2) <= tolerance) {
      m.point[static_cast<std::size_t>(j)] = n.index;
      reached[static_cast<std::size_t>(n.index)] = 1;
    } else if (m.unmatched++ == 0) {
      m.first_unmatched = j;
      double d2 = n.d2;
      for (Eigen::Index i = 0; i < points.rows(); ++i)
        d2 = std::min(d2, (points.row(i).transpose() - x).squaredNorm());
      m.first_unmatched_distance = std::sqrt(d2);
    }
  }
  for (char r : reached) m.unreached += r ? 0 : 1;
  return m;
}

WeldedVertices weld_vertices(const Eigen::Ref<const Points3>& points, double tolerance) {
  DATADYN_CHECK(tolerance > 0 && std::isfinite(tolerance));
  DATADYN_CHECK(points.allFinite());
  CellGrid grid(tolerance, largest_coefficient(points));
  WeldedVertices out;
  out.index.resize(static_cast<std::size_t>(points.rows()));
  std::vector<Eigen::Vector3d> kept;
  const auto point_at = [&](int k) -> const Eigen::Vector3d& {
    return kept[static_cast<std::size_t>(k)];
  };
  for (Eigen::Index v = 0; v < points.rows(); ++v) {
    const Eigen::Vector3d x = points.row(v).transpose();
    const Nearest n = nearest(grid, x, tolerance, point_at);
    int merged = n.index;
    if (merged < 0 || !(std::sqrt(n.d2) < tolerance)) {
      merged = static_cast<int>(kept.size());
      kept.push_back(x);
      grid.add(x, merged);
    }
    out.index[static_cast<std::size_t>(v)] = merged;
  }
  out.points.resize(static_cast<Eigen::Index>(kept.size()), 3);
  for (std::size_t k = 0; k < kept.size(); ++k)
    out.points.row(static_cast<Eigen::Index>(k)) = kept[k].transpose();
  return out;
}

}  // namespace datadyn
