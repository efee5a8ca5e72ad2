// The only translation unit of datadyn that includes OpenVDB.

#include "io/vdb_level_set.hpp"

#include <openvdb/openvdb.h>
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/LevelSetFilter.h>
#include <openvdb/tools/MeshToVolume.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>
#include <openvdb/tools/VolumeToMesh.h>

#include <cmath>
#include <mutex>

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

ParticleLevelSetResult level_set_from_particles(const Eigen::Ref<const Points3>& particles,
                                                const ParticleLevelSetParams& params) {
  initialize_openvdb();
  if (!particles.allFinite()) throw IoError("particles: a position is not finite (NaN or inf)");
  auto grid = empty_level_set(openvdb::math::Transform::createLinearTransform(params.voxel_size),
                              params.half_width);
  ParticleLevelSetResult result;
  {
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

void write_vdb(const std::filesystem::path& path, const LevelSet& level_set,
               const Metadata& metadata, const std::string& grid_name) {
  initialize_openvdb();
  // A shallow copy: the tree is shared, name and metadata are the copy's own.
  openvdb::FloatGrid::Ptr grid = level_set.impl().grid->copy();
  grid->setName(grid_name);
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  grid->setSaveFloatAsHalf(false);
  for (const auto& [k, v] : metadata) grid->insertMeta(k, openvdb::StringMetadata(v));
  AtomicFile file(path, AtomicFile::ByName{});
  try {
    openvdb::io::File out(file.temporary_path().string());
    out.write({grid});
    out.close();
  } catch (const openvdb::Exception& e) {
    throw IoError(path.string() + ": cannot write the VDB: " + e.what());
  }
  file.commit();
}

}  // namespace datadyn::io
