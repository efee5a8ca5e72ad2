#pragma once
/// @file
/// The config of mesh-export (docs/tools/mesh-export.md): the keys of io::MeshExportParams with
/// their defaults, and the command line (-i, -o, --frames, --shard, --dry-run, --format,
/// --sequence) applied on top.

#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/tool.hpp"
#include "io/mesh_export.hpp"

namespace datadyn::app {

/// Reads the config keys of mesh-export:
///   format ("auto"), sequences ([]), source ("auto"), grid (""), attributes ([]), uv (true),
///   color.attribute (""), color.min / color.max (0, 0: the first frame's range),
///   level_set.voxel_size (0: auto, m), level_set.radius (0: 2 voxels, m),
///   level_set.half_width (3 voxels), level_set.dilate (0 voxels), level_set.smooth (0 passes),
///   level_set.erode (0 voxels), level_set.rasterizer ("leaf" or "openvdb"), meshing.iso_value (0
///   m), meshing.adaptivity (0, in [0, 1]), up_axis ("Y"), match.file (""), match.scale (1),
///   match.up_axis ("Y"), match.frame (0: the rest pose), match.tolerance (1e-4).
void read_mesh_export_params(ConfigReader& reader, io::MeshExportParams& params);

/// The tool flags of mesh-export, added to its CLI11 app.
struct MeshExportFlags {
  std::string format;                  ///< --format (overrides the config's format)
  std::vector<std::string> sequences;  ///< --sequence NAME, repeatable (overrides sequences)
};
void add_mesh_export_flags(CLI::App& app, MeshExportFlags& flags);

/// The full parameters of a run: the config (read through ctx, so --print-config and --set
/// work), then the flags and the common options. Also returns the provenance for the outputs,
/// whose config records the values the flags set. Throws UsageError for a bad --format.
io::MeshExportParams mesh_export_params(Context& ctx, const MeshExportFlags& flags,
                                        io::Provenance& provenance);

}  // namespace datadyn::app
