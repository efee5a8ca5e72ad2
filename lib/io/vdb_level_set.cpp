// The only translation unit of datadyn that includes OpenVDB.

#include "io/vdb_level_set.hpp"

#include <cstdio>
#include <sstream>

#include <openvdb/openvdb.h>
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/LevelSetFilter.h>
#include <openvdb/tools/MeshToVolume.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>
#include <openvdb/tools/VolumeToMesh.h>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"

namespace datadyn::io {

struct LevelSet::Impl {
  openvdb::FloatGrid::Ptr grid;
};

namespace {

void initialize_openvdb() {
  static std::once_flag once;
  std::call_once(once, [] { openvdb::initialize(); });
}

openvdb::FloatGrid::Ptr empty_level_set(const openvdb::math::Transform::Ptr& xform,
                                        double half_width) {
  const float background = static_cast<float>(xform->voxelSize()[0] * half_width);
  auto grid = openvdb::FloatGrid::create(background);
  grid->setTransform(xform);
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  return grid;
}

LevelSet wrap(openvdb::FloatGrid::Ptr grid) {
  auto impl = std::make_unique<LevelSet::Impl>();
  impl->grid = std::move(grid);
  return LevelSet(std::move(impl));
}

/// Particles as OpenVDB's ParticlesToLevelSet reads them: every particle with the same radius.
class ParticleList {
 public:
  using PosType = openvdb::Vec3R;
  ParticleList(const Eigen::Ref<const Points3>& p, double radius) : p_(p), radius_(radius) {}
  std::size_t size() const { return static_cast<std::size_t>(p_.rows()); }
  void getPos(std::size_t n, openvdb::Vec3R& pos) const {
    const auto i = static_cast<Eigen::Index>(n);
    pos = openvdb::Vec3R(p_(i, 0), p_(i, 1), p_(i, 2));
  }
  void getPosRad(std::size_t n, openvdb::Vec3R& pos, openvdb::Real& rad) const {
    getPos(n, pos);
    rad = radius_;
  }

