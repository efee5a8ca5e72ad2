#include "flesh/skinned_body.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <Eigen/Geometry>

#include "core/check.hpp"

namespace datadyn::flesh {

WeldedVertices weld_vertices(const Points3& points, double tolerance) {
  DATADYN_CHECK(tolerance > 0);
  // Hash on a grid of cell `tolerance`; candidates in the 27 neighbouring cells.
  using Cell = std::tuple<long long, long long, long long>;
  std::map<Cell, std::vector<int>> grid;
  WeldedVertices out;
  out.index.resize(static_cast<std::size_t>(points.rows()));
  std::vector<Eigen::RowVector3d> kept;
  for (Eigen::Index v = 0; v < points.rows(); ++v) {
    const Eigen::RowVector3d p = points.row(v);
    const Cell c{std::llround(p.x() / tolerance), std::llround(p.y() / tolerance),
                 std::llround(p.z() / tolerance)};
    int found = -1;
    for (long long dx = -1; dx <= 1 && found < 0; ++dx)
      for (long long dy = -1; dy <= 1 && found < 0; ++dy)
        for (long long dz = -1; dz <= 1 && found < 0; ++dz) {
          const auto it =
              grid.find({std::get<0>(c) + dx, std::get<1>(c) + dy, std::get<2>(c) + dz});
          if (it == grid.end()) continue;
          for (const int k : it->second)
            if ((kept[static_cast<std::size_t>(k)] - p).norm() < tolerance) {
              found = k;
              break;
            }
        }
    if (found < 0) {
      found = static_cast<int>(kept.size());
      kept.push_back(p);
      grid[c].push_back(found);
    }
    out.index[static_cast<std::size_t>(v)] = found;
  }
  out.points.resize(static_cast<Eigen::Index>(kept.size()), 3);
  for (std::size_t k = 0; k < kept.size(); ++k)
    out.points.row(static_cast<Eigen::Index>(k)) = kept[k];
  return out;
}

Eigen::MatrixXd nearest_vertex_weights(const Points3& surface, const Eigen::MatrixXd& weights,
                                       const Points3& points) {
  DATADYN_CHECK_EQ(surface.rows(), weights.rows());
  DATADYN_CHECK_GT(surface.rows(), 0);
  Eigen::MatrixXd out(points.rows(), weights.cols());
  for (Eigen::Index p = 0; p < points.rows(); ++p) {
    Eigen::Index nearest = 0;
    (surface.rowwise() - points.row(p)).rowwise().squaredNorm().minCoeff(&nearest);
    const double sum = weights.row(nearest).sum();
    DATADYN_CHECK_GT(sum, 0.0);
    out.row(p) = weights.row(nearest) / sum;
  }
  return out;
}

std::vector<bool> near_bones(const Points3& points, const std::vector<Eigen::Vector3d>& joints,
                             const std::vector<int>& parents, double radius) {
  DATADYN_CHECK_EQ(joints.size(), parents.size());
  std::vector<bool> out(static_cast<std::size_t>(points.rows()), false);
  for (Eigen::Index p = 0; p < points.rows(); ++p) {
    const Eigen::Vector3d x = points.row(p).transpose();
    for (std::size_t b = 0; b < joints.size() && !out[static_cast<std::size_t>(p)]; ++b) {
      const Eigen::Vector3d a =
          parents[b] >= 0 ? joints[static_cast<std::size_t>(parents[b])] : joints[b];
      const Eigen::Vector3d d = joints[b] - a;
      const double len2 = d.squaredNorm();
      const double s = len2 > 0 ? std::clamp((x - a).dot(d) / len2, 0.0, 1.0) : 0.0;
      if ((a + s * d - x).norm() <= radius) out[static_cast<std::size_t>(p)] = true;
    }
  }
  return out;
}

}  // namespace datadyn::flesh
