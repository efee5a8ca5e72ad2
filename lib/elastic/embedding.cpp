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
