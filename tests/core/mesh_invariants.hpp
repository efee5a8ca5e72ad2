#pragma once
/// @file
/// Test helpers: invariants of tet meshes and closed surfaces, computed independently of the
/// library's mesh_topology (sorted containers, no shared code), so the two can disagree.

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "core/types.hpp"

namespace datadyn::test {

/// Volume enclosed by a closed, outward-oriented surface by the divergence theorem:
/// V = (1/3) ∮ x·n dA = Σ_t (centroid_t · N_t) / 3 with N_t = (b - a) × (c - a) / 2 the area
/// vector (x·n is constant on a flat triangle, so the centroid stands for every point).
inline double divergence_volume(const Points3& x, const Triangles& tris) {
  double volume = 0.0;
  for (Eigen::Index t = 0; t < tris.rows(); ++t) {
    const Eigen::Vector3d a = x.row(tris(t, 0)), b = x.row(tris(t, 1)), c = x.row(tris(t, 2));
    const Eigen::Vector3d area = 0.5 * (b - a).cross(c - a);
    volume += ((a + b + c) / 3.0).dot(area) / 3.0;
  }
  return volume;
}

/// Closedness of a triangle surface.
struct SurfaceEdgeReport {
  int edges = 0;              ///< distinct undirected edges
  int non_two = 0;            ///< undirected edges not used by exactly 2 triangles
  int unpaired_directed = 0;  ///< directed edges whose reverse is not used exactly once
  int vertices = 0;           ///< distinct vertices referenced by triangles
};

inline SurfaceEdgeReport surface_edges(const Triangles& tris) {
  std::map<std::pair<int, int>, int> undirected, directed;
  std::set<int> vertices;
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      const int a = tris(t, c), b = tris(t, (c + 1) % 3);
      ++undirected[{std::min(a, b), std::max(a, b)}];
      ++directed[{a, b}];
      vertices.insert(a);
    }
  SurfaceEdgeReport r;
  r.edges = static_cast<int>(undirected.size());
  r.vertices = static_cast<int>(vertices.size());
  for (const auto& [e, n] : undirected) r.non_two += n != 2;
  for (const auto& [e, n] : directed) {
    const auto rev = directed.find({e.second, e.first});
    r.unpaired_directed += n != 1 || rev == directed.end() || rev->second != 1;
  }
  return r;
}

/// Counts of the simplicial complex of a tet mesh.
struct TetComplexCounts {
  int vertices = 0, edges = 0, faces = 0, tets = 0;
  int faces_used_more_than_twice = 0;
  /// Euler characteristic V - E + F - T; 1 for a mesh of a ball.
  int euler() const { return vertices - edges + faces - tets; }
};

inline TetComplexCounts tet_complex_counts(const Tets& tets) {
  std::set<int> v;
  std::set<std::pair<int, int>> e;
  std::map<std::array<int, 3>, int> f;
  for (Eigen::Index k = 0; k < tets.rows(); ++k) {
    for (int a = 0; a < 4; ++a) {
      v.insert(tets(k, a));
      for (int b = a + 1; b < 4; ++b)
        e.insert({std::min(tets(k, a), tets(k, b)), std::max(tets(k, a), tets(k, b))});
      std::array<int, 3> face;
      int n = 0;
      for (int b = 0; b < 4; ++b)
        if (b != a) face[n++] = tets(k, b);
      std::sort(face.begin(), face.end());
      ++f[face];
    }
  }
  TetComplexCounts c;
  c.vertices = static_cast<int>(v.size());
  c.edges = static_cast<int>(e.size());
  c.faces = static_cast<int>(f.size());
  c.tets = static_cast<int>(tets.rows());
  for (const auto& [face, n] : f) c.faces_used_more_than_twice += n > 2;
  return c;
}

/// For each boundary triangle, whether its right-hand normal points away from the fourth vertex
/// of the (unique) tet that has this face; returns the number of triangles for which it does not
/// or whose face is not found in exactly one tet.
inline int inward_or_orphan_boundary_triangles(const Points3& x, const Tets& tets,
                                               const Triangles& boundary) {
  std::map<std::array<int, 3>, std::vector<std::pair<int, int>>> owners;  // face -> (tet, apex)
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    for (int a = 0; a < 4; ++a) {
      std::array<int, 3> face;
      int n = 0;
      for (int b = 0; b < 4; ++b)
        if (b != a) face[n++] = tets(k, b);
      std::sort(face.begin(), face.end());
      owners[face].push_back({static_cast<int>(k), tets(k, a)});
    }
  int bad = 0;
  for (Eigen::Index t = 0; t < boundary.rows(); ++t) {
    std::array<int, 3> key = {boundary(t, 0), boundary(t, 1), boundary(t, 2)};
    std::sort(key.begin(), key.end());
    const auto it = owners.find(key);
    if (it == owners.end() || it->second.size() != 1) {
      ++bad;
      continue;
    }
    const Eigen::Vector3d a = x.row(boundary(t, 0)), b = x.row(boundary(t, 1)),
                          c = x.row(boundary(t, 2));
    const Eigen::Vector3d apex = x.row(it->second.front().second);
    if ((b - a).cross(c - a).dot(apex - a) >= 0.0) ++bad;
  }
  return bad;
}

}  // namespace datadyn::test
