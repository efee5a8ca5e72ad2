#include "cloth/self_collision.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include <Eigen/Geometry>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::cloth {

double self_thickness(const ClothParams& params) {
  return params.self_collision.thickness > 0.0 ? params.self_collision.thickness : params.spacing;
}

/// Particles bucketed by the cell of side `size` they lie in; a bucket may hold several cells
/// (hash collisions), so a query compares cells, not buckets. Particles sit in a bucket in
/// increasing index order.
struct SelfCollision::Grid {
  using Cell = std::array<std::int64_t, 3>;
  std::vector<Cell> cell;
  std::vector<int> start, order;
  std::uint64_t mask = 0;

  static std::uint64_t hash(const Cell& c) {
    return static_cast<std::uint64_t>(c[0]) * 73856093u ^
           static_cast<std::uint64_t>(c[1]) * 19349663u ^
           static_cast<std::uint64_t>(c[2]) * 83492791u;
  }

  Grid(const Points3& x, double size) {
    const auto n = static_cast<std::size_t>(x.rows());
    std::uint64_t buckets = 1;
    while (buckets < 2 * n) buckets <<= 1;
    mask = buckets - 1;
    cell.resize(n);
    start.assign(buckets + 1, 0);
    const double inv = 1.0 / size;
    for (std::size_t i = 0; i < n; ++i) {
      const auto row = static_cast<Eigen::Index>(i);
      for (int a = 0; a < 3; ++a) {
        // A step that diverges may bring NaN or huge coordinates here before the solver's check.
        const double c = std::floor(x(row, a) * inv);
        cell[i][static_cast<std::size_t>(a)] =
            std::isfinite(c) ? static_cast<std::int64_t>(std::clamp(c, -1e15, 1e15)) : 0;
      }
      ++start[(hash(cell[i]) & mask) + 1];
    }
    for (std::uint64_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    std::vector<int> fill(start.begin(), start.end() - 1);
    order.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      order[static_cast<std::size_t>(fill[hash(cell[i]) & mask]++)] = static_cast<int>(i);
  }

  /// Calls f(j) for every particle j in the 27 cells around particle i's (i itself included).
  template <class F>
  void for_each_near(int i, F&& f) const {
    const Cell& c = cell[static_cast<std::size_t>(i)];
    for (std::int64_t dx = -1; dx <= 1; ++dx)
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          const Cell q{c[0] + dx, c[1] + dy, c[2] + dz};
          const std::uint64_t b = hash(q) & mask;
          for (int k = start[b]; k < start[b + 1]; ++k) {
            const int j = order[static_cast<std::size_t>(k)];
            const Cell& cj = cell[static_cast<std::size_t>(j)];
            if (cj[0] == q[0] && cj[1] == q[1] && cj[2] == q[2]) f(j);
          }
        }
  }
};

SelfCollision::SelfCollision(const ClothParams& params, const std::vector<int>& pinned)
    : thickness_(self_thickness(params)), rest_(rest_positions(params)) {
  DATADYN_CHECK_GT(thickness_, 0.0);
  // In grid units, rounded up: 2 rows apart is tested when t <= spacing. Leaving such pairs out
  // let creases fold through themselves (collision scene 33 x 33: 18,608 crossings, not 198).
  const double reach = 1.5 * std::max(thickness_, params.spacing) / params.spacing;
  excluded_cells2_ = static_cast<int>(std::ceil(reach * reach * (1.0 - 1e-9)));
  const auto n = static_cast<std::size_t>(rest_.rows());
  row_.resize(n);
  column_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    row_[i] = static_cast<int>(i) / params.nx;
    column_[i] = static_cast<int>(i) % params.nx;
  }
  pinned_.assign(n, 0);
  for (int p : pinned) pinned_[static_cast<std::size_t>(p)] = 1;
}

bool SelfCollision::tested(int i, int j) const {
  const auto a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
  const int dr = row_[a] - row_[b], dc = column_[a] - column_[b];
  return dr * dr + dc * dc >= excluded_cells2_;
}

SelfCollision::Partners SelfCollision::partners(const Points3& x, double reach) const {
  const std::size_t n = static_cast<std::size_t>(x.rows());
  const Grid grid(x, reach);
  const double reach2 = reach * reach;
  // Each chunk of particles lists its partners on its own; the lists are joined in chunk order.
  constexpr std::size_t kChunk = 256;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<int>> found(chunks);
  Partners result;
  result.start.assign(n + 1, 0);
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
      for (std::size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        const int a = static_cast<int>(i);
        const std::size_t before = found[c].size();
        grid.for_each_near(a, [&](int b) {
          if (b != a && (x.row(a) - x.row(b)).squaredNorm() < reach2 && tested(a, b))
            found[c].push_back(b);
        });
        result.start[i + 1] = static_cast<int>(found[c].size() - before);
      }
  });
  for (std::size_t i = 0; i < n; ++i) result.start[i + 1] += result.start[i];
  result.partner.reserve(static_cast<std::size_t>(result.start[n]));
  for (const auto& f : found) result.partner.insert(result.partner.end(), f.begin(), f.end());
  return result;
}

