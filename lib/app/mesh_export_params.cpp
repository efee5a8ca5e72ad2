#include "app/mesh_export_params.hpp"

#include <set>
#include <sstream>

#include "core/errors.hpp"

namespace datadyn::app {

namespace {

const std::vector<std::pair<std::string, std::optional<io::ExportFormat>>>& format_names() {
  static const std::vector<std::pair<std::string, std::optional<io::ExportFormat>>> names{
      {"auto", std::nullopt},         {"obj", io::ExportFormat::Obj},
      {"ply", io::ExportFormat::Ply}, {"pc2", io::ExportFormat::Pc2},
      {"mdd", io::ExportFormat::Mdd}, {"usda", io::ExportFormat::Usda},
      {"vdb", io::ExportFormat::Vdb}, {"xdmf", io::ExportFormat::Xdmf}};
  return names;
}

/// The first name in `names` that an earlier one repeats, "" for none.
std::string first_repeated(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const std::string& n : names)
    if (!seen.insert(n).second) return n;
  return "";
}

/// A list of names: a JSON list of strings, or "a,b" from --set. (ConfigReader::get does not
/// compile for std::vector<std::string> yet: its range check casts every element to double.)
void get_names(ConfigReader& r, const std::string& key, std::vector<std::string>& names) {
  json j = names;
  r.get_json(key, j);
  std::vector<std::string> out;
  if (j.is_string()) {
    std::stringstream ss(j.get<std::string>());
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) out.push_back(item);
  } else if (j.is_array()) {
    for (const auto& e : j) {
      if (!e.is_string() || e.get<std::string>().empty()) r.fail(key, "a list of names (strings)");
      out.push_back(e.get<std::string>());
    }
  } else {
    r.fail(key, "a list of names (strings)");
  }
  // A name twice was blamed on -o ("two outputs would be ...") after a check of every pair.
  if (const std::string twice = first_repeated(out); !twice.empty())
    r.fail(key, "each name once (\"" + twice + "\" is listed twice)");
  names = std::move(out);
}

}  // namespace

