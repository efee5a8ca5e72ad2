#include "core/voxel_lattice.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include <Eigen/Geometry>

#include "core/check.hpp"
#include "core/lattice.hpp"
#include "core/mesh_topology.hpp"
#include "core/parallel.hpp"

namespace datadyn {

double winding_number(const SurfaceMesh& surface, const Eigen::Vector3d& point) {
  double total = 0.0;
  for (Eigen::Index t = 0; t < surface.triangles.rows(); ++t) {
    const Eigen::Vector3d a = surface.vertices.row(surface.triangles(t, 0)).transpose() - point;
    const Eigen::Vector3d b = surface.vertices.row(surface.triangles(t, 1)).transpose() - point;
    const Eigen::Vector3d c = surface.vertices.row(surface.triangles(t, 2)).transpose() - point;
    const double la = a.norm(), lb = b.norm(), lc = c.norm();
    // tan(Ω / 2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (a·c)|b| + (b·c)|a|)
    const double numerator = a.dot(b.cross(c));
    const double denominator = la * lb * lc + a.dot(b) * lc + a.dot(c) * lb + b.dot(c) * la;
    if (numerator == 0.0 && denominator <= 0.0) continue;  // p on the triangle's plane, inside it
    total += 2.0 * std::atan2(numerator, denominator);
  }
  return total / (4.0 * std::numbers::pi);
}

namespace {

struct Grid {
  Eigen::Vector3d origin;
  Eigen::Vector3i cells;
  double h = 0.0;

  int index(int i, int j, int k) const { return i + cells.x() * (j + cells.y() * k); }
  int count() const { return cells.x() * cells.y() * cells.z(); }
  Eigen::Vector3d centre(int cell) const {
    const int i = cell % cells.x(), j = (cell / cells.x()) % cells.y(),
              k = cell / (cells.x() * cells.y());
    return origin + h * Eigen::Vector3d(i + 0.5, j + 0.5, k + 0.5);
  }
  /// The cell holding a point (clamped to the grid: the surface lies inside it by construction).
  int cell_of(const Eigen::Vector3d& p) const {
    Eigen::Vector3i c;
    for (int d = 0; d < 3; ++d)
      c(d) = std::clamp(static_cast<int>(std::floor((p(d) - origin(d)) / h)), 0, cells(d) - 1);
    return index(c.x(), c.y(), c.z());
  }
};

Grid grid_around(const SurfaceMesh& surface, double h) {
  const Eigen::Vector3d lo = surface.vertices.colwise().minCoeff().transpose();
  const Eigen::Vector3d hi = surface.vertices.colwise().maxCoeff().transpose();
  Grid g;
  g.h = h;
  for (int d = 0; d < 3; ++d)
    g.cells(d) = std::max(1, static_cast<int>(std::ceil((hi(d) - lo(d)) / h)));
  g.origin = 0.5 * (lo + hi) - 0.5 * h * g.cells.cast<double>();
  return g;
}

/// Marks the cells a triangle passes through by sampling it at a quarter of the cell size (a
/// triangle that only grazes a cell's corner by less than that may leave the cell unmarked; its
/// neighbours are marked, which is all an embedding needs).
void mark_surface_cells(const SurfaceMesh& surface, const Grid& g, std::vector<char>& marked) {
  const double spacing = 0.25 * g.h;
  for (Eigen::Index t = 0; t < surface.triangles.rows(); ++t) {
    const Eigen::Vector3d a = surface.vertices.row(surface.triangles(t, 0)).transpose();
    const Eigen::Vector3d b = surface.vertices.row(surface.triangles(t, 1)).transpose();
    const Eigen::Vector3d c = surface.vertices.row(surface.triangles(t, 2)).transpose();
    const double longest = std::max({(b - a).norm(), (c - a).norm(), (c - b).norm()});
    const int n = std::max(1, static_cast<int>(std::ceil(longest / spacing)));
    for (int i = 0; i <= n; ++i)
      for (int j = 0; i + j <= n; ++j) {
        const Eigen::Vector3d p = a + (b - a) * (double(i) / n) + (c - a) * (double(j) / n);
        marked[static_cast<std::size_t>(g.cell_of(p))] = 1;
      }
  }
}

int find_root(std::vector<int>& parent, int x) {
  while (parent[static_cast<std::size_t>(x)] != x) {
    parent[static_cast<std::size_t>(x)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    x = parent[static_cast<std::size_t>(x)];
  }
  return x;
}

}  // namespace

VoxelLattice voxel_lattice(const SurfaceMesh& surface, const VoxelLatticeSpec& spec) {
  DATADYN_CHECK_GT(spec.cell_size, 0.0);
  DATADYN_CHECK_GT(surface.triangles.rows(), 0);
  DATADYN_CHECK(spec.tets_per_cell == 5 || spec.tets_per_cell == 6);
  const Grid g = grid_around(surface, spec.cell_size);
  const auto cells = static_cast<std::size_t>(g.count());

  // 0 = out, 1 = inside, 2 = on the surface (Cover only).
  std::vector<char> state(cells, 0);
  std::vector<char> on_surface(cells, 0);
  if (spec.fill == VoxelFill::Cover) mark_surface_cells(surface, g, on_surface);
  parallel_for(cells, 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      if (on_surface[c]) {
        state[c] = 2;
      } else if (winding_number(surface, g.centre(static_cast<int>(c))) >= 0.5) {
        state[c] = 1;
      }
    }
  });

