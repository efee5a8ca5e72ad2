#include "core/lattice.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/check.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {

namespace {

using Corner = std::array<int, 3>;  // local cell corner (a, b, c) in {0, 1}^3

// Sign of the volume of a tet on unit-cube corners (exact integer arithmetic).
int orientation(const std::array<Corner, 4>& t) {
  int e[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) e[r][c] = t[r + 1][c] - t[0][c];
  const int det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                  e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                  e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
  return (det > 0) - (det < 0);
}

// The tets of one cell as local corners, positively oriented (the box axes have positive
// extents, so the sign on the unit cube is the sign in the box).
std::vector<std::array<Corner, 4>> cell_tets(int tets_per_cell, int parity) {
  std::vector<std::array<Corner, 4>> tets;
  if (tets_per_cell == 6) {
    std::array<int, 3> perm = {0, 1, 2};
    do {
      std::array<Corner, 4> t;
      Corner c = {0, 0, 0};
      t[0] = c;
      for (int s = 0; s < 3; ++s) {
        c[perm[s]] = 1;
        t[s + 1] = c;
      }
      tets.push_back(t);
    } while (std::next_permutation(perm.begin(), perm.end()));
  } else {
    // Central tet on the corners with (a + b + c) % 2 == parity; the corner tets sit at the
    // other four corners, each with its three axis neighbours.
    std::array<Corner, 4> centre;
    int n = 0;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          if ((a + b + c) % 2 == parity) {
            centre[n++] = {a, b, c};
          } else {
            std::array<Corner, 4> t;
            t[0] = {a, b, c};
            for (int axis = 0; axis < 3; ++axis) {
              t[axis + 1] = t[0];
              t[axis + 1][axis] = 1 - t[axis + 1][axis];
            }
            tets.push_back(t);
          }
        }
    tets.push_back(centre);
  }
  for (auto& t : tets) {
    const int o = orientation(t);
    DATADYN_CHECK_NE(o, 0);
    if (o < 0) std::swap(t[2], t[3]);
  }
  return tets;
}

}  // namespace

TetMesh box_lattice(const BoxLatticeSpec& spec) {
  DATADYN_CHECK_GE(spec.nx, 2);
  DATADYN_CHECK_GE(spec.ny, 2);
  DATADYN_CHECK_GE(spec.nz, 2);
  DATADYN_CHECK((spec.max_corner.array() > spec.min_corner.array()).all());
  DATADYN_CHECK(spec.tets_per_cell == 5 || spec.tets_per_cell == 6);
  const int nx = spec.nx, ny = spec.ny, nz = spec.nz;
  const Eigen::Vector3d step =
      (spec.max_corner - spec.min_corner).cwiseQuotient(Eigen::Vector3d(nx - 1, ny - 1, nz - 1));
  auto index = [&](int i, int j, int k) { return i + nx * (j + ny * k); };

  TetMesh mesh;
  mesh.vertices.resize(static_cast<Eigen::Index>(nx) * ny * nz, 3);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        // The last point is set to max_corner exactly (no accumulated rounding at the far side).
        const Eigen::Vector3i ijk(i, j, k), n(nx, ny, nz);
        for (int d = 0; d < 3; ++d)
          mesh.vertices(index(i, j, k), d) =
              ijk(d) == n(d) - 1 ? spec.max_corner(d) : spec.min_corner(d) + ijk(d) * step(d);
      }

  const std::array<std::vector<std::array<Corner, 4>>, 2> split = {
      cell_tets(spec.tets_per_cell, 0), cell_tets(spec.tets_per_cell, 1)};
  const Eigen::Index cells = static_cast<Eigen::Index>(nx - 1) * (ny - 1) * (nz - 1);
  mesh.tets.resize(cells * spec.tets_per_cell, 4);
  Eigen::Index row = 0;
  for (int k = 0; k + 1 < nz; ++k)
    for (int j = 0; j + 1 < ny; ++j)
      for (int i = 0; i + 1 < nx; ++i)
        for (const auto& t : split[static_cast<std::size_t>((i + j + k) % 2)]) {
          for (int c = 0; c < 4; ++c)
            mesh.tets(row, c) = index(i + t[c][0], j + t[c][1], k + t[c][2]);
          ++row;
        }
  return mesh;
}

TetMesh cylinder_lattice(const CylinderLatticeSpec& spec) {
  DATADYN_CHECK_GT(spec.radius, 0.0);
  DATADYN_CHECK_GT(spec.height, 0.0);
  DATADYN_CHECK_GE(spec.rings, 1);
  DATADYN_CHECK_GE(spec.segments, 3);
  DATADYN_CHECK_GE(spec.layers, 1);
  const int rings = spec.rings, segments = spec.segments, layers = spec.layers;
  const int per_section = 1 + rings * segments;
  auto ring_point = [&](int r, int s) {
    return r == 0 ? 0 : 1 + (r - 1) * segments + s % segments;
  };

  TetMesh mesh;
  mesh.vertices.resize(static_cast<Eigen::Index>(layers + 1) * per_section, 3);
  for (int l = 0; l <= layers; ++l) {
    const double y = spec.base.y() + (l == layers ? spec.height : spec.height * l / layers);
    const Eigen::Index offset = static_cast<Eigen::Index>(l) * per_section;
    mesh.vertices.row(offset) = Eigen::RowVector3d(spec.base.x(), y, spec.base.z());
    for (int r = 1; r <= rings; ++r)
      for (int s = 0; s < segments; ++s) {
        const double rho = spec.radius * r / rings;
        const double phi = 2.0 * std::numbers::pi * s / segments;
        // Counter-clockwise seen from +y: (x, z) = rho (cos phi, -sin phi).
        mesh.vertices.row(offset + ring_point(r, s)) = Eigen::RowVector3d(
            spec.base.x() + rho * std::cos(phi), y, spec.base.z() - rho * std::sin(phi));
      }
  }

  // Disk triangulation (indices within a section).
  std::vector<std::array<int, 3>> disk;
  for (int s = 0; s < segments; ++s) disk.push_back({0, ring_point(1, s), ring_point(1, s + 1)});
  for (int r = 2; r <= rings; ++r)
    for (int s = 0; s < segments; ++s) {
      const int a = ring_point(r - 1, s), b = ring_point(r - 1, s + 1);
      const int c = ring_point(r, s + 1), d = ring_point(r, s);
      disk.push_back({a, d, c});
      disk.push_back({a, c, b});
    }

  mesh.tets.resize(static_cast<Eigen::Index>(disk.size()) * 3 * layers, 4);
  Eigen::Index row = 0;
  for (int l = 0; l < layers; ++l) {
    const int lo = l * per_section, hi = (l + 1) * per_section;
    for (auto tri : disk) {
      std::sort(tri.begin(), tri.end());
      const int a = tri[0], b = tri[1], c = tri[2];
      // Quad side (p, q) with p < q is cut along bottom p - top q; the three tets below realise
      // that for all three sides: (a,b): a-b', (b,c): b-c', (a,c): a-c'.
      const std::array<std::array<int, 4>, 3> prism = {{{lo + a, lo + b, lo + c, hi + c},
                                                        {lo + a, lo + b, hi + b, hi + c},
                                                        {lo + a, hi + a, hi + b, hi + c}}};
      for (const auto& t : prism) {
        for (int v = 0; v < 4; ++v) mesh.tets(row, v) = t[static_cast<std::size_t>(v)];
        ++row;
      }
    }
  }
  mesh.tets = orient_tets_positive(mesh.vertices, mesh.tets);
  return mesh;
}

}  // namespace datadyn