SelfCollision::Separation SelfCollision::separate(Points3& x, const std::vector<char>& fixed,
                                                  int passes) const {
  return separate(x, fixed, partners(x, kReach * thickness_), passes);
}

SelfCollision::Separation SelfCollision::separate(Points3& x, const std::vector<char>& fixed,
                                                  const Partners& near, int passes) const {
  const std::size_t n = static_cast<std::size_t>(x.rows());
  DATADYN_CHECK_EQ(fixed.size(), n);
  DATADYN_CHECK_EQ(near.start.size(), n + 1);
  if (near.partner.empty()) return {};
  const double t = thickness_, t2 = t * t;
  const std::vector<int>& start = near.start;
  const std::vector<int>& partner = near.partner;
  Points3 push(x.rows(), 3);
  for (int pass = 0;; ++pass) {
    const double worst = parallel_reduce(
        n, 256, 0.0,
        [&](std::size_t i0, std::size_t i1) {
          double w = 0.0;
          for (std::size_t i = i0; i < i1; ++i) {
            const int a = static_cast<int>(i);
            const bool pinned = pinned_[i], held = fixed[i] != 0;
            Eigen::RowVector3d sum = Eigen::RowVector3d::Zero();
            int count = 0;
            for (int k = start[i]; k < start[i + 1]; ++k) {
              const int b = partner[static_cast<std::size_t>(k)];
              const Eigen::RowVector3d d = x.row(a) - x.row(b);
              const double d2 = d.squaredNorm();
              if (!(d2 < t2)) continue;  // NaN too: a diverged particle pushes nobody
              const double len = std::sqrt(d2);
              w = std::max(w, t - len);
              const auto jb = static_cast<std::size_t>(b);
              // A pinned particle never moves; one on a collider moves only for a pinned one or
              // another on a collider (the projection that follows puts it back on the surface).
              double share = 0.5;
              if (pinned_[jb])
                share = 1.0;
              else if (held != (fixed[jb] != 0))
                share = held ? 0.0 : 1.0;
              if (pinned || share == 0.0) continue;
              // Coincident particles part along their rest offset.
              const Eigen::RowVector3d dir =
                  len > 1e-12 * t ? Eigen::RowVector3d(d / len)
                                  : Eigen::RowVector3d((rest_.row(a) - rest_.row(b)).normalized());
              sum += (share * (t - len)) * dir;
              ++count;
            }
            push.row(static_cast<Eigen::Index>(i)) =
                count == 0 ? Eigen::RowVector3d::Zero() : Eigen::RowVector3d(sum / count);
          }
          return w;
        },
        [](double a, double b) { return std::max(a, b); });
    if (worst == 0.0 || pass == passes) return {worst, pass};
    x += push;
  }
}

int SelfCollision::move(Points3& x, const Points3& to, double step, int passes) const {
  DATADYN_CHECK_EQ(to.rows(), x.rows());
  DATADYN_CHECK_GT(step, 0.0);
  const Points3 motion = to - x;
  const double longest = std::sqrt(motion.rowwise().squaredNorm().maxCoeff());
  if (!(longest > 0.0)) {  // NaN too: nothing to step through
    x = to;
    return 0;
  }
  // Capped, so that a wild target (a diverged or badly trained predictor) costs bounded time.
  const int steps =
      static_cast<int>(std::min(std::ceil(longest / (step * thickness_)), double{kMaxSteps}));
  const std::vector<char> none(static_cast<std::size_t>(x.rows()), 0);
  for (int k = 0; k < steps; ++k) {
    x += motion / steps;
    separate(x, none, passes);
  }
  return steps;
}

double SelfCollision::closest_pair(const Points3& x) const {
  const Partners near = partners(x, kReach * thickness_);
  double m = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i + 1 < near.start.size(); ++i)
    for (int k = near.start[i]; k < near.start[i + 1]; ++k)
      m = std::min(m, (x.row(static_cast<Eigen::Index>(i)) -
                       x.row(near.partner[static_cast<std::size_t>(k)]))
                          .norm());
  return m;
}

