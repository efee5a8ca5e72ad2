#include "elastic/elastic_io.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "core/lattice.hpp"
#include "core/mesh_topology.hpp"
#include "core/voxel_lattice.hpp"
#include "elastic/procedural_examples.hpp"
#include "elastic/surface_examples.hpp"
#include "io/mesh_loaders.hpp"
#include "io/tetrahedralize.hpp"

namespace datadyn::elastic {

namespace {

using app::ConfigReader;

const std::vector<std::pair<std::string, std::string>> kAxes{{"x", "x"}, {"y", "y"}, {"z", "z"}};

int axis_index(const std::string& a) {
  return a == "x" ? 0 : a == "y" ? 1 : 2;
}

// A generated body has at most 1e7 particles, 5,000 times the paper's largest (the 2,025-particle
// cylinder of Koyama et al. 2013, table 1): a resolution of 2000^3 is a typo, and it ran out of
// memory without naming the key.
constexpr double kMaxParticles = 1e7;
// A body from 1 mm to 1 km across. Sizes near 1e-300 m passed "> 0" and failed later naming a
// tet rather than the key, or ran with inverted matrices of no size (a cylinder of radius
// 1e-160 m: its examples' condition number was infinite).
constexpr double kMinBodySize = 1e-3, kMaxBodySize = 1e3;
const char* const kBodySizes = "a body from 1 mm to 1 km";

void read_mesh(ConfigReader& r, MeshConfig& m) {
  r.get_enum("type", m.kind,
             {{"box", MeshKind::Box},
              {"cylinder", MeshKind::Cylinder},
              {"tetgen", MeshKind::TetGen},
              {"obj", MeshKind::Obj},
              {"voxels", MeshKind::Voxels}});
  switch (m.kind) {
    case MeshKind::Box:
      r.get("resolution", m.resolution, app::at_least(2));
      if (static_cast<double>(m.resolution[0]) * m.resolution[1] * m.resolution[2] > kMaxParticles)
        r.fail("resolution", "at most 1e7 particles (nx ny nz)");
      r.get("min_corner", m.min_corner);
      r.get("max_corner", m.max_corner);
      if (!(m.max_corner.array() > m.min_corner.array()).all())
        r.fail_order("min_corner", "max_corner", true, " on every axis");
      if (const Eigen::Vector3d extent = m.max_corner - m.min_corner;
          !(extent.minCoeff() >= kMinBodySize && extent.maxCoeff() <= kMaxBodySize)) {
        const bool on_min = r.blamed({"min_corner", "max_corner"}) == "min_corner";
        const Eigen::Vector3d& other = on_min ? m.max_corner : m.min_corner;
        const std::string other_key = on_min ? "max_corner" : "min_corner";
        r.fail(on_min ? "min_corner" : "max_corner",
               "a corner 0.001 to 1000 m from " + other_key + " (" +
                   app::json_text(nlohmann::json{other.x(), other.y(), other.z()}) +
                   ") on every axis (" + kBodySizes + ")",
               {r.dotted(other_key)});
      }
      r.get("tets_per_cell", m.tets_per_cell, app::in_range(5, 6));
      break;
    case MeshKind::Cylinder:
      r.get("radius", m.radius, app::in_range(kMinBodySize / 2, kMaxBodySize / 2));
      r.get("height", m.height, app::in_range(kMinBodySize, kMaxBodySize));
      r.get("rings", m.rings, app::at_least(1));
      r.get("segments", m.segments, app::at_least(3));
      r.get("layers", m.layers, app::at_least(1));
      if (const double n = (1.0 + static_cast<double>(m.rings) * m.segments) * (m.layers + 1.0);
          n > kMaxParticles)
        r.fail_together({"rings", "segments", "layers"},
                        "at most 1e7 particles, (1 + rings segments) (layers + 1) = (1 + " +
                            std::to_string(m.rings) + " x " + std::to_string(m.segments) + ") x " +
                            std::to_string(m.layers + 1) + " = " + app::number_text(n));
      r.get("base", m.base);
      break;
    case MeshKind::TetGen: {
      r.require_input_file("file", m.file, {".node"});
      // The tetrahedra are in the .ele beside it: a missing one was "cannot open for reading",
      // exit 1, after the config had been taken.
      std::filesystem::path ele = m.file;
      if (ele.extension() == ".node" || ele.extension() == ".ele") ele.replace_extension();
      ele += ".ele";
      if (!std::filesystem::is_regular_file(ele))
        r.fail("file", "a TetGen mesh: a .node file with its tetrahedra in a .ele beside it (" +
                           ele.string() + " is missing)");
      r.get("scale", m.scale, app::positive());
      break;
    }
    case MeshKind::Obj:
      r.require_input_file("file", m.file);
      r.get("scale", m.scale, app::positive());
      r.get("max_volume", m.max_volume, app::non_negative());
      r.get("radius_edge_ratio", m.radius_edge_ratio, app::non_negative());
      if (m.radius_edge_ratio != 0.0 && m.radius_edge_ratio < 1.1)
        r.fail("radius_edge_ratio", "0 (no quality bound) or a number >= 1.1");
      break;
    case MeshKind::Voxels:
      r.require_input_file("file", m.file);
      r.get("scale", m.scale, app::positive());
      r.get("cell_size", m.cell_size, app::positive());
      r.get_enum("fill", m.fill,
                 {{"cover", std::string("cover")}, {"inside", std::string("inside")}});
      r.get("tets_per_cell", m.tets_per_cell, app::in_range(5, 6));
      r.get("largest_component", m.largest_component);
      break;
  }
}

void read_example(ConfigReader& r, ExampleConfig& e) {
  r.get_enum("type", e.type,
             {{"twist", std::string("twist")},
              {"bend", std::string("bend")},
              {"s_shape", std::string("s_shape")},
              {"shear", std::string("shear")},
              {"scale", std::string("scale")},
              {"file", std::string("file")},
              {"surface", std::string("surface")}});
  r.get("name", e.name);
  if (e.type == "file") {
    r.require_input_file("file", e.file);
    return;
  }
  if (e.type == "surface") {
    r.require_input_file("file", e.file);
    r.get("smoothness", e.smoothness, app::positive());
    return;
  }
  if (e.type == "scale") {
    r.get("factors", e.factors);
    if (!(e.factors.array() > 0.0).all()) r.fail("factors", "three numbers > 0");
    return;
  }
  r.get_enum("axis", e.axis, kAxes);
  if (e.type != "twist") {
    r.get_enum("direction", e.direction, kAxes);
    if (e.direction == e.axis)
      r.fail("direction", "an axis other than axis (\"" + e.axis + "\")", {r.dotted("axis")});
  }
  if (e.type == "shear")
    r.get("amount", e.amount);
  else
    r.get("angle", e.angle);
}

void read_body(ConfigReader& r, BodyConfig& b) {
  r.get("name", b.name);
  if (b.name.empty() ||
      b.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
    r.fail("name", "a non-empty name of letters, digits, '_' and '-'");
  {
    auto m = r.child("mesh");
    read_mesh(m, b.mesh);
  }
  // From air (1.2 kg/m^3) to beyond osmium (22,590 kg/m^3), as spring-fit's.
  r.get("density", b.density, app::in_range(1.0, 1e5));
  r.get("alpha", b.params.alpha, app::unit_interval());
  r.get("beta", b.params.beta, app::unit_interval());
  r.get("damping", b.params.damping, app::unit_interval());
  r.get("drag", b.params.drag, app::unit_interval());
  r.get("ridge", b.params.ridge, app::non_negative());
  r.get("convex_weights", b.params.convex_weights);
  r.get("exact_examples", b.params.exact_examples);
  r.get("position", b.position);
  r.get("rotation", b.rotation);
  r.get("velocity", b.velocity);
  r.get("angular_velocity", b.angular_velocity);
  static const ExampleConfig example_prototype;
  r.get_list<ExampleConfig>("examples", b.examples, example_prototype, read_example,
                            static_cast<std::size_t>(kMaxExamples));
  {
    auto g = r.child("groups");
    g.get_enum("axis", b.groups.axis, kAxes);
    g.get("splits", b.groups.splits, app::Range{0.0, 1.0, true, true});
    if (!std::is_sorted(b.groups.splits.begin(), b.groups.splits.end()) ||
        std::adjacent_find(b.groups.splits.begin(), b.groups.splits.end()) != b.groups.splits.end())
      g.fail("splits", "fractions in (0, 1) in increasing order");
  }
  {
    auto p = r.child("pins");
    p.get("enabled", b.pins.enabled);
    p.get_enum("axis", b.pins.axis, kAxes);
    p.get("below", b.pins.below, app::unit_interval());
  }
  {
    auto rr = r.child("render");
    rr.get_enum("type", b.render.type,
                {{"boundary", std::string("boundary")}, {"obj", std::string("obj")}});
    if (b.render.type == "obj") {
      rr.require_input_file("file", b.render.file);
      rr.get("scale", b.render.scale, app::positive());
    }
  }
}

void read_plane(ConfigReader& r, PlaneConfig& p) {
  r.get("point", p.point);
  r.get("normal", p.normal);
  if (!(p.normal.norm() > 0.0)) r.fail("normal", "a non-zero vector");
  r.get("restitution", p.restitution, app::unit_interval());
  r.get("friction", p.friction, app::non_negative());
  r.get("resting_speed", p.resting_speed, app::non_negative());
}

/// A TetGen .node file alone (an example pose needs no tets): header then `index x y z ...`.
Points3 load_node_positions(const std::filesystem::path& path) {
  if (std::filesystem::exists(path.string() + ".ele") ||
      (path.extension() == ".node" &&
       std::filesystem::exists(std::filesystem::path(path).replace_extension(".ele"))))
    return load_tetgen(path).vertices;
  std::ifstream in(path);
  if (!in) throw IoError(path.string() + ": cannot open");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  if (lines.empty()) throw IoError(path.string() + ": empty .node file");
  std::istringstream head(lines[0]);
  long count = 0, dim = 0;
  if (!(head >> count >> dim) || dim != 3 || count <= 0 ||
      static_cast<long>(lines.size()) < count + 1)
    throw IoError(path.string() +
                  ": expected a .node header '<#points> 3 ...' and that many lines");
  Points3 x(count, 3);
  for (long i = 0; i < count; ++i) {
    std::istringstream ls(lines[static_cast<std::size_t>(i + 1)]);
    long index = 0;
    double a = 0, b = 0, c = 0;
    if (!(ls >> index >> a >> b >> c) || !std::isfinite(a) || !std::isfinite(b) ||
        !std::isfinite(c))
      throw IoError(path.string() + ": point line " + std::to_string(i + 1) + " is malformed");
    x.row(i) << a, b, c;
  }
  return x;
}

/// Normalised coordinate s in [0, 1] of every rest vertex along an axis.
Eigen::VectorXd fractions(const Points3& x, int axis) {
  const double lo = x.col(axis).minCoeff(), hi = x.col(axis).maxCoeff();
  Eigen::VectorXd s(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) s(i) = hi > lo ? (x(i, axis) - lo) / (hi - lo) : 0.0;
  return s;
}

/// Throws ConfigError on `where`/scale unless `vertices`, a file's mesh at its scale, make a body
/// from 1 mm to 1 km across (a mesh in other units, or a scale of 1e-300, which left tets of no
/// volume).
void check_scaled_size(const Points3& vertices, const MeshConfig& m,
                       const app::ConfigOrigin& origin, const std::string& where) {
  if (vertices.rows() == 0) return;  // the loaders name an empty file
  const double across = (vertices.colwise().maxCoeff() - vertices.colwise().minCoeff()).maxCoeff();
  if (across >= kMinBodySize && across <= kMaxBodySize) return;
  // A file whose vertices all sit at one place is bad data, which no scale sets right.
  if (!(across > 0))
    throw IoError(m.file + ": every vertex at one place: no body to simulate (" + where + "/file)");
  char size[64];
  std::snprintf(size, sizeof size, "%.3g m across", across);
  throw ConfigError(origin({where + "/scale", where + "/file"}), where + "/scale",
                    std::string("a scale making ") + m.file + " " + kBodySizes + " (it is " + size +
                        " at this scale; if the file is in other units, set mesh.scale)",
                    app::json_text(m.scale));
}

TetMesh body_mesh(const MeshConfig& m, const app::ConfigOrigin& origin, const std::string& where,
                  const NoteCallback& note) {
  switch (m.kind) {
    case MeshKind::Box: {
      BoxLatticeSpec s;
      s.nx = m.resolution[0];
      s.ny = m.resolution[1];
      s.nz = m.resolution[2];
      s.min_corner = m.min_corner;
      s.max_corner = m.max_corner;
      s.tets_per_cell = m.tets_per_cell;
      return box_lattice(s);
    }
    case MeshKind::Cylinder: {
      CylinderLatticeSpec s;
      s.radius = m.radius;
      s.height = m.height;
      s.rings = m.rings;
      s.segments = m.segments;
      s.layers = m.layers;
      s.base = m.base;
      return cylinder_lattice(s);
    }
    case MeshKind::TetGen: {
      TetMesh mesh = load_tetgen(m.file);
      mesh.vertices *= m.scale;
      check_scaled_size(mesh.vertices, m, origin, where);
      return mesh;
    }
    case MeshKind::Obj: {
      const auto path = std::filesystem::path(m.file);
      SurfaceMesh surface = load_obj(path);
      surface.vertices *= m.scale;
      check_scaled_size(surface.vertices, m, origin, where);
      TetrahedralizeOptions o;
      o.max_volume = m.max_volume;
      o.radius_edge_ratio = m.radius_edge_ratio;
      TetMesh mesh;
      try {
        mesh = tetrahedralize_surface(surface, o);
      } catch (const IoError& e) {
        throw IoError(path.string() + ": " + e.what() + " (" + where + "/file)");
      }
      if (note)
        note(Note::Info, where + ": " + path.string() + " tetrahedralised by TetGen (" +
                             tetgen_switches(o) + "): " + std::to_string(mesh.vertices.rows()) +
                             " particles, " + std::to_string(mesh.tets.rows()) + " tets");
      return mesh;
    }
    case MeshKind::Voxels: {
      const auto path = std::filesystem::path(m.file);
      SurfaceMesh surface = load_obj(path);
      surface.vertices *= m.scale;
      check_scaled_size(surface.vertices, m, origin, where);
      if (surface.triangles.rows() == 0)
        throw IoError(path.string() + ": no triangles to fill (" + where + "/file)");
      // Cells are inside by the surface's winding: a file wound inward filled nothing, or with
      // `cover` only a hollow shell of surface cells.
      if (orient_outward(surface.vertices, surface.triangles, surface.uv.corners) && note)
        note(Note::Warning,
             where + ": " + path.string() + ": the faces wind inward; filled as turned outward");
      // At most 1e8 cells around the surface (the lattice indexes them with int, and holds a
      // few bytes each): a cell size of a micron on a metre-sized mesh is a units mistake.
      const Eigen::Vector3d extent =
          (surface.vertices.colwise().maxCoeff() - surface.vertices.colwise().minCoeff())
              .transpose();
      const double cells = std::max(1.0, std::ceil(extent.x() / m.cell_size)) *
                           std::max(1.0, std::ceil(extent.y() / m.cell_size)) *
                           std::max(1.0, std::ceil(extent.z() / m.cell_size));
      if (!(cells <= 1e8)) {
        char least[32];
        std::snprintf(least, sizeof least, "%.3g",
                      std::cbrt(extent.x() * extent.y() * extent.z() / 1e8));
        char size[96];
        std::snprintf(size, sizeof size, "%.3g x %.3g x %.3g m", extent.x(), extent.y(),
                      extent.z());
        throw ConfigError(origin({where}), where + "/cell_size",
                          "a cell size giving at most 1e8 cells around " + path.string() +
                              " (>= " + least + " m for its " + size + " at scale " +
                              app::json_text(m.scale) +
                              "; if the file is in other units, set mesh.scale)",
                          app::json_text(m.cell_size));
      }
      // A body under two cells across is one block of cells (a 0.5 mm asset in 0.1 m cells, a
      // file in metres read as centimetres): it ran without a word.
      if (note && extent.maxCoeff() < 2 * m.cell_size) {
        char size[256];
        std::snprintf(size, sizeof size,
                      "%.3g m across (scale %.3g), less than two cells of %.3g m: it is one "
                      "block of cells; if the file is in other units set mesh.scale, else a "
                      "smaller cell_size",
                      extent.maxCoeff(), m.scale, m.cell_size);
        note(Note::Warning, where + ": " + path.string() + " is " + size);
      }
      VoxelLatticeSpec spec;
      spec.cell_size = m.cell_size;
      spec.fill = m.fill == "inside" ? VoxelFill::Inside : VoxelFill::Cover;
      spec.tets_per_cell = m.tets_per_cell;
      spec.largest_component = m.largest_component;
      VoxelLattice v = voxel_lattice(surface, spec);
      if (v.mesh.tets.rows() == 0)
        throw ConfigError(origin({where}), where + "/cell_size",
                          "a cell size small enough for cells inside " + path.string(),
                          std::to_string(m.cell_size));
      if (note)
        note(Note::Info, where + ": " + path.string() + " filled with " +
                             std::to_string(m.cell_size) +
                             " m cells: " + std::to_string(v.cells_inside) + " inside, " +
                             std::to_string(v.cells_surface) + " on the surface, " +
                             std::to_string(v.cells_dropped) + " dropped in " +
                             std::to_string(v.components - 1) + " smaller pieces; " +
                             std::to_string(v.mesh.vertices.rows()) + " particles, " +
                             std::to_string(v.mesh.tets.rows()) + " tets");
      return std::move(v.mesh);
    }
  }
  return {};
}

}  // namespace

void read_scene_config(ConfigReader& r, SceneConfig& c) {
  r.get("frames", c.frames, app::at_least(1));
  // As spring-fit's: 1e-300 fps passed and failed after the run, blaming the output.
  r.get("frame_rate", c.frame_rate, app::in_range(1.0, 1e4));
  // 1000 steps a frame is h = 4e-5 s at 24 fps, finer than any shape-matching scene needs (the
  // authors' demo takes 5); 2e9 ran for hours instead of naming the key.
  r.get("substeps", c.substeps, app::in_range(1, 1000));
  r.get("gravity", c.gravity);
  r.get("max_speed", c.max_speed, app::positive());
  static const PlaneConfig plane_prototype;
  // A scene's floor, walls and ramps are a handful of planes, each tested against every particle
  // at every substep; 10^5 took 5 s to read before anything checked them.
  r.get_list<PlaneConfig>("planes", c.planes, plane_prototype, read_plane, 1000);
  static const BodyConfig body_prototype;
  r.get_list<BodyConfig>("bodies", c.bodies, body_prototype, read_body);
  if (c.bodies.empty()) r.fail("bodies", "at least one body");
  std::map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < c.bodies.size(); ++i)
    if (const auto [it, fresh] = names.emplace(c.bodies[i].name, i); !fresh) {
      // Either body's --set may have made the two names equal.
      auto b = r.child("bodies/" + std::to_string(i));
      b.fail("name", "a name no other body has (body " + std::to_string(it->second) + " has it)",
             {"bodies." + std::to_string(it->second) + ".name"});
    }
}

namespace {

/// Embeds the body's render mesh (render.type "obj") in its tets; returns the file's faces as it
/// gives them, against which surface examples are checked.
Polygons embed_render_mesh(const BodyConfig& bc, BodySetup& s, const std::string& where,
                           const NoteCallback& note) {
  Polygons render_faces;
  const auto path = std::filesystem::path(bc.render.file);
  SurfaceMesh surface = load_obj(path, ObjTexture::Read);
  render_faces = surface.polygons;
  surface.vertices *= bc.render.scale;
  // Renderers cull and shade by the winding: an inward file is written turned outward.
  if (orient_outward(surface.vertices, surface.triangles, surface.uv.corners) && note)
    note(Note::Warning,
         path.string() + ": the render mesh's faces wind inward; written turned outward");
  // The render mesh wraps the body: a vertex beyond the body's bounding box grown by its own
  // size is a units or file mistake (and one at 1e308 made the embedding index no tet).
  const Eigen::Vector3d lo = s.mesh.vertices.colwise().minCoeff().transpose(),
                        hi = s.mesh.vertices.colwise().maxCoeff().transpose(),
                        grow = Eigen::Vector3d::Constant((hi - lo).norm());
  for (Eigen::Index v = 0; v < surface.vertices.rows(); ++v) {
    const Eigen::Vector3d p = surface.vertices.row(v).transpose();
    if (!((p.array() >= (lo - grow).array()).all() && (p.array() <= (hi + grow).array()).all())) {
      char at[96];
      std::snprintf(at, sizeof at, "(%.4g, %.4g, %.4g)", p.x(), p.y(), p.z());
      throw IoError(path.string() + ": vertex " + std::to_string(v + 1) + " at " + at +
                    " m is far outside the body it should wrap, expected the render mesh "
                    "around the simulation mesh (" +
                    where + "/render/file)");
    }
  }
  s.render = embed_surface(s.mesh, surface);
  // The cache has triangles and quads: a face of more corners reaches it as n - 2 triangles.
  std::size_t ngons = 0;
  int most = 0;
  for (const int n : render_faces.sizes)
    if (n >= 5) {
      ++ngons;
      most = std::max(most, n);
    }
  if (ngons > 0 && note)
    note(Note::Warning, path.string() + ": " + std::to_string(ngons) + " of its " +
                            std::to_string(render_faces.sizes.size()) +
                            " faces have 5 or more corners (up to " + std::to_string(most) +
                            "); the cache keeps triangles and quads, so each is written as its "
                            "n - 2 triangles");
  if (note)
    note(Note::Info, "body '" + bc.name + "': render mesh " + path.string() + " (" +
                         std::to_string(surface.vertices.rows()) + " vertices) embedded in " +
                         std::to_string(s.mesh.tets.rows()) + " tets; farthest vertex outside: " +
                         std::to_string(s.render.max_outside_distance) + " m");
  return render_faces;
}

/// Example `k` of the body as particle positions: a pose file, a surface pose carried to the
/// particles, or a procedural deformation of the rest shape.
Points3 example_pose(const BodyConfig& bc, const BodySetup& s, std::size_t k,
                     const Polygons& render_faces, const app::ConfigOrigin& origin,
                     const std::string& where, const NoteCallback& note) {
  const Eigen::Index n = s.mesh.vertices.rows();
  const ExampleConfig& e = bc.examples[k];
  const std::string ekey = where + "/examples/" + std::to_string(k);
  if (e.type == "file") {
    const auto path = std::filesystem::path(e.file);
    const std::string ext = path.extension().string();
    Points3 x = ext == ".obj" ? load_obj(path).vertices : load_node_positions(path);
    if (bc.mesh.kind == MeshKind::TetGen || bc.mesh.kind == MeshKind::Obj) x *= bc.mesh.scale;
    if (x.rows() != n)
      throw IoError(path.string() + ": example pose has " + std::to_string(x.rows()) +
                    " vertices, body '" + bc.name + "' has " + std::to_string(n) + " particles (" +
                    ekey + "/file): an example must move every particle");
    return x;
  }
  if (e.type == "surface") {
    if (bc.render.type != "obj")
      throw ConfigError(origin({ekey + "/type", where + "/render/type"}), ekey + "/type",
                        "\"surface\" only with a render mesh (render.type \"obj\")", "\"surface\"");
    const auto path = std::filesystem::path(e.file);
    const SurfaceMesh pose_mesh = load_obj(path);
    const Points3 pose = pose_mesh.vertices * bc.render.scale;
    if (pose.rows() != s.render.particles.rows())
      throw IoError(path.string() + ": surface pose has " + std::to_string(pose.rows()) +
                    " vertices, the render mesh of body '" + bc.name + "' has " +
                    std::to_string(s.render.particles.rows()) + " (" + ekey + "/file)");
    // A pose exported with its vertices in another order has the same count, and moved each
    // vertex to another's place: its faces tell (a file of points alone is taken as is).
    if (!pose_mesh.polygons.sizes.empty() && pose_mesh.polygons != render_faces)
      throw IoError(path.string() + ": surface pose's faces are not the render mesh's (" + where +
                    "/render/file): its vertices are in another order, or it is "
                    "another mesh; export the pose from the render mesh without reordering "
                    "or changing its vertices and faces (" +
                    ekey + "/file)");
    SurfacePoseFit fit = particles_from_surface_pose(s.mesh, s.render, pose, e.smoothness);
    if (!fit.solved)
      throw RunError(path.string() +
                     ": the surface pose does not determine every particle of "
                     "body '" +
                     bc.name + "' (" + ekey + ")");
    if (note)
      note(Note::Info, "body '" + bc.name + "': example " + path.string() +
                           " carried to the particles, surface residual rms " +
                           std::to_string(fit.rms_residual) + " m, max " +
                           std::to_string(fit.max_residual) + " m");
    return std::move(fit.particles);
  }
  Deformation d;
  d.axis = axis_index(e.axis);
  d.direction = axis_index(e.direction);
  d.angle = e.angle * std::numbers::pi / 180.0;
  d.amount = e.amount;
  d.factors = e.factors;
  d.kind = e.type == "twist"     ? DeformationKind::Twist
           : e.type == "bend"    ? DeformationKind::Bend
           : e.type == "s_shape" ? DeformationKind::SShape
           : e.type == "shear"   ? DeformationKind::Shear
                                 : DeformationKind::Scale;
  return deform(s.mesh.vertices, d);
}

/// The body's groups (section 4.4) and pins, by position along an axis.
void assign_groups_and_pins(const BodyConfig& bc, BodySetup& s, const app::ConfigOrigin& origin,
                            const std::string& where) {
  const Eigen::Index n = s.mesh.vertices.rows();
  if (!bc.groups.splits.empty()) {
    const Eigen::VectorXd f = fractions(s.mesh.vertices, axis_index(bc.groups.axis));
    std::vector<int> count(bc.groups.splits.size() + 1, 0);
    s.groups.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto g = static_cast<int>(
          std::upper_bound(bc.groups.splits.begin(), bc.groups.splits.end(), f(i)) -
          bc.groups.splits.begin());
      s.groups[static_cast<std::size_t>(i)] = g;
      ++count[static_cast<std::size_t>(g)];
    }
    for (std::size_t g = 0; g < count.size(); ++g)
      if (count[g] == 0)
        throw ConfigError(origin({where + "/groups", where + "/mesh"}), where + "/groups/splits",
                          "splits that leave particles in every group",
                          "group " + std::to_string(g) + " empty");
  }
  if (bc.pins.enabled) {
    const Eigen::VectorXd f = fractions(s.mesh.vertices, axis_index(bc.pins.axis));
    for (Eigen::Index i = 0; i < n; ++i)
      if (f(i) <= bc.pins.below + 1e-9) s.pinned.push_back(static_cast<int>(i));
  }
}

/// Says what a built body holds, and warns of examples that are (nearly) linearly dependent.
void note_body(const Body& b, const NoteCallback& note) {
  if (!note) return;
  note(Note::Info,
       "body '" + b.name + "': " + std::to_string(b.particle_count()) + " particles, " +
           std::to_string(b.tets.rows()) + " tets, " +
           app::counted(static_cast<std::size_t>(b.example_count()), "example", "examples") + ", " +
           app::counted(static_cast<std::size_t>(b.group_count()), "group", "groups") + ", " +
           std::to_string(b.pinned.size()) + " pinned");
  const ExampleSpace& e = b.examples;
  for (int g = 0; g < b.group_count(); ++g) {
    const auto gi = static_cast<std::size_t>(g);
    if (!(e.condition[gi] > 1e10)) continue;
    // An example whose strains in the group are the rest pose's (a scale by 1, a twist by 0):
    // its column of L is zero, which makes LᵀL singular without any other example involved.
    // The root mean square of its strain offsets: below 1e-9 is rounding, not a pose.
    std::string rest_like;
    const double entries = 6.0 * static_cast<double>(e.group_regions[gi].size());
    for (int k = 0; k < e.example_count; ++k) {
      const double ltl = e.normal[gi](k, k) - e.ridge[gi];
      if (std::sqrt(std::max(ltl, 0.0) / entries) < 1e-9)
        rest_like += (rest_like.empty() ? "" : ", ") + std::to_string(k);
    }
    const std::string where = "body '" + b.name + "' group " + std::to_string(g);
    if (!rest_like.empty())
      note(Note::Warning, where + ": example " + rest_like +
                              " deforms nothing in this group (its strains "
                              "are the rest pose's); its weight stays 0");
    else
      note(Note::Warning, where + ": the examples are (nearly) linearly dependent (cond(LᵀL) = " +
                              std::to_string(e.condition[gi]) +
                              "); the ridge splits the weight between them");
  }
}

}  // namespace

