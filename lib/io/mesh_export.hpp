#pragma once
/// @file
/// mesh-export: any datadyn cache to the files DCC tools and renderers open (docs/tools/
/// mesh-export.md). Reads one frame at a time (memory is bounded by one frame, not by the
/// sequence length), writes every file atomically, and validates everything (sequences, frames,
/// topology, attributes, the output directory) before the first file is written, so bad input
/// leaves no file at all.
///
/// | format | files                         | source                                      |
/// |--------|-------------------------------|---------------------------------------------|
/// | obj    | name.####.obj                 | mesh, or a level-set mesh (grid, particles) |
/// | ply    | name.####.ply (binary)        | mesh, point cloud, or a level-set mesh      |
/// | pc2    | name.pc2 + name.obj (frame 1) | mesh (fixed topology)                       |
/// | mdd    | name.mdd + name.obj (frame 1) | mesh (fixed topology)                       |
/// | usda   | name.usda                     | mesh (fixed), or a level-set mesh (varying) |
/// | vdb    | name.####.vdb, grid `surface` | level-set grid, mesh, or particles          |
/// | xdmf   | name.xmf beside the cache     | the cache itself (points, topology, grids)  |

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "core/shard.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "io/vdb_level_set.hpp"

namespace datadyn::io {

enum class ExportFormat { Obj, Ply, Pc2, Mdd, Usda, Vdb, Xdmf };

/// "obj", "ply", "pc2", "mdd", "usda", "vdb", "xdmf".
const char* format_name(ExportFormat format);
/// The format of a name as format_name spells it.
std::optional<ExportFormat> format_from_name(const std::string& name);
/// The format a file extension implies (".obj", ..., ".usda", ".vdb", ".xmf" or ".xdmf").
std::optional<ExportFormat> format_from_extension(const std::filesystem::path& path);

/// Texture coordinates made for a mesh that has none.
enum class UvProjection {
  None,  ///< none: the mesh is written without
  Box,   ///< box projection of the rest pose (box_projection_uv), face-varying
};

/// Where the exported surface comes from.
enum class ExportSource {
  Auto,       ///< by format: see MeshExportParams::source
  Mesh,       ///< points/position with topology/triangles, quads, or tetrahedra (boundary)
  Points,     ///< points/position alone: a point cloud (PLY)
  Particles,  ///< points/position as spheres: a level set (VDB), meshed for OBJ/PLY/USDA
  Grid,       ///< a level-set grid of the cache (grids/<name>), meshed for OBJ/PLY/USDA
};

/// Level sets from particles and meshes; see ParticleLevelSetParams.
struct ExportLevelSetParams {
  double voxel_size = 0.0;  ///< metres; 0: half the sequence's `particle_spacing` attribute, else
                            ///< half the mean nearest-neighbour distance (particles) or half the
                            ///< mean edge length (meshes) on the first exported frame
  double radius = 0.0;      ///< particle radius in metres; 0: 2 voxels; >= 1.5 voxels
  double half_width = 3.0;  ///< narrow band, voxels
  /// Meshes: refuse a frame whose narrow band would hold more voxels than this (surface area /
  /// voxel_size^2 x 2 half_width). OpenVDB's mesh conversion takes about 30 bytes for each
  /// (1.87 GB peak for 6.6e7 measured) and aborts the process when memory runs out.
  double max_voxels = 2e8;
  double dilate = 0.0;  ///< voxels
  int smooth = 0;       ///< Gaussian passes
  double erode = 0.0;   ///< voxels
  /// Leaf (ours, default) or OpenVdb (ParticlesToLevelSet); both give the same values.
  ParticleRasterizer rasterizer = ParticleRasterizer::Leaf;
};

/// Meshing of level sets (OpenVDB's VolumeToMesh).
struct ExportMeshingParams {
  double iso_value = 0.0;   ///< metres
  double adaptivity = 0.0;  ///< 0 (uniform quads) to 1 (fewest polygons)
};

/// A scalar point array shown as vertex colours (PLY red/green/blue, USDA displayColor).
struct ExportColorParams {
  std::string attribute;  ///< "" for none; a point array with one value per vertex
  double min = 0.0;       ///< value mapped to the ramp's start; min == max: the range of the
  double max = 0.0;       ///< first exported frame, kept for the whole sequence
};

/// Files in the vertex order of another mesh, the artist's own exported from the DCC tool
/// (docs/tools/mesh-export.md, "On the artist's mesh"): its vertices, faces and texture
/// coordinates, each vertex moved as the cache's vertex it lies on, so that a point cache
/// applies to that mesh.
struct ExportMatchParams {
  std::filesystem::path file;  ///< an OBJ of the mesh; empty: the cache's own vertices
  double scale = 1.0;          ///< the file's units per metre (100: centimetres)
  /// The file's up axis: "Y" (the cache's), or "Z": file (x, y, z) is the cache's (x, z, -y),
  /// Blender's own frame (an OBJ exported with forward Y, up Z).
  std::string up_axis = "Y";
  std::int64_t frame = 0;   ///< the cache frame the file shows; 0: the rest pose (rest/position)
  double tolerance = 1e-4;  ///< how near a vertex must lie, a fraction of the mesh's size
};

struct MeshExportParams {
  std::filesystem::path input;         ///< the cache
  std::filesystem::path output;        ///< path template: `####`/`%04d` frame, `{sequence}`
  std::optional<ExportFormat> format;  ///< nullopt: from the output's extension
  std::vector<std::string> sequences;  ///< empty: every sequence of the cache
  std::vector<std::int64_t> frames;    ///< frame numbers; empty: every frame of each sequence
  Shard shard;                         ///< --shard K/N: the frames split into N parts
  /// Auto: obj/usda: mesh, else grid; ply: mesh, else grid, else points; pc2/mdd: mesh;
  /// vdb: grid, else mesh, else particles. A `grid` named in the config means grid.
  ExportSource source = ExportSource::Auto;
  std::string grid;                     ///< level-set grid; "": "surface", else the only one
  std::vector<std::string> attributes;  ///< point arrays written per vertex (ply, usda, xdmf)
  /// Write a mesh sequence's texture coordinates, static points/uv or face-varying uv/ (obj, ply,
  /// usda, and the OBJ beside a pc2 or mdd).
  bool uv = true;
  /// For a mesh sequence without texture coordinates: make them by box projection of its rest
  /// pose (rest/position, else its first frame), the same on every frame and every shard (obj,
  /// ply, usda and the OBJ beside a pc2 or mdd; PLY copies the vertices on the seams).
  UvProjection uv_projection = UvProjection::None;
  /// Smooth shading instead of facets: OBJ marks its faces smooth-shaded (`s 1`; Blender imports
  /// an OBJ without it flat), PLY and USDA carry vertex normals (renderers shade a non-subdivided
  /// mesh without normals flat).
  bool smooth_shading = true;
  ExportColorParams color;
  ExportLevelSetParams level_set;
  ExportMeshingParams meshing;
  std::string up_axis = "Y";  ///< written to USDA; the cache's coordinates are not changed
  /// match.file: the files take that mesh's vertices and faces, in its units and frame.
  ExportMatchParams match;
  bool dry_run = false;  ///< validate and plan, write nothing
  /// Where a config key's value came from, for errors found against the cache ("--set
  /// meshing.iso_value", the config file, "<defaults>") for the dotted keys a check reads.
  std::function<std::string(const std::vector<std::string>&)> config_origin =
      [](const std::vector<std::string>&) { return std::string("config"); };
};

struct MeshExportResult {
  std::vector<std::filesystem::path> files;  ///< written (or, for a dry run, to be written)
  std::size_t frames = 0;                    ///< frames exported, over all sequences
};

/// Called with notes worth a log line: information (an automatic voxel size, a frame token
/// added), or a warning where requested data is left out (a `points/uv` of another shape,
/// attributes a format has no room for).
enum class NoteLevel { Info, Warning };
using NoteCallback = std::function<void(NoteLevel, const std::string&)>;

/// Exports `params.input` as described above. `provenance` (generator, config) goes into every
/// file that has room for it. `progress` is called once per exported frame.
/// Throws IoError (bad or missing data: unknown sequence, frame outside the cache, a mesh format
/// without topology; unwritable output), UsageError (a format that cannot take the request, e.g.
/// pc2 with --shard or uneven frames) or ConfigError (level_set.radius below 1.5 voxels).
MeshExportResult export_cache(const MeshExportParams& params, const Provenance& provenance,
                              const ProgressCallback& progress = {}, const NoteCallback& note = {});

}  // namespace datadyn::io