namespace {

/// Segment pq passes through triangle abc: its ends on opposite sides of the plane and the point
/// where it meets the plane inside the triangle or on its border.
bool crosses(const Eigen::Vector3d& p, const Eigen::Vector3d& q, const Eigen::Vector3d& a,
             const Eigen::Vector3d& b, const Eigen::Vector3d& c) {
  const Eigen::Vector3d n = (b - a).cross(c - a);
  const double dp = n.dot(p - a), dq = n.dot(q - a);
  if ((dp > 0.0) == (dq > 0.0) || dp == dq) return false;
  const Eigen::Vector3d m = p + dp / (dp - dq) * (q - p);
  return n.dot((b - a).cross(m - a)) >= 0.0 && n.dot((c - b).cross(m - b)) >= 0.0 &&
         n.dot((a - c).cross(m - c)) >= 0.0;
}

}  // namespace

SheetCrossings count_crossings(const ClothParams& params, const Points3& x) {
  const int nx = params.nx;
  DATADYN_CHECK_EQ(x.rows(), static_cast<Eigen::Index>(nx) * params.ny);
  DATADYN_CHECK(x.allFinite());
  const Triangles tris = grid_triangles(params);
  const auto nt = static_cast<std::size_t>(tris.rows());
  // The mesh's edges, each once, and cells twice their mean length (a stretched edge or triangle
  // spans more of them).
  std::vector<std::pair<int, int>> edges;
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int k = 0; k < 3; ++k) edges.emplace_back(std::minmax(tris(t, k), tris(t, (k + 1) % 3)));
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  double size = 0.0;
  for (const auto& [i, j] : edges) size += (x.row(i) - x.row(j)).norm();
  size *= 2.0 / static_cast<double>(edges.size());
  if (size == 0.0) return {};
  const double inv = 1.0 / size;
  using Cell = std::array<std::int64_t, 3>;
  const auto cell_of = [&](const Eigen::Vector3d& p) {
    return Cell{static_cast<std::int64_t>(std::floor(p.x() * inv)),
                static_cast<std::int64_t>(std::floor(p.y() * inv)),
                static_cast<std::int64_t>(std::floor(p.z() * inv))};
  };
  // Every triangle in each cell its bounding box touches (at most 2 per axis), sorted by cell.
  std::vector<Eigen::Vector3d> lo(nt), hi(nt);
  std::vector<std::pair<Cell, int>> in_cell;
  for (std::size_t t = 0; t < nt; ++t) {
    const auto row = static_cast<Eigen::Index>(t);
    lo[t] = hi[t] = x.row(tris(row, 0)).transpose();
    for (int v = 1; v < 3; ++v) {
      lo[t] = lo[t].cwiseMin(x.row(tris(row, v)).transpose());
      hi[t] = hi[t].cwiseMax(x.row(tris(row, v)).transpose());
    }
    const Cell a = cell_of(lo[t]), b = cell_of(hi[t]);
    for (std::int64_t i = a[0]; i <= b[0]; ++i)
      for (std::int64_t j = a[1]; j <= b[1]; ++j)
        for (std::int64_t k = a[2]; k <= b[2]; ++k)
          in_cell.emplace_back(Cell{i, j, k}, static_cast<int>(t));
  }
  std::sort(in_cell.begin(), in_cell.end());

  SheetCrossings result;
  std::vector<int> candidates;
  for (const auto& [i, j] : edges) {
    const Eigen::Vector3d p = x.row(i).transpose(), q = x.row(j).transpose();
    const Eigen::Vector3d elo = p.cwiseMin(q), ehi = p.cwiseMax(q);
    const Cell a = cell_of(elo), b = cell_of(ehi);
    candidates.clear();
    for (std::int64_t ci = a[0]; ci <= b[0]; ++ci)
      for (std::int64_t cj = a[1]; cj <= b[1]; ++cj)
        for (std::int64_t ck = a[2]; ck <= b[2]; ++ck) {
          const Cell c{ci, cj, ck};
          auto it = std::lower_bound(in_cell.begin(), in_cell.end(), std::pair{c, -1});
          for (; it != in_cell.end() && it->first == c; ++it) candidates.push_back(it->second);
        }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (const int t : candidates) {
      const auto k = static_cast<std::size_t>(t);
      if ((lo[k].array() > ehi.array()).any() || (hi[k].array() < elo.array()).any()) continue;
      int apart = std::numeric_limits<int>::max();
      bool shared = false;
      for (int v = 0; v < 3; ++v) {
        const int w = tris(t, v);
        shared = shared || w == i || w == j;
        for (const int e : {i, j})
          apart = std::min(apart, std::max(std::abs(e / nx - w / nx), std::abs(e % nx - w % nx)));
      }
      if (shared || !crosses(p, q, x.row(tris(t, 0)).transpose(), x.row(tris(t, 1)).transpose(),
                             x.row(tris(t, 2)).transpose()))
        continue;
      (apart <= 2 ? result.crease : result.layers) += 1;
    }
  }
  return result;
}

}  // namespace datadyn::cloth