Scene build_scene(const SceneConfig& config, const app::ConfigOrigin& origin,
                  const NoteCallback& note) {
  Scene scene;
  scene.params.gravity = config.gravity;
  scene.params.max_speed = config.max_speed;
  for (const PlaneConfig& p : config.planes)
    scene.params.planes.push_back(
        {p.point, p.normal.normalized(), p.restitution, p.friction, p.resting_speed});
  for (std::size_t bi = 0; bi < config.bodies.size(); ++bi) {
    const BodyConfig& bc = config.bodies[bi];
    const std::string where = "/bodies/" + std::to_string(bi);
    BodySetup s;
    s.name = bc.name;
    s.mesh = remove_unused_vertices(body_mesh(bc.mesh, origin, where + "/mesh", note));
    // A large body takes a while to build (1e6 particles: about 10 s): say where the time goes.
    if (note)
      note(Note::Info, "body '" + bc.name + "': meshed, " + std::to_string(s.mesh.vertices.rows()) +
                           " particles and " + std::to_string(s.mesh.tets.rows()) +
                           " tets; building its regions and examples");
    s.masses = lumped_masses(s.mesh, bc.density);
    s.params = bc.params;
    // The render faces as the file gives them, for the surface examples.
    const Polygons render_faces =
        bc.render.type == "obj" ? embed_render_mesh(bc, s, where, note) : Polygons{};
    for (std::size_t k = 0; k < bc.examples.size(); ++k)
      s.examples.push_back(example_pose(bc, s, k, render_faces, origin, where, note));
    assign_groups_and_pins(bc, s, origin, where);
    // Initial placement: rotation about x, then y, then z (degrees).
    const Eigen::Vector3d rad = bc.rotation * std::numbers::pi / 180.0;
    s.rotation = (Eigen::AngleAxisd(rad.z(), Eigen::Vector3d::UnitZ()) *
                  Eigen::AngleAxisd(rad.y(), Eigen::Vector3d::UnitY()) *
                  Eigen::AngleAxisd(rad.x(), Eigen::Vector3d::UnitX()))
                     .toRotationMatrix();
    s.translation = bc.position;
    s.velocity = bc.velocity;
    s.angular_velocity = bc.angular_velocity;
    try {
      scene.bodies.push_back(make_body(s));
    } catch (const std::invalid_argument& e) {
      // A mesh from a file that make_body refuses (a sliver tet) is bad data, not a bad config.
      if (bc.mesh.kind == MeshKind::TetGen || bc.mesh.kind == MeshKind::Obj ||
          bc.mesh.kind == MeshKind::Voxels)
        throw IoError(bc.mesh.file + ": body '" + bc.name + "': " + e.what() + " (" + where +
                      "/mesh/file)");
      throw ConfigError(ConfigError::FreeText{}, origin({where}), where,
                        "body '" + bc.name + "': " + e.what());
    }
    note_body(scene.bodies.back(), note);
  }
  return scene;
}

