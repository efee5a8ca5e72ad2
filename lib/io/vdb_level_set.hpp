#pragma once
/// @file
/// OpenVDB narrow-band level sets for DCC tools and renderers, behind plain Eigen/STL types (the
/// OpenVDB headers stay in vdb_level_set.cpp: they cost ~20 s per translation unit).
///
/// Conventions (OpenVDB's): a float grid of signed distances in metres, negative inside, with
/// active voxels in a band of `half_width` voxels on either side of the surface and inactive
/// values +-background (background = half_width * voxel_size). Voxel (i, j, k) sits at
/// origin + voxel_size * (i, j, k) (cell-centred samples, as in the cache's grids).

#include <cstddef>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"
#include "io/cache.hpp"
#include "io/mesh_formats.hpp"

namespace datadyn::io {

/// OpenVDB refuses a transform whose determinant (voxel_size^3) is near zero: 1.2e-5 m failed
/// with "ArithmeticError: Non-zero scale values required", 1.5e-5 m worked.
inline constexpr double kMinVoxelSize = 2e-5;

/// A sparse level set (an openvdb::FloatGrid of class GRID_LEVEL_SET).
class LevelSet {
 public:
  LevelSet();
  ~LevelSet();
  LevelSet(LevelSet&&) noexcept;
  LevelSet& operator=(LevelSet&&) noexcept;

  double voxel_size() const;  ///< metres
  double half_width() const;  ///< background / voxel size, in voxels
  std::size_t active_voxel_count() const;
  /// World bounding box (metres) of the active voxels; both Zero when empty.
  std::pair<Eigen::Vector3d, Eigen::Vector3d> active_bounds() const;
  /// Trilinear samples at world points (#P by 3, metres) -> #P signed distances (metres).
  Eigen::VectorXd sample(const Eigen::Ref<const Points3>& points) const;
  /// Whether the voxel nearest each world point (#P by 3, metres) is active (in the band).
  std::vector<bool> active(const Eigen::Ref<const Points3>& points) const;

  struct Impl;
  explicit LevelSet(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Which rasterizer turns particles into the union-of-spheres level set. Both give the same
/// values (tests/io/vdb_level_set_test.cpp compares them voxel by voxel).
enum class ParticleRasterizer {
  /// Leaf-parallel: particles are bucketed by 8^3 leaf, each leaf gathers the particles within
  /// reach and takes the minimum squared distance, then the leaves are linked into the tree.
  /// No per-thread grids to merge and no random tree access (bench/points_to_level_set.cpp).
  Leaf,
  /// OpenVDB's ParticlesToLevelSet (per-thread grids united by CSG), the reference.
  OpenVdb,
};

/// How particles become a surface: the union of spheres (Zhu and Bridson 2005; OpenVDB's
/// ParticlesToLevelSet), value min_p |x - p| - radius in the band, then morphology as in
/// OpenVDB's tools: dilate, smooth, erode.
struct ParticleLevelSetParams {
  double voxel_size = 0.01;  ///< metres, > 0
  double radius = 0.02;      ///< sphere radius of every particle, metres, >= 1.5 voxels
  double half_width = 3.0;   ///< narrow band on each side, voxels, >= 1
  double dilate = 0.0;       ///< voxels to grow the surface by before smoothing, >= 0
  int smooth = 0;            ///< Gaussian (width 1) smoothing passes, >= 0
  double erode = 0.0;        ///< voxels to shrink the surface by after smoothing, >= 0
  ParticleRasterizer rasterizer = ParticleRasterizer::Leaf;
};

struct ParticleLevelSetResult {
  LevelSet level_set;
  std::size_t skipped_small = 0;  ///< OpenVdb rasterizer: particles ignored, radius < 1.5 voxels
  std::size_t skipped_large = 0;  ///< OpenVdb rasterizer: particles ignored, radius > 100 voxels
};

/// Level set of the union of spheres of `params.radius` around each particle, filtered by
/// dilate/smooth/erode. 2D particles are given with z = 0. Runs in parallel (TBB); the result
/// does not depend on the thread count.
/// @param particles  #P by 3, metres
/// @pre params checked by the caller (ranges above). Throws IoError for non-finite positions.
ParticleLevelSetResult level_set_from_particles(const Eigen::Ref<const Points3>& particles,
                                                const ParticleLevelSetParams& params);

/// Signed-distance level set of a closed, consistently oriented surface mesh (OpenVDB's
/// meshToLevelSet; a polygon of five or more corners as the fan from its first corner).
/// `half_width` in voxels, `voxel_size` in metres.
LevelSet level_set_from_mesh(const PolygonMesh& mesh, double voxel_size, double half_width = 3.0);

/// Sparse level set from a dense cache grid of class "level_set": `values` is [nz, ny, nx]
/// (x fastest) signed distances in metres, clamped to +-spec.background voxels outside the band.
/// Voxels with |value| < background become active; the rest are flood-filled by sign.
LevelSet level_set_from_dense(const float* values, const GridSpec& spec);

/// Morphology on a level set: grow by `dilate` voxels, `smooth` Gaussian passes, shrink by
/// `erode` voxels (OpenVDB's LevelSetFilter; the band is rebuilt after each step).
void filter_level_set(LevelSet& level_set, double dilate, int smooth, double erode);

/// Polygonal surface of a level set at `iso_value` metres (OpenVDB's VolumeToMesh): shared
/// vertices, quads and (with adaptivity > 0) triangles, counter-clockwise seen from outside.
/// @param adaptivity  0 (uniform quads) to 1 (fewest polygons)
PolygonMesh mesh_from_level_set(const LevelSet& level_set, double iso_value = 0.0,
                                double adaptivity = 0.0);

/// Writes the level set as a `.vdb` with one float32 grid named `grid_name` (class level set)
/// carrying `metadata` as string grid metadata; atomic (io/atomic_file.hpp). Throws IoError.
void write_vdb(const std::filesystem::path& path, const LevelSet& level_set,
               const Metadata& metadata = {}, const std::string& grid_name = "surface");

}  // namespace datadyn::io
