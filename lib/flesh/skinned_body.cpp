#include "flesh/skinned_body.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include <Eigen/Geometry>

#include "core/check.hpp"

namespace datadyn::flesh {

CanonicalOrder canonical_order(const Points3& points, const Triangles& triangles) {
  const auto W = static_cast<std::size_t>(points.rows());
  std::vector<int> by_position(W);
  for (std::size_t w = 0; w < W; ++w) by_position[w] = static_cast<int>(w);
  std::sort(by_position.begin(), by_position.end(), [&](int a, int b) {
    return std::make_tuple(points(a, 0), points(a, 1), points(a, 2)) <
           std::make_tuple(points(b, 0), points(b, 1), points(b, 2));
  });
  CanonicalOrder order;
  order.vertex.resize(W);
  for (std::size_t k = 0; k < W; ++k)
    order.vertex[static_cast<std::size_t>(by_position[k])] = static_cast<int>(k);
  // Each triangle in new indices, turned to its least turn; then sorted (stable: equal
  // triangles keep the file's order).
  const auto T = static_cast<std::size_t>(triangles.rows());
  std::vector<std::array<int, 3>> turned(T);
  order.turn.resize(T);
  for (std::size_t t = 0; t < T; ++t) {
    std::array<int, 3> v{};
    for (int c = 0; c < 3; ++c)
      v[static_cast<std::size_t>(c)] =
          order.vertex[static_cast<std::size_t>(triangles(static_cast<Eigen::Index>(t), c))];
    // The least of the three turns: the one starting at the lowest vertex, and of a face with a
    // vertex twice (degenerate), the same whichever corner the file started it at.
    for (int r = 0; r < 3; ++r) {
      const std::array<int, 3> turn{v[static_cast<std::size_t>(r)],
                                    v[static_cast<std::size_t>((r + 1) % 3)],
                                    v[static_cast<std::size_t>((r + 2) % 3)]};
      if (r == 0 || turn < turned[t]) {
        turned[t] = turn;
        order.turn[t] = r;
      }
    }
  }
  order.triangle.resize(T);
  for (std::size_t t = 0; t < T; ++t) order.triangle[t] = static_cast<Eigen::Index>(t);
  std::stable_sort(
      order.triangle.begin(), order.triangle.end(), [&](Eigen::Index a, Eigen::Index b) {
        return turned[static_cast<std::size_t>(a)] < turned[static_cast<std::size_t>(b)];
      });
  std::vector<int> turn(T);
  for (std::size_t t = 0; t < T; ++t)
    turn[t] = order.turn[static_cast<std::size_t>(order.triangle[t])];
  order.turn = std::move(turn);
  return order;
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