  // Face-connected components of the kept cells (union-find; roots are the smallest index).
  std::vector<int> parent(cells);
  std::iota(parent.begin(), parent.end(), 0);
  auto unite = [&](int a, int b) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  };
  for (int k = 0; k < g.cells.z(); ++k)
    for (int j = 0; j < g.cells.y(); ++j)
      for (int i = 0; i < g.cells.x(); ++i) {
        const int c = g.index(i, j, k);
        if (!state[static_cast<std::size_t>(c)]) continue;
        if (i + 1 < g.cells.x() && state[static_cast<std::size_t>(g.index(i + 1, j, k))])
          unite(c, g.index(i + 1, j, k));
        if (j + 1 < g.cells.y() && state[static_cast<std::size_t>(g.index(i, j + 1, k))])
          unite(c, g.index(i, j + 1, k));
        if (k + 1 < g.cells.z() && state[static_cast<std::size_t>(g.index(i, j, k + 1))])
          unite(c, g.index(i, j, k + 1));
      }
  std::vector<int> size(cells, 0);
  VoxelLattice out;
  for (std::size_t c = 0; c < cells; ++c)
    if (state[c]) {
      const int r = find_root(parent, static_cast<int>(c));
      if (size[static_cast<std::size_t>(r)]++ == 0) ++out.components;
    }
  // The largest component; on a tie the one whose first cell comes first.
  int keep_root = -1;
  for (std::size_t c = 0; c < cells; ++c)
    if (size[c] > 0 && (keep_root < 0 || size[c] > size[static_cast<std::size_t>(keep_root)]))
      keep_root = static_cast<int>(c);

  BoxLatticeSpec box;
  box.nx = g.cells.x() + 1;
  box.ny = g.cells.y() + 1;
  box.nz = g.cells.z() + 1;
  box.min_corner = g.origin;
  box.max_corner = g.origin + g.h * g.cells.cast<double>();
  box.tets_per_cell = spec.tets_per_cell;
  const TetMesh full = box_lattice(box);

  std::vector<Eigen::Index> rows;
  for (std::size_t c = 0; c < cells; ++c) {
    if (!state[c]) continue;
    if (spec.largest_component && find_root(parent, static_cast<int>(c)) != keep_root) {
      ++out.cells_dropped;
      continue;
    }
    (state[c] == 1 ? out.cells_inside : out.cells_surface) += 1;
    for (int t = 0; t < spec.tets_per_cell; ++t)
      rows.push_back(static_cast<Eigen::Index>(c) * spec.tets_per_cell + t);
  }
  TetMesh kept;
  kept.vertices = full.vertices;
  kept.tets.resize(static_cast<Eigen::Index>(rows.size()), 4);
  for (std::size_t r = 0; r < rows.size(); ++r)
    kept.tets.row(static_cast<Eigen::Index>(r)) = full.tets.row(rows[r]);
  out.mesh = kept.tets.rows() > 0 ? remove_unused_vertices(kept) : TetMesh{};
  return out;
}

}  // namespace datadyn
