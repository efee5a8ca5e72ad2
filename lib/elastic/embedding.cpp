#include "elastic/embedding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/LU>

#include "core/mesh_topology.hpp"
#include "core/parallel.hpp"

namespace datadyn::elastic {

namespace {

/// Barycentric coordinates of p in the tet (x0..x3).
Eigen::Vector4d barycentric(const Eigen::Vector3d& p, const Eigen::Vector3d& x0,
                            const Eigen::Vector3d& x1, const Eigen::Vector3d& x2,
                            const Eigen::Vector3d& x3) {
  Eigen::Matrix3d T;
  T << x1 - x0, x2 - x0, x3 - x0;
  const Eigen::Vector3d l = T.inverse() * (p - x0);
  return {1.0 - l.sum(), l(0), l(1), l(2)};
}

/// Puts the file's four-corner faces (surface.polygons, whose faces the loader cut into n - 2
/// triangles each, in order) back whole into e.quads, wound as their triangles are (the file's,
/// or turned outward with them); every other face keeps its triangles. A quad with a corner
/// twice stays two triangles.
void keep_quads(const SurfaceMesh& surface, Embedding& e) {
  const Triangles& tri = surface.triangles;
  Eigen::Index expected = 0;
  for (const int n : surface.polygons.sizes) expected += n - 2;
  if (surface.polygons.sizes.empty() || expected != tri.rows()) return;
  const bool textured = !surface.uv.empty();
  std::vector<int> tris, tri_uv, quads, quad_uv;
  Eigen::Index t = 0;
  const int* c = surface.polygons.corners.data();
  for (const int n : surface.polygons.sizes) {
    const bool quad = n == 4 && c[0] != c[1] && c[0] != c[2] && c[0] != c[3] && c[1] != c[2] &&
                      c[1] != c[3] && c[2] != c[3];
    if (quad) {
      // The first triangle's corners in the quad's cyclic order: ascending, the file's winding.
      const auto at = [&](int v) { return static_cast<int>(std::find(c, c + 4, v) - c); };
      const int a = at(tri(t, 0));
      const bool forward = (at(tri(t, 1)) - a + 4) % 4 < (at(tri(t, 2)) - a + 4) % 4;
      const int order[2][4] = {{0, 3, 2, 1}, {0, 1, 2, 3}};
      for (const int k : order[forward]) {
        quads.push_back(c[k]);
        if (!textured) continue;
        // The corner's coordinate: where either triangle has that vertex.
        const Eigen::Index u = tri.row(t).cwiseEqual(c[k]).any() ? t : t + 1;
        for (int j = 0; j < 3; ++j)
          if (tri(u, j) == c[k]) quad_uv.push_back(surface.uv.corners(u, j));
      }
    } else {
      for (Eigen::Index k = t; k < t + n - 2; ++k)
        for (int j = 0; j < 3; ++j) {
          tris.push_back(tri(k, j));
          if (textured) tri_uv.push_back(surface.uv.corners(k, j));
        }
    }
    t += n - 2;
    c += n;
  }
  const auto rows = [](const std::vector<int>& v, int w) {
    return static_cast<Eigen::Index>(v.size()) / w;
  };
  e.triangles = Eigen::Map<const Triangles>(tris.data(), rows(tris, 3), 3);
  e.quads = Eigen::Map<const Quads>(quads.data(), rows(quads, 4), 4);
  if (textured) {
    e.uv.corners = Eigen::Map<const Triangles>(tri_uv.data(), rows(tri_uv, 3), 3);
    e.uv_quads = Eigen::Map<const Quads>(quad_uv.data(), rows(quad_uv, 4), 4);
  }
}

}  // namespace

Embedding embed_surface(const TetMesh& mesh, const SurfaceMesh& surface) {
  const auto nv = static_cast<std::size_t>(surface.vertices.rows());
  const Eigen::Index nt = mesh.tets.rows();
  // Per tet: bounding box for a quick rejection.
  std::vector<Eigen::Vector3d> box_lo(static_cast<std::size_t>(nt)),
      box_hi(static_cast<std::size_t>(nt));
  for (Eigen::Index k = 0; k < nt; ++k) {
    Eigen::Vector3d lo = mesh.vertices.row(mesh.tets(k, 0)).transpose(), hi = lo;
    for (int a = 1; a < 4; ++a) {
      lo = lo.cwiseMin(mesh.vertices.row(mesh.tets(k, a)).transpose());
      hi = hi.cwiseMax(mesh.vertices.row(mesh.tets(k, a)).transpose());
    }
    box_lo[static_cast<std::size_t>(k)] = lo;
    box_hi[static_cast<std::size_t>(k)] = hi;
  }
  Embedding e;
  e.particles.resize(static_cast<Eigen::Index>(nv), 4);
  e.weights.resize(static_cast<Eigen::Index>(nv), 4);
  e.triangles = surface.triangles;
  e.uv = surface.uv;
  keep_quads(surface, e);
  std::vector<double> outside(nv, 0.0);
  parallel_for(nv, 64, [&](std::size_t begin, std::size_t end) {
    for (std::size_t v = begin; v < end; ++v) {
      const Eigen::Vector3d p = surface.vertices.row(static_cast<Eigen::Index>(v)).transpose();
      Eigen::Index best = -1;
      double best_min = -std::numeric_limits<double>::infinity();
      Eigen::Vector4d best_w = Eigen::Vector4d::Zero();
      // Inside test over the tets whose box (slightly grown) contains p; the first containing
      // tet wins. Otherwise the tet with the largest minimum barycentric coordinate.
      for (int pass = 0; pass < 2 && best_min < -1e-9; ++pass) {
        for (Eigen::Index k = 0; k < nt; ++k) {
          if (pass == 0) {
            const double pad =
                1e-9 *
                (box_hi[static_cast<std::size_t>(k)] - box_lo[static_cast<std::size_t>(k)]).norm();
            if ((p.array() < box_lo[static_cast<std::size_t>(k)].array() - pad).any() ||
                (p.array() > box_hi[static_cast<std::size_t>(k)].array() + pad).any())
              continue;
          }
          const Eigen::Vector4d w = barycentric(p, mesh.vertices.row(mesh.tets(k, 0)).transpose(),
                                                mesh.vertices.row(mesh.tets(k, 1)).transpose(),
                                                mesh.vertices.row(mesh.tets(k, 2)).transpose(),
                                                mesh.vertices.row(mesh.tets(k, 3)).transpose());
          const double mn = w.minCoeff();
          if (mn > best_min) {
            best_min = mn;
            best = k;
            best_w = w;
            if (mn >= -1e-9) break;
          }
        }
      }
      const auto row = static_cast<Eigen::Index>(v);
      for (int a = 0; a < 4; ++a) {
        e.particles(row, a) = mesh.tets(best, a);
        e.weights(row, a) = best_w(a);
      }
      if (best_min < 0.0) {
        Eigen::Vector3d q = Eigen::Vector3d::Zero();
        const Eigen::Vector4d clamped = best_w.cwiseMax(0.0) / best_w.cwiseMax(0.0).sum();
        for (int a = 0; a < 4; ++a)
          q += clamped(a) * mesh.vertices.row(mesh.tets(best, a)).transpose();
        outside[v] = (q - p).norm();
      }
    }
  });
  for (double d : outside) e.max_outside_distance = std::max(e.max_outside_distance, d);
  return e;
}

Embedding boundary_embedding(const TetMesh& mesh) {
  const Triangles faces = boundary_triangles(mesh.tets);
  std::vector<int> index(static_cast<std::size_t>(mesh.vertices.rows()), -1);
  for (Eigen::Index t = 0; t < faces.rows(); ++t)
    for (int a = 0; a < 3; ++a) index[static_cast<std::size_t>(faces(t, a))] = 0;
  int count = 0;
  for (int& i : index)
    if (i == 0) i = count++;
  Embedding e;
  e.particles.resize(count, 4);
  e.weights.setZero(count, 4);
  for (std::size_t p = 0; p < index.size(); ++p) {
    if (index[p] < 0) continue;
    e.particles.row(index[p]).setConstant(static_cast<int>(p));
    e.weights(index[p], 0) = 1.0;
  }
  e.triangles.resize(faces.rows(), 3);
  for (Eigen::Index t = 0; t < faces.rows(); ++t)
    for (int a = 0; a < 3; ++a) e.triangles(t, a) = index[static_cast<std::size_t>(faces(t, a))];
  return e;
}

void embedded_positions(const Embedding& e, const Eigen::Ref<const Points3>& x, Points3& out) {
  out.resize(e.particles.rows(), 3);
  for (Eigen::Index v = 0; v < e.particles.rows(); ++v) {
    Eigen::RowVector3d p = Eigen::RowVector3d::Zero();
    for (int a = 0; a < 4; ++a) p += e.weights(v, a) * x.row(e.particles(v, a));
    out.row(v) = p;
  }
}

}  // namespace datadyn::elastic