 private:
  const Eigen::Ref<const Points3>& p_;
  double radius_;
};

using FloatLeaf = openvdb::FloatTree::LeafNodeType;
constexpr int kLeafDim = static_cast<int>(FloatLeaf::DIM);  // 8

/// Packs a leaf's coordinates (origin / 8) into one sortable key.
std::uint64_t leaf_key(const openvdb::Coord& c) {
  constexpr std::int64_t bias = 1 << 20;
  auto part = [](int v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + bias); };
  return (part(c.x()) << 42) | (part(c.y()) << 21) | part(c.z());
}
openvdb::Coord leaf_coord(std::uint64_t key) {
  constexpr std::int64_t bias = 1 << 20, mask = (1 << 21) - 1;
  auto part = [](std::uint64_t v) {
    return static_cast<int>(static_cast<std::int64_t>(v & mask) - bias);
  };
  return {part(key >> 42), part(key >> 21), part(key)};
}
double squared(double v) {
  return v * v;
}
int floor_div8(double x) {
  return static_cast<int>(std::floor(x / kLeafDim));
}

/// d2[x][y][z] = min(d2, squared distance to p) over the leaf's voxels x in [lo[0], hi[0]],
/// y in [lo[1], hi[1]] and all 8 z (voxels beyond `reach` in z get values > reach2, which the
/// min against the initial reach2 ignores): a fixed trip count the compiler vectorises. The sums
/// are OpenVDB's, (x2 + y2) + z2. Compiled for AVX2 as well, chosen at run time.
__attribute__((target_clones("avx2", "default"))) void accumulate_sphere(
    double* d2, const openvdb::Coord& origin, const std::array<double, 3>& p, const int* lo,
    const int* hi, double reach2) {
  double ex[kLeafDim], ey[kLeafDim], ez[kLeafDim];
  for (int i = 0; i < kLeafDim; ++i) {
    ex[i] = squared(origin[0] + i - p[0]);
    ey[i] = squared(origin[1] + i - p[1]);
    ez[i] = squared(origin[2] + i - p[2]);
  }
  for (int x = lo[0]; x <= hi[0]; ++x)
    for (int y = lo[1]; y <= hi[1]; ++y) {
      const double exy = ex[x] + ey[y];
      if (exy >= reach2) continue;
      double* row = d2 + (x << 6) + (y << 3);
      for (int z = 0; z < kLeafDim; ++z) row[z] = std::min(row[z], exy + ez[z]);
    }
}

/// The union-of-spheres level set, one 8^3 leaf at a time: particles are sorted into the leaf
/// that holds them; each leaf that any particle can reach gathers the particles of the leaves
/// around it and keeps the minimum squared distance per voxel; values are min |x - p| - r.
/// Every leaf is computed independently (deterministic for any thread count) and linked into the
/// tree at the end.
void rasterize_leaves(const Eigen::Ref<const Points3>& particles, double radius_voxels,
                      double half_width, openvdb::FloatGrid& grid) {
  const double dx = grid.voxelSize()[0];
  const double reach = radius_voxels + half_width;  // voxels: beyond it every value is >= band
  const int cells = static_cast<int>(std::ceil(reach / kLeafDim));
  const auto n = static_cast<std::size_t>(particles.rows());

  // Leaf keys hold 21 bits per axis: +-2^20 leaves of 8 voxels around the origin.
  const double limit = 8.0 * ((1 << 20) - cells - 2);
  if (n > 0 && particles.cwiseAbs().maxCoeff() / dx >= limit)
    throw IoError("particles: a position is more than " + std::to_string(limit) +
                  " voxels from the origin (" + std::to_string(limit * dx) +
                  " m at this voxel size): use a larger voxel size");
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw IoError("particles: more than 2^32 particles in one frame");

  // Index-space positions and their leaf keys, sorted by key (ties by particle index).
  std::vector<std::array<double, 3>> pos(n);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      const auto row = static_cast<Eigen::Index>(i);
      pos[i] = {particles(row, 0) / dx, particles(row, 1) / dx, particles(row, 2) / dx};
      const openvdb::Coord c(floor_div8(pos[i][0]), floor_div8(pos[i][1]), floor_div8(pos[i][2]));
      order[i] = {leaf_key(c), static_cast<std::uint32_t>(i)};
    }
  });
  tbb::parallel_sort(order.begin(), order.end());
  // Positions in sorted order (contiguous per cell) with the voxel box each one reaches.
  struct Particle {
    std::array<double, 3> p;
    std::array<int, 3> lo, hi;
  };
  std::vector<Particle> sorted(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      Particle& q = sorted[i];
      q.p = pos[order[i].second];
      for (int d = 0; d < 3; ++d) {
        q.lo[d] = static_cast<int>(std::floor(q.p[d] - reach));
        q.hi[d] = static_cast<int>(std::ceil(q.p[d] + reach));
      }
    }
  });
  // Occupied cells: key -> [begin, end) in `sorted`.
  std::vector<std::uint64_t> occupied;
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < n; ++i)
    if (i == 0 || order[i].first != order[i - 1].first) {
      occupied.push_back(order[i].first);
      starts.push_back(i);
    }
  starts.push_back(n);
  auto find_cell = [&](std::uint64_t key) -> std::ptrdiff_t {
    auto it = std::lower_bound(occupied.begin(), occupied.end(), key);
    return it != occupied.end() && *it == key ? it - occupied.begin() : -1;
  };

  // Candidate leaves: every occupied cell dilated by `cells`.
  std::vector<std::uint64_t> candidates;
  candidates.reserve(occupied.size() * 8);
  for (std::uint64_t key : occupied) {
    const openvdb::Coord c = leaf_coord(key);
    for (int a = -cells; a <= cells; ++a)
      for (int b = -cells; b <= cells; ++b)
        for (int k = -cells; k <= cells; ++k) candidates.push_back(leaf_key(c.offsetBy(a, b, k)));
  }
  tbb::parallel_sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  // The arithmetic of OpenVDB's ParticlesToLevelSet::makeSphere, in the same order and
  // precision, so both give the same values: squared distances in double (voxel units), value
  // dx (sqrt(d2) - r) where d2 < (r + w)^2, and "inside" (inactive -background) where
  // d2 <= max(0, r - w)^2.
  const double r = radius_voxels;
  const double reach2 = reach * reach;
  const double inside2 = std::pow(std::max(0.0, radius_voxels - half_width), 2);
  const float background = grid.background();
  std::vector<FloatLeaf*> leaves(candidates.size(), nullptr);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, candidates.size(), 16), [&](const auto& rg) {
    std::array<double, FloatLeaf::SIZE> d2;
    for (std::size_t li = rg.begin(); li < rg.end(); ++li) {
      const openvdb::Coord cell = leaf_coord(candidates[li]);
      const openvdb::Coord origin(cell.x() * kLeafDim, cell.y() * kLeafDim, cell.z() * kLeafDim);
      d2.fill(reach2);
      bool touched = false;
      for (int a = -cells; a <= cells; ++a)
        for (int b = -cells; b <= cells; ++b)
          for (int k = -cells; k <= cells; ++k) {
            const std::ptrdiff_t c = find_cell(leaf_key(cell.offsetBy(a, b, k)));
            if (c < 0) continue;
            for (std::size_t j = starts[static_cast<std::size_t>(c)];
                 j < starts[static_cast<std::size_t>(c) + 1]; ++j) {
              const Particle& q = sorted[j];
              // Voxels of this leaf within `reach` of the particle, per axis (local 0..7).
              int lo[3], hi[3];
              bool empty = false;
              for (int d = 0; d < 3; ++d) {
                lo[d] = std::max(0, q.lo[d] - origin[d]);
                hi[d] = std::min(kLeafDim - 1, q.hi[d] - origin[d]);
                empty = empty || lo[d] > hi[d];
              }
              if (empty) continue;
              touched = true;
              accumulate_sphere(d2.data(), origin, q.p, lo, hi, reach2);
            }
          }
      if (!touched) continue;
      auto leaf = std::make_unique<FloatLeaf>(origin, background, false);
      float* values = leaf->buffer().data();
      bool any = false;
      for (openvdb::Index o = 0; o < FloatLeaf::SIZE; ++o) {
        if (d2[o] >= reach2) continue;  // outside the band: inactive +background
        if (d2[o] <= inside2) {
          values[o] = -background;  // inside: inactive -background
          any = true;
          continue;
        }
        const float v = static_cast<float>(dx * (std::sqrt(d2[o]) - r));
        if (!(v < background)) continue;  // rounds to the band's edge: stays +background
        values[o] = v;
        leaf->setValueOn(o);
        any = true;
      }
      if (any) leaves[li] = leaf.release();
    }
  });
  auto& tree = grid.tree();
  for (FloatLeaf* leaf : leaves)
    if (leaf) tree.addLeaf(leaf);
  // Every voxel whose sign is known sits in a leaf (a point inside the union is within a radius
  // of a particle), so no flood fill is needed; leaves without active values become tiles.
  openvdb::tools::pruneLevelSet(tree);
}

}  // namespace