void read_mesh_export_params(ConfigReader& r, io::MeshExportParams& p) {
  r.get_enum("format", p.format, format_names());
  get_names(r, "sequences", p.sequences);
  r.get_enum("source", p.source,
             {{"auto", io::ExportSource::Auto},
              {"mesh", io::ExportSource::Mesh},
              {"points", io::ExportSource::Points},
              {"particles", io::ExportSource::Particles},
              {"grid", io::ExportSource::Grid}});
  r.get("grid", p.grid);
  get_names(r, "attributes", p.attributes);
  r.get("uv", p.uv);
  r.get_enum("uv_projection", p.uv_projection,
             {{"none", io::UvProjection::None}, {"box", io::UvProjection::Box}});
  r.get("smooth_shading", p.smooth_shading);
  {
    auto c = r.child("color");
    c.get("attribute", p.color.attribute);
    c.get("min", p.color.min);
    c.get("max", p.color.max);
    if (p.color.max < p.color.min) c.fail_order("min", "max", false);
  }
  {
    auto l = r.child("level_set");
    // Up to 1 km: 1e308 overflowed the voxel coordinates and failed as bad data (exit 1).
    l.get("voxel_size", p.level_set.voxel_size, in_range(0.0, 1e3));
    if (p.level_set.voxel_size > 0 && p.level_set.voxel_size < io::kMinVoxelSize)
      l.fail("voxel_size",
             "0 (from the particle spacing) or a size >= 2e-5 m (OpenVDB's smallest)");
    l.get("radius", p.level_set.radius, non_negative());
    // Widths in voxels up to 100: OpenVDB's narrow bands are a few voxels, and a dilation of 1e6
    // voxels ran for ever instead of failing.
    l.get("half_width", p.level_set.half_width, in_range(1.0, 100.0));
    l.get("max_voxels", p.level_set.max_voxels, in_range(1e3, 1e12));
    l.get("dilate", p.level_set.dilate, in_range(0.0, 100.0));
    l.get("smooth", p.level_set.smooth, in_range(0, 100));
    l.get("erode", p.level_set.erode, in_range(0.0, 100.0));
    l.get_enum(
        "rasterizer", p.level_set.rasterizer,
        {{"leaf", io::ParticleRasterizer::Leaf}, {"openvdb", io::ParticleRasterizer::OpenVdb}});
    if (p.level_set.voxel_size > 0 && p.level_set.radius > 0 &&
        p.level_set.radius < 1.5 * p.level_set.voxel_size)
      l.fail("radius",
             "a radius of at least 1.5 voxels (" + json_text(1.5 * p.level_set.voxel_size) +
                 " m; OpenVDB skips smaller particles)",
             {l.dotted("voxel_size")});
    if (p.level_set.voxel_size > 0 && p.level_set.radius > 100 * p.level_set.voxel_size)
      l.fail("radius",
             "a radius of at most 100 voxels (" + json_text(100 * p.level_set.voxel_size) +
                 " m; each particle would fill millions of voxels)",
             {l.dotted("voxel_size")});
  }
  {
    auto m = r.child("meshing");
    m.get("iso_value", p.meshing.iso_value);
    m.get("adaptivity", p.meshing.adaptivity, unit_interval());
  }
  r.get_enum("up_axis", p.up_axis, {{"Y", std::string("Y")}, {"Z", std::string("Z")}});
  {
    auto m = r.child("match");
    std::string file;
    m.get_input_file("file", file);
    p.match.file = file;
    // Units per metre: 100 for centimetres, 39.37 for inches; a kilometre to a micrometre.
    m.get("scale", p.match.scale, in_range(1e-3, 1e6));
    m.get_enum("up_axis", p.match.up_axis, {{"Y", std::string("Y")}, {"Z", std::string("Z")}});
    m.get("frame", p.match.frame, at_least(0));
    // Up to 1 % of the mesh's size: the vertices of a mesh lie further apart than that, and a
    // larger tolerance would only make a wrong match pass.
    m.get("tolerance", p.match.tolerance, in_range(1e-9, 1e-2));
  }
}

void add_mesh_export_flags(CLI::App& app, MeshExportFlags& flags) {
  app.add_option("--format", flags.format,
                 "Output format: obj|ply|pc2|mdd|usda|vdb|xdmf; default: from -o's extension")
      ->type_name("FORMAT");
  app.add_option("--sequence", flags.sequences,
                 "Sequence to export (repeatable); default: every sequence")
      ->type_name("NAME")
      ->allow_extra_args(false);
}

io::MeshExportParams mesh_export_params(Context& ctx, const MeshExportFlags& flags,
                                        io::Provenance& provenance) {
  auto params = ctx.config<io::MeshExportParams>(read_mesh_export_params);
  json config = ctx.resolved_config();
  config["sequences"] = params.sequences;  // lists, also when given as "a,b" by --set
  config["attributes"] = params.attributes;
  if (!flags.format.empty()) {
    const auto f = io::format_from_name(flags.format);
    if (!f)
      throw UsageError("--format '" + flags.format +
                       "': expected one of obj, ply, pc2, mdd, usda, vdb, xdmf");
    params.format = f;
    config["format"] = flags.format;
  }
  if (!flags.sequences.empty()) {
    if (const std::string twice = first_repeated(flags.sequences); !twice.empty())
      throw UsageError("--sequence: \"" + twice + "\" is given twice; expected each sequence once");
    params.sequences = flags.sequences;
    config["sequences"] = flags.sequences;
  }
  params.input = ctx.input();
  params.output = ctx.output_template();  // export_cache checks every file's directory
  if (auto frames = ctx.frames()) params.frames = *frames;
  params.shard = ctx.shard();
  params.dry_run = ctx.dry_run();
  params.config_origin = [origins = ctx.config_origins()](const std::vector<std::string>& keys) {
    return origins(keys);
  };
  provenance = ctx.provenance();
  provenance.command_line = unsharded_command_line(provenance.command_line);
  provenance.config_json = json_dump(config);
  return params;
}

}  // namespace datadyn::app
