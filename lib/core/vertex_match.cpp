#include "core/vertex_match.hpp"

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

}  // namespace

VertexMatch match_vertices(const Eigen::Ref<const Points3>& points,
                           const Eigen::Ref<const Points3>& reference, double tolerance) {
  DATADYN_CHECK(tolerance > 0 && std::isfinite(tolerance));
  DATADYN_CHECK(points.allFinite() && reference.allFinite());
  // Cells at least the tolerance wide, and wide enough that a cell index fits 64 bits.
  const double largest = std::max(points.size() ? points.cwiseAbs().maxCoeff() : 0.0,
                                  reference.size() ? reference.cwiseAbs().maxCoeff() : 0.0);
  const double width = std::max(tolerance, largest * 1e-15);
  const auto cell_of = [&](const Eigen::Vector3d& x) {
    return Cell{static_cast<std::int64_t>(std::floor(x.x() / width)),
                static_cast<std::int64_t>(std::floor(x.y() / width)),
                static_cast<std::int64_t>(std::floor(x.z() / width))};
  };
  std::unordered_map<Cell, std::vector<int>, CellHash> cells;
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    cells[cell_of(points.row(i).transpose())].push_back(static_cast<int>(i));

  VertexMatch m;
  const auto count = static_cast<std::size_t>(reference.rows());
  m.point.assign(count, -1);
  std::vector<char> reached(static_cast<std::size_t>(points.rows()), 0);
  for (Eigen::Index j = 0; j < reference.rows(); ++j) {
    const Eigen::Vector3d x = reference.row(j).transpose();
    const Cell c = cell_of(x);
    int best = -1;
    double best_d2 = std::numeric_limits<double>::infinity();
    int within = 0;  // points within the tolerance
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int e = -1; e <= 1; ++e) {
          const auto it = cells.find({c[0] + a, c[1] + b, c[2] + e});
          if (it == cells.end()) continue;
          for (int i : it->second) {
            const double d2 = (points.row(i).transpose() - x).squaredNorm();
            if (std::sqrt(d2) <= tolerance) ++within;
            if (d2 < best_d2 || (d2 == best_d2 && i < best)) {
              best = i;
              best_d2 = d2;
            }
          }
        }
    if (within > 1 && m.ambiguous++ == 0) m.first_ambiguous = j;
    if (best >= 0 && std::sqrt(best_d2) <= tolerance) {
      m.point[static_cast<std::size_t>(j)] = best;
      reached[static_cast<std::size_t>(best)] = 1;
    } else if (m.unmatched++ == 0) {
      m.first_unmatched = j;
      for (Eigen::Index i = 0; i < points.rows(); ++i)
        best_d2 = std::min(best_d2, (points.row(i).transpose() - x).squaredNorm());
      m.first_unmatched_distance = std::sqrt(best_d2);
    }
  }
  for (char r : reached) m.unreached += r ? 0 : 1;
  return m;
}

}  // namespace datadyn