LevelSet::LevelSet() : impl_(std::make_unique<Impl>()) {
  initialize_openvdb();
  impl_->grid = empty_level_set(openvdb::math::Transform::createLinearTransform(1.0), 3.0);
}
LevelSet::LevelSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LevelSet::~LevelSet() = default;
LevelSet::LevelSet(LevelSet&&) noexcept = default;
LevelSet& LevelSet::operator=(LevelSet&&) noexcept = default;

double LevelSet::voxel_size() const {
  return impl_->grid->voxelSize()[0];
}

double LevelSet::half_width() const {
  return impl_->grid->background() / voxel_size();
}

std::size_t LevelSet::active_voxel_count() const {
  return static_cast<std::size_t>(impl_->grid->activeVoxelCount());
}

std::pair<Eigen::Vector3d, Eigen::Vector3d> LevelSet::active_bounds() const {
  const openvdb::CoordBBox box = impl_->grid->evalActiveVoxelBoundingBox();
  if (box.empty()) return {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
  const openvdb::Vec3d lo = impl_->grid->indexToWorld(box.min().asVec3d());
  const openvdb::Vec3d hi = impl_->grid->indexToWorld(box.max().asVec3d());
  return {Eigen::Vector3d(lo[0], lo[1], lo[2]), Eigen::Vector3d(hi[0], hi[1], hi[2])};
}

Eigen::VectorXd LevelSet::sample(const Eigen::Ref<const Points3>& points) const {
  openvdb::tools::GridSampler<openvdb::FloatGrid, openvdb::tools::BoxSampler> sampler(*impl_->grid);
  Eigen::VectorXd out(points.rows());
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    out[i] = sampler.wsSample(openvdb::Vec3R(points(i, 0), points(i, 1), points(i, 2)));
  return out;
}

std::vector<bool> LevelSet::active(const Eigen::Ref<const Points3>& points) const {
  const auto acc = impl_->grid->getConstAccessor();
  std::vector<bool> out(static_cast<std::size_t>(points.rows()));
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    const openvdb::Vec3d ijk =
        impl_->grid->worldToIndex(openvdb::Vec3d(points(i, 0), points(i, 1), points(i, 2)));
    out[static_cast<std::size_t>(i)] = acc.isValueOn(openvdb::Coord::round(ijk));
  }
  return out;
}