std::uintmax_t frame_bytes(const Scene& scene) {
  std::uintmax_t bytes = 0;
  for (const Body& b : scene.bodies)
    bytes +=
        static_cast<std::uintmax_t>(b.render.particles.rows()) * 3 * sizeof(float) +
        static_cast<std::uintmax_t>(b.particle_count()) * 6 * sizeof(float) +
        static_cast<std::uintmax_t>(b.group_count() * (b.example_count() + 1)) * sizeof(double);
  return bytes;
}

SimulationReport simulate_to_cache(Scene& scene, const SceneConfig& config,
                                   const std::vector<std::int64_t>& frames,
                                   const std::filesystem::path& output,
                                   const io::Provenance& provenance,
                                   const FrameCallback& on_frame) {
  SimulationReport report;
  io::CacheWriter writer(output, provenance);
  const std::size_t nb = scene.bodies.size();
  std::vector<io::SequenceWriter*> surface(nb), particles(nb);
  std::vector<std::vector<double>> weights(nb);
  std::vector<std::vector<std::int64_t>> weight_frames(nb);
  for (std::size_t bi = 0; bi < nb; ++bi) {
    const Body& b = scene.bodies[bi];
    const BodyConfig& bc = config.bodies[bi];
    io::SequenceWriter& s = writer.add_sequence(b.name, {config.frame_rate, 3});
    Points3 rest_surface;
    embedded_positions(b.render, b.rest, rest_surface);
    s.write_static("rest/position", io::view(rest_surface));
    // A mixed mesh: triangles, quads or both (docs/cache-format.md), each with its corners'
    // texture coordinates when the render mesh has them.
    const Embedding& r = b.render;
    const bool textured = r.uv.coordinates.rows() > 0;
    if (textured) s.write_static("uv/coordinates", io::view(r.uv.coordinates));
    if (r.triangles.rows() > 0 || r.quads.rows() == 0) {
      s.write_static("topology/triangles", io::view(r.triangles));
      if (textured) s.write_static("uv/triangles", io::view(r.uv.corners));
    }
    if (r.quads.rows() > 0) {
      s.write_static("topology/quads", io::view(r.quads));
      if (textured) s.write_static("uv/quads", io::view(r.uv_quads));
    }
    s.set_attribute("source", std::string(bc.render.type == "obj" ? "embedded" : "boundary"));
    s.set_attribute("particles", b.name + "_particles");
    surface[bi] = &s;
    io::SequenceWriter& p = writer.add_sequence(b.name + "_particles", {config.frame_rate, 3});
    p.write_static("rest/position", io::view(b.rest));
    p.write_static("topology/tetrahedra", io::view(b.tets));
    p.write_static("points/mass", io::view(b.mass));
    std::vector<std::int32_t> group(static_cast<std::size_t>(b.particle_count()), 0);
    for (std::size_t i = 0; i < group.size(); ++i)
      group[i] = b.examples.region_group.empty() ? 0 : b.examples.region_group[i];
    p.write_static("points/group", io::view(group));
    std::vector<std::int8_t> pinned(group.size(), 0);
    for (int i : b.pinned) pinned[static_cast<std::size_t>(i)] = 1;
    p.write_static("points/pinned", io::view(pinned));
    p.set_attribute("alpha", b.params.alpha);
    p.set_attribute("beta", b.params.beta);
    p.set_attribute("damping", b.params.damping);
    p.set_attribute("substeps", static_cast<std::int64_t>(config.substeps));
    particles[bi] = &p;
  }
  auto write_weights = [&] {
    for (std::size_t bi = 0; bi < nb; ++bi) {
      const Body& b = scene.bodies[bi];
      const std::string group = "/elastic/" + b.name;
      const auto f = weight_frames[bi].size();
      if (f == 0) continue;
      const auto g = static_cast<std::size_t>(b.group_count());
      const auto k = static_cast<std::size_t>(b.example_count() + 1);
      writer.write_array(group + "/weights",
                         io::ArrayView{weights[bi].data(), io::ElementType::Float64, {f, g, k}});
      writer.write_array(group + "/frame", io::view(weight_frames[bi]));
      std::vector<std::string> columns{"rest"};
      const BodyConfig& bc = config.bodies[bi];
      for (const ExampleConfig& e : bc.examples)
        columns.push_back(!e.name.empty()  ? e.name
                          : e.file.empty() ? e.type
                                           : std::filesystem::path(e.file).stem().string());
      writer.set_attribute(group, "columns", columns);
      writer.set_attribute(group, "group_count", static_cast<std::int64_t>(g));
    }
  };

  const double h = 1.0 / (config.frame_rate * config.substeps);
  const std::int64_t last = frames.empty() ? 0 : frames.back();
  std::size_t next = 0;
  Points3 surface_x;
  for (std::int64_t f = 1; f <= last; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    if (f > 1)
      for (int s = 0; s < config.substeps; ++s) step_scene(scene, h);
    const double ms_per_step =
        f > 1 ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count() /
                    config.substeps
              : 0.0;
    const SceneHealth health = check_health(scene);
    if (!health.ok) {
      report.ok = false;
      report.message = "frame " + std::to_string(f) + ": body '" +
                       scene.bodies[static_cast<std::size_t>(health.body)].name + "': particle " +
                       std::to_string(health.particle) + " diverged (" + health.reason + ")";
      // The likeliest cause of a blow-up with too little damping (kStableDamping) is that.
      const double damping = scene.bodies[static_cast<std::size_t>(health.body)].params.damping;
      if (damping < kStableDamping) {
        char hint[160];
        std::snprintf(hint, sizeof hint,
                      " (its damping %g is below %g, which the step needs to stay stable)", damping,
                      kStableDamping);
        report.message += hint;
      }
      // The frames before it are kept; with none, an existing output stays as it was (the
      // writer's temporary file goes).
      if (report.frames_written == 0) {
        report.message += "; no frame was written, " + output.string() + " is left as it was";
        return report;
      }
      report.message += "; the " + std::to_string(report.frames_written) +
                        " frames before it are in " + output.string();
      break;
    }
    if (next < frames.size() && frames[next] == f) {
      const double t = static_cast<double>(f - 1) / config.frame_rate;
      for (std::size_t bi = 0; bi < nb; ++bi) {
        const Body& b = scene.bodies[bi];
        embedded_positions(b.render, b.x, surface_x);
        surface[bi]->append_frame(f, t, {{"points/position", io::view(surface_x)}});
        particles[bi]->append_frame(
            f, t, {{"points/position", io::view(b.x)}, {"points/velocity", io::view(b.v)}});
        weights[bi].insert(weights[bi].end(), b.weights.begin(), b.weights.end());
        weight_frames[bi].push_back(f);
      }
      ++next;
      ++report.frames_written;
      if (on_frame) on_frame(report.frames_written, frames.size(), ms_per_step);
    }
  }
  write_weights();
  // Said in the file too, as mps-gen's kept database says it: dd-cache merge warns of an input
  // that holds this, and a shard cut short looked whole.
  if (!report.ok)
    writer.set_attribute("/", "incomplete",
                         report.message.substr(0, report.message.find("; the ")) +
                             ", and the frames after it were not simulated; it keeps the " +
                             std::to_string(report.frames_written) + " frames before it");
  writer.commit();
  return report;
}

}  // namespace datadyn::elastic
