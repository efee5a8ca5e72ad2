#include "core/mesh_topology.hpp"

#include <algorithm>
#include <array>
#include <map>

#include <Eigen/Geometry>

#include "core/check.hpp"

namespace datadyn {

namespace {

// Local faces of a positively oriented tet, outward: the face opposite vertex f is kFaces[f].
constexpr std::array<std::array<int, 3>, 4> kFaces = {{{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}};

void check_indices(const Tets& tets, Eigen::Index vertex_count) {
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    for (int c = 0; c < 4; ++c) {
      DATADYN_CHECK_GE(tets(k, c), 0);
      DATADYN_CHECK_LT(tets(k, c), vertex_count);
    }
}

}  // namespace

Eigen::VectorXd tet_volumes(const Points3& vertices, const Tets& tets) {
  check_indices(tets, vertices.rows());
  Eigen::VectorXd volumes(tets.rows());
  for (Eigen::Index k = 0; k < tets.rows(); ++k) {
    const Eigen::Vector3d x0 = vertices.row(tets(k, 0)).transpose();
    const Eigen::Vector3d e1 = vertices.row(tets(k, 1)).transpose() - x0;
    const Eigen::Vector3d e2 = vertices.row(tets(k, 2)).transpose() - x0;
    const Eigen::Vector3d e3 = vertices.row(tets(k, 3)).transpose() - x0;
    volumes(k) = e1.dot(e2.cross(e3)) / 6.0;
  }
  return volumes;
}

Tets orient_tets_positive(const Points3& vertices, const Tets& tets) {
  const Eigen::VectorXd volumes = tet_volumes(vertices, tets);
  Tets oriented = tets;
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    if (volumes(k) < 0.0) std::swap(oriented(k, 2), oriented(k, 3));
  return oriented;
}

Triangles boundary_triangles(const Tets& tets) {
  struct Face {
    std::array<int, 3> key;  // sorted vertex indices
    int tet;
    int local;
  };
  std::vector<Face> faces;
  faces.reserve(static_cast<std::size_t>(tets.rows()) * 4);
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    for (int f = 0; f < 4; ++f) {
      std::array<int, 3> key;
      for (int c = 0; c < 3; ++c) key[c] = tets(k, kFaces[f][c]);
      std::sort(key.begin(), key.end());
      faces.push_back({key, static_cast<int>(k), f});
    }
  // Group equal faces; the (tet, local) tie-break makes the order total and deterministic.
  std::sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.tet != b.tet ? a.tet < b.tet : a.local < b.local;
  });
  std::vector<std::pair<int, int>> single;  // (tet, local face) used once
  for (std::size_t i = 0; i < faces.size();) {
    std::size_t j = i + 1;
    while (j < faces.size() && faces[j].key == faces[i].key) ++j;
    if (j - i == 1) single.emplace_back(faces[i].tet, faces[i].local);
    i = j;
  }
  std::sort(single.begin(), single.end());
  Triangles result(static_cast<Eigen::Index>(single.size()), 3);
  for (std::size_t b = 0; b < single.size(); ++b)
    for (int c = 0; c < 3; ++c)
      result(static_cast<Eigen::Index>(b), c) = tets(single[b].first, kFaces[single[b].second][c]);
  return result;
}

std::vector<std::vector<int>> vertex_one_ring(const Tets& tets, int vertex_count) {
  DATADYN_CHECK_GE(vertex_count, 0);
  check_indices(tets, vertex_count);
  std::vector<std::vector<int>> ring(static_cast<std::size_t>(vertex_count));
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        if (tets(k, a) != tets(k, b))
          ring[static_cast<std::size_t>(tets(k, a))].push_back(tets(k, b));
  for (auto& r : ring) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  return ring;
}

TetMesh remove_unused_vertices(const TetMesh& mesh) {
  std::vector<int> index(static_cast<std::size_t>(mesh.vertices.rows()), -1);
  for (Eigen::Index k = 0; k < mesh.tets.rows(); ++k)
    for (int a = 0; a < 4; ++a) index[static_cast<std::size_t>(mesh.tets(k, a))] = 0;
  int n = 0;
  for (int& i : index)
    if (i == 0) i = n++;
  if (n == mesh.vertices.rows()) return mesh;
  TetMesh out;
  out.vertices.resize(n, 3);
  for (std::size_t v = 0; v < index.size(); ++v)
    if (index[v] >= 0) out.vertices.row(index[v]) = mesh.vertices.row(static_cast<Eigen::Index>(v));
  out.tets = mesh.tets;
  for (Eigen::Index k = 0; k < out.tets.rows(); ++k)
    for (int a = 0; a < 4; ++a) out.tets(k, a) = index[static_cast<std::size_t>(out.tets(k, a))];
  return out;
}

bool orient_outward(const Points3& points, Triangles& triangles, Triangles& corners) {
  // Only a closed surface has an inside: an open one's signed volume depends on the origin.
  std::map<std::pair<int, int>, int> edges;
  for (Eigen::Index t = 0; t < triangles.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      const int a = triangles(t, c), b = triangles(t, (c + 1) % 3);
      ++edges[{std::min(a, b), std::max(a, b)}];
    }
  for (const auto& [edge, count] : edges)
    if (count != 2) return false;
  double volume = 0.0;
  for (Eigen::Index t = 0; t < triangles.rows(); ++t) {
    const Eigen::Vector3d a = points.row(triangles(t, 0)), b = points.row(triangles(t, 1)),
                          c = points.row(triangles(t, 2));
    volume += a.dot(b.cross(c));
  }
  if (!(volume < 0)) return false;
  triangles.col(1).swap(triangles.col(2));
  if (corners.rows() > 0) corners.col(1).swap(corners.col(2));
  return true;
}

}  // namespace datadyn