ParticleLevelSetResult level_set_from_particles(const Eigen::Ref<const Points3>& particles,
                                                const ParticleLevelSetParams& params) {
  initialize_openvdb();
  if (!particles.allFinite()) throw IoError("particles: a position is not finite (NaN or inf)");
  auto grid = empty_level_set(openvdb::math::Transform::createLinearTransform(params.voxel_size),
                              params.half_width);
  ParticleLevelSetResult result;
  if (params.rasterizer == ParticleRasterizer::Leaf) {
    rasterize_leaves(particles, params.radius / params.voxel_size, params.half_width, *grid);
  } else {
    openvdb::tools::ParticlesToLevelSet<openvdb::FloatGrid> raster(*grid);
    const ParticleList list(particles, params.radius);
    raster.rasterizeSpheres(list, params.radius);
    raster.finalize(true);
    result.skipped_small = raster.getMinCount();
    result.skipped_large = raster.getMaxCount();
  }
  result.level_set = wrap(grid);
  filter_level_set(result.level_set, params.dilate, params.smooth, params.erode);
  return result;
}

LevelSet level_set_from_mesh(const PolygonMesh& mesh, double voxel_size, double half_width) {
  initialize_openvdb();
  const auto xform = openvdb::math::Transform::createLinearTransform(voxel_size);
  std::vector<openvdb::Vec3s> points(static_cast<std::size_t>(mesh.points.rows()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    points[i] =
        openvdb::Vec3s(static_cast<float>(mesh.points(r, 0)), static_cast<float>(mesh.points(r, 1)),
                       static_cast<float>(mesh.points(r, 2)));
  }
  std::vector<openvdb::Vec3I> triangles(static_cast<std::size_t>(mesh.triangles.rows()));
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    triangles[i] = openvdb::Vec3I(static_cast<openvdb::Index32>(mesh.triangles(r, 0)),
                                  static_cast<openvdb::Index32>(mesh.triangles(r, 1)),
                                  static_cast<openvdb::Index32>(mesh.triangles(r, 2)));
  }
  // Larger polygons as fans from their first corner (meshToLevelSet takes triangles and quads).
  for_each_polygon(mesh.polygons, [&](std::span<const int> f, std::size_t) {
    for (std::size_t j = 1; j + 1 < f.size(); ++j)
      triangles.emplace_back(static_cast<openvdb::Index32>(f[0]),
                             static_cast<openvdb::Index32>(f[j]),
                             static_cast<openvdb::Index32>(f[j + 1]));
  });
  std::vector<openvdb::Vec4I> quads(static_cast<std::size_t>(mesh.quads.rows()));
  for (std::size_t i = 0; i < quads.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    quads[i] = openvdb::Vec4I(static_cast<openvdb::Index32>(mesh.quads(r, 0)),
                              static_cast<openvdb::Index32>(mesh.quads(r, 1)),
                              static_cast<openvdb::Index32>(mesh.quads(r, 2)),
                              static_cast<openvdb::Index32>(mesh.quads(r, 3)));
  }
  openvdb::FloatGrid::Ptr grid = openvdb::tools::meshToLevelSet<openvdb::FloatGrid>(
      *xform, points, triangles, quads, static_cast<float>(half_width));
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  return wrap(grid);
}

LevelSet level_set_from_dense(const float* values, const GridSpec& spec) {
  initialize_openvdb();
  auto xform = openvdb::math::Transform::createLinearTransform(spec.voxel_size);
  xform->postTranslate(openvdb::Vec3d(spec.origin.x(), spec.origin.y(), spec.origin.z()));
  auto grid = empty_level_set(xform, spec.background);
  const float bg = grid->background();
  auto acc = grid->getAccessor();
  std::size_t n = 0;
  for (std::size_t k = 0; k < spec.nz; ++k)
    for (std::size_t j = 0; j < spec.ny; ++j)
      for (std::size_t i = 0; i < spec.nx; ++i, ++n) {
        const float v = values[n];
        if (!std::isfinite(v))
          throw IoError("grid value at (i, j, k) = (" + std::to_string(i) + ", " +
                        std::to_string(j) + ", " + std::to_string(k) + ") is not finite");
        if (std::abs(v) < bg)
          acc.setValue(
              openvdb::Coord(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k)), v);
      }
  openvdb::tools::signedFloodFill(grid->tree());
  openvdb::tools::pruneLevelSet(grid->tree());
  return wrap(grid);
}

void filter_level_set(LevelSet& level_set, double dilate, int smooth, double erode) {
  if (dilate <= 0 && smooth <= 0 && erode <= 0) return;
  openvdb::FloatGrid& grid = *level_set.impl().grid;
  const double dx = grid.voxelSize()[0];
  openvdb::tools::LevelSetFilter<openvdb::FloatGrid> filter(grid);
  // LevelSetFilter::offset adds to the distance: a negative offset moves the surface outwards.
  if (dilate > 0) filter.offset(static_cast<float>(-dilate * dx));
  for (int i = 0; i < smooth; ++i) filter.gaussian(1);
  if (erode > 0) filter.offset(static_cast<float>(erode * dx));
  openvdb::tools::pruneLevelSet(grid.tree());
}

PolygonMesh mesh_from_level_set(const LevelSet& level_set, double iso_value, double adaptivity) {
  std::vector<openvdb::Vec3s> points;
  std::vector<openvdb::Vec3I> triangles;
  std::vector<openvdb::Vec4I> quads;
  openvdb::tools::volumeToMesh(*level_set.impl().grid, points, triangles, quads, iso_value,
                               adaptivity);
  PolygonMesh mesh;
  mesh.points.resize(static_cast<Eigen::Index>(points.size()), 3);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (int d = 0; d < 3; ++d) mesh.points(static_cast<Eigen::Index>(i), d) = points[i][d];
  // VolumeToMesh winds polygons clockwise seen from outside (its normals point into the level
  // set's negative side): reverse them to the counter-clockwise convention of the formats.
  mesh.triangles.resize(static_cast<Eigen::Index>(triangles.size()), 3);
  for (std::size_t i = 0; i < triangles.size(); ++i)
    for (int d = 0; d < 3; ++d)
      mesh.triangles(static_cast<Eigen::Index>(i), d) = static_cast<int>(triangles[i][2 - d]);
  mesh.quads.resize(static_cast<Eigen::Index>(quads.size()), 4);
  for (std::size_t i = 0; i < quads.size(); ++i)
    for (int d = 0; d < 4; ++d)
      mesh.quads(static_cast<Eigen::Index>(i), d) = static_cast<int>(quads[i][3 - d]);
  return mesh;
}

namespace {

/// OpenVDB writes a random UUID into every file header (bytes 21-56 of format 224: after the
/// magic number, file version, library version and the grid-offsets flag). Replace it with one
/// derived from the rest of the file (FNV-1a, 128 bits), so the same grid gives the same bytes.
void make_uuid_deterministic(std::string& bytes, const std::filesystem::path& path) {
  constexpr std::size_t kOffset = 21, kLength = 36;
  if (bytes.size() < kOffset + kLength || bytes[kOffset + 8] != '-' || bytes[kOffset + 13] != '-')
    throw IoError(path.string() + ": unexpected VDB header (no UUID at byte 21)");
  std::uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i >= kOffset && i < kOffset + kLength) continue;
    const auto c = static_cast<unsigned char>(bytes[i]);
    h[0] = (h[0] ^ c) * 0x100000001b3ull;
    h[1] = (h[1] ^ c) * 0x100000001b3ull + (h[0] >> 7);
  }
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h[0] >> 32),
                static_cast<unsigned>((h[0] >> 16) & 0xffff), static_cast<unsigned>(h[0] & 0xffff),
                static_cast<unsigned>(h[1] >> 48),
                static_cast<unsigned long long>(h[1] & 0xffffffffffffull));
  bytes.replace(kOffset, kLength, uuid, kLength);
}

/// The bytes openvdb::io::File::write puts in a file (a seekable archive), produced in memory:
/// File::write streams into an std::ofstream whose failures it never checks, so a full disk left a
/// truncated .vdb and exit 0. The bytes go to disk through AtomicFile, which checks every write.
class MemoryArchive : public openvdb::io::Archive {
 public:
  std::string bytes(const openvdb::GridCPtrVec& grids) const {
    std::ostringstream os(std::ios_base::out | std::ios_base::binary);
    Archive::write(os, grids, /*seekable=*/true);
    return std::move(os).str();
  }
};

}  // namespace

void write_vdb(const std::filesystem::path& path, const LevelSet& level_set,
               const Metadata& metadata, const std::string& grid_name) {
  initialize_openvdb();
  // A shallow copy: the tree is shared, name and metadata are the copy's own.
  openvdb::FloatGrid::Ptr grid = level_set.impl().grid->copy();
  grid->setName(grid_name);
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  grid->setSaveFloatAsHalf(false);
  for (const auto& [k, v] : metadata) grid->insertMeta(k, openvdb::StringMetadata(v));
  std::string bytes;
  try {
    bytes = MemoryArchive().bytes({grid});
  } catch (const openvdb::Exception& e) {
    throw IoError(path.string() + ": cannot write the VDB: " + e.what());
  }
  make_uuid_deterministic(bytes, path);
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

}  // namespace datadyn::io
