#include "flesh/flesh_io.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>

#include <spdlog/spdlog.h>

#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/frame_list.hpp"
#include "core/mesh_topology.hpp"
#include "flesh/skin_loader_io.hpp"
#include "flesh/skinned_body.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/path_template.hpp"
#include "io/tetrahedralize.hpp"

namespace datadyn::flesh {
namespace {

using app::at_least;
using app::ConfigReader;
using app::in_range;
using app::json;
using app::non_negative;
using app::positive;

/// A sequence: F frames of #N by 3 positions, with its frame rate and triangles.
struct LoadedSequence {
  std::string file, name;
  double frame_rate = 0.0;
  Eigen::Index points = 0;      ///< #N
  std::vector<Points3> frames;  ///< empty when read frame by frame (sequence_header)
  std::vector<double> times;
  std::vector<std::int64_t> numbers;  ///< the cache's frame numbers
  Triangles triangles;
  FaceVaryingUv uv;  ///< texture coordinates of the triangles' corners, carried to outputs
  Points3 rest;
};

/// The sequence `name`, which the config key `key` chose ("target_sequence").
/// Throws IoError unless the cache has the sequence `name`, which the config's `key` names.
void require_sequence(const io::CacheReader& cache, const std::string& name,
                      const std::string& key) {
  const auto names = cache.sequence_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string have;
  for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
  throw IoError(cache.path().string() + ": /sequences/" + name +
                ": no such sequence (the cache has " + (have.empty() ? std::string("none") : have) +
                "); the config's /" + key + " names the sequence to read");
}

/// Frame `f` (0-based) of the positions of `seq`, checked to be finite (IoError naming the frame
/// and the point otherwise).
Points3 read_position_frame(const io::SequenceReader& s, const LoadedSequence& seq, std::size_t f) {
  Points3 p = s.positions(f);
  if (!p.allFinite()) {
    Eigen::Index bad = 0;
    while (p.row(bad).allFinite()) ++bad;
    throw IoError(seq.file + ": /sequences/" + seq.name + "/points/position: frame " +
                  std::to_string(seq.numbers[f]) + " (index " + std::to_string(f) + "): point " +
                  std::to_string(bad) + " is not finite");
  }
  return p;
}

/// Everything of the sequence `name` (open as `s`) but its positions, checked: `frames` stays
/// empty and `points` is set; read_position_frame reads the frames.
LoadedSequence sequence_header(const io::CacheReader& cache, const io::SequenceReader& s,
                               const std::string& name) {
  LoadedSequence out;
  out.file = cache.path().string();
  out.name = name;
  out.frame_rate = s.frame_rate();
  // The springs integrate over 1 / frame rate: the rates simulate accepts (1 to 10,000 fps).
  if (!(out.frame_rate >= 1.0 && out.frame_rate <= 1e4))
    throw IoError(out.file + ": /sequences/" + name +
                  "@frame_rate: " + std::to_string(out.frame_rate) + " fps, expected 1 to 10000");
  if (s.dimension() != 3)
    throw IoError(out.file + ": /sequences/" + name + ": expected 3D points, got dimension " +
                  std::to_string(s.dimension()));
  if (!s.has("points/position") || s.frame_count() < 2)
    throw IoError(out.file + ": /sequences/" + name +
                  "/points/position: expected at least 2 frames of positions, got " +
                  std::to_string(s.frame_count()));
  out.points = static_cast<Eigen::Index>(s.point_count());
  out.times = s.times();
  out.numbers = s.frames();
  if (s.has("topology/triangles")) out.triangles = s.topology("triangles");
  out.uv = io::read_face_uv(s);
  if (s.has("rest/position")) out.rest = s.read_static<double>("rest/position").matrix();
  return out;
}

/// The sequence `name` read whole, which the config key `key` chose ("target_sequence").
LoadedSequence load_sequence(const io::CacheReader& cache, const std::string& name,
                             const std::string& key) {
  require_sequence(cache, name, key);
  const io::SequenceReader s = cache.sequence(name);
  LoadedSequence out = sequence_header(cache, s, name);
  for (std::size_t f = 0; f < s.frame_count(); ++f)
    out.frames.push_back(read_position_frame(s, out, f));
  return out;
}

/// Targets and truth must describe the same vertices at the same times.
void check_pair(const LoadedSequence& target, const LoadedSequence& truth) {
  const std::string where =
      target.file + ": /sequences/" + target.name + " and /sequences/" + truth.name;
  if (target.numbers.size() != truth.numbers.size())
    throw IoError(where + ": frame counts differ (" + std::to_string(target.numbers.size()) +
                  " vs " + std::to_string(truth.numbers.size()) + ")");
  if (target.points != truth.points)
    throw IoError(where + ": vertex counts differ (" + std::to_string(target.points) + " vs " +
                  std::to_string(truth.points) + ")");
  if (std::abs(target.frame_rate - truth.frame_rate) > 1e-9 * target.frame_rate)
    throw IoError(where + ": frame rates differ (" + std::to_string(target.frame_rate) + " vs " +
                  std::to_string(truth.frame_rate) + " fps)");
}

void write_points_sequence(io::CacheWriter& w, const std::string& name, double frame_rate,
                           const std::vector<Points3>& frames, const std::vector<double>& times,
                           const Points3& rest, const Triangles& triangles, const FaceVaryingUv& uv,
                           const io::Attributes& attributes) {
  auto& s = w.add_sequence(name, {frame_rate, 3});
  for (const auto& [k, v] : attributes) s.set_attribute(k, v);
  if (rest.rows() > 0) s.write_static("rest/position", io::view(rest));
  if (triangles.rows() > 0) s.write_static("topology/triangles", io::view(triangles));
  io::write_face_uv(s, uv);
  for (std::size_t f = 0; f < frames.size(); ++f)  // frame 1 at t = 0, as in every tool
    s.append_frame(static_cast<std::int64_t>(f) + 1, times[f],
                   {{"points/position", io::view(frames[f])}});
}

std::filesystem::path report_path(const std::string& configured,
                                  const std::filesystem::path& output) {
  if (!configured.empty()) return configured;
  return io::sidecar(output, ".report.json");
}

void write_json(const std::filesystem::path& path, const json& j) {
  io::AtomicFile file(path);
  file.write(app::json_dump(j, 2) + "\n");
  file.commit();
}

/// A rigged mesh as a simulation body: the file's surface welded and tetrahedralised by TetGen
/// (surface kept), skin weights carried inside from the nearest surface vertex, the vertices
/// within pin_radius of a bone pinned, and the file's first animation sampled at every substep
/// from `start` s.
FleshBody skinned_mesh_body(const MeshBodyConfig& m, const FleshSimulationParams& p, double start) {
  const double rate = p.frame_rate * p.substeps;
  const int samples = (p.frames - 1) * p.substeps + 1;
  std::vector<double> times;
  for (int k = 0; k < samples; ++k) times.push_back(start + k / rate);
  const LoadedSkin skin = load_skin_animation(m.file, times);
  spdlog::info("{}: {}", m.file, skin.axes);
  if (!skin.animated)
    throw IoError(m.file +
                  ": no animation in the file; motion.kind = \"skin\" moves the mesh by "
                  "the file's first animation (export it with its animation baked)");
  if (skin.skinned_meshes > 1)
    spdlog::warn("{}: {} meshes have bones; only the first, \"{}\", is simulated", m.file,
                 skin.skinned_meshes, skin.mesh_name);
  // The file's own frame rate is not the cache's: say what is sampled.
  const double end = start + (p.frames - 1) / p.frame_rate;
  spdlog::info("{}: its animation lasts {:.4g} s; {} frames at {:.4g} fps from {:.4g} s{}", m.file,
               skin.duration, p.frames, p.frame_rate, start,
               end > skin.duration + 1e-9 ? fmt::format(", past its end from {:.4g} s (the last "
                                                        "pose held)",
                                                        skin.duration)
                                          : std::string());
  const double extent = (skin.rest.colwise().maxCoeff() - skin.rest.colwise().minCoeff()).norm();
  const WeldedVertices welded = weld_vertices(skin.rest, 1e-6 * extent);
  Triangles welded_triangles = skin.triangles;
  for (Eigen::Index t = 0; t < welded_triangles.rows(); ++t)
    for (int c = 0; c < 3; ++c)
      welded_triangles(t, c) = welded.index[static_cast<std::size_t>(welded_triangles(t, c))];
  // In an order of the surface's own: another export of the mesh, its faces in another order,
  // gives the same body (canonical_order). Each welded vertex stands for the least of the file's
  // copies of it, by position and then by weights, which the file's order does not change (its
  // copies may differ in their last bits); its texture coordinates are numbered in the order the
  // corners first use them.
  const Eigen::Index W = welded.points.rows(), T = welded_triangles.rows();
  const auto less = [&](Eigen::Index a, Eigen::Index b) {
    for (int d = 0; d < 3; ++d)
      if (skin.rest(a, d) != skin.rest(b, d)) return skin.rest(a, d) < skin.rest(b, d);
    for (Eigen::Index k = 0; k < skin.weights.cols(); ++k)
      if (skin.weights(a, k) != skin.weights(b, k)) return skin.weights(a, k) < skin.weights(b, k);
    return false;
  };
  std::vector<Eigen::Index> source(static_cast<std::size_t>(W), -1);  // the file's copy
  for (Eigen::Index v = 0; v < skin.rest.rows(); ++v) {
    Eigen::Index& s = source[static_cast<std::size_t>(welded.index[static_cast<std::size_t>(v)])];
    if (s < 0 || less(v, s)) s = v;
  }
  Points3 points(W, 3);
  for (Eigen::Index w = 0; w < W; ++w)
    points.row(w) = skin.rest.row(source[static_cast<std::size_t>(w)]);
  const CanonicalOrder order = canonical_order(points, welded_triangles);
  SurfaceMesh surface;
  surface.vertices.resize(W, 3);
  Eigen::MatrixXd weights(W, skin.weights.cols());
  for (Eigen::Index w = 0; w < W; ++w) {
    const auto to = static_cast<Eigen::Index>(order.vertex[static_cast<std::size_t>(w)]);
    surface.vertices.row(to) = m.scale * points.row(w);
    weights.row(to) = skin.weights.row(source[static_cast<std::size_t>(w)]);
  }
  surface.triangles.resize(T, 3);
  Triangles uv_corners(T, 3);
  std::vector<int> uv_index(static_cast<std::size_t>(skin.rest.rows()), -1);
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> uv(skin.uv.rows() > 0 ? T * 3 : 0, 2);
  int uv_count = 0;
  for (Eigen::Index t = 0; t < T; ++t) {
    const Eigen::Index from = order.triangle[static_cast<std::size_t>(t)];
    const int turn = order.turn[static_cast<std::size_t>(t)];
    for (int c = 0; c < 3; ++c) {
      const int corner = skin.triangles(from, (c + turn) % 3);  // the file's vertex
      surface.triangles(t, c) = order.vertex[static_cast<std::size_t>(welded.index[corner])];
      if (skin.uv.rows() == 0) continue;
      int& k = uv_index[static_cast<std::size_t>(corner)];
      if (k < 0) {
        k = uv_count++;
        uv.row(k) = skin.uv.row(corner);
      }
      uv_corners(t, c) = k;
    }
  }
  TetrahedralizeOptions options;
  options.max_volume = m.max_tet_volume;
  options.preserve_surface = true;
  FleshBody body;
  try {
    body.mesh = tetrahedralize_surface(surface, options);
  } catch (const IoError& e) {
    throw IoError(m.file + ": " + e.what());
  }
  // The file's surface is what gets written: TetGen keeps the input vertices first and in order,
  // so the welded triangles index the tet mesh's vertices. Their texture coordinates stay per
  // corner: the file's split vertices are where they change.
  body.surface = surface.triangles;
  if (skin.uv.rows() > 0) {
    body.surface_uv.coordinates = uv.topRows(uv_count);
    body.surface_uv.corners = uv_corners;
  }
  if (orient_outward(surface.vertices, body.surface, body.surface_uv.corners))
    spdlog::info("{}: the faces wind inward; written turned outward", m.file);
  const Eigen::MatrixXd inside =
      nearest_vertex_weights(surface.vertices, weights, body.mesh.vertices);
  std::vector<Eigen::Vector3d> joints;
  for (const auto& j : skin.joints) joints.push_back(m.scale * j);
  body.pinned = near_bones(body.mesh.vertices, joints, skin.parents, p.pin_radius);
  // Transforms in metres: the same rotation, the translation scaled.
  std::vector<std::vector<Eigen::Isometry3d>> motion = skin.motion;
  for (auto& pose : motion)
    for (auto& S : pose) S.translation() *= m.scale;
  const Points3 rest = body.mesh.vertices;
  const SkinningMethod method = p.skinning;
  body.skin = [motion, rest, inside, rate, method](double t) -> Points3 {
    const auto k = static_cast<std::size_t>(std::clamp<long long>(
        std::llround(t * rate), 0, static_cast<long long>(motion.size()) - 1));
    return method == SkinningMethod::LinearBlend
               ? linear_blend_skinning(rest, inside, motion[k])
               : dual_quaternion_skinning(rest, inside, motion[k]);
  };
  return body;
}

}  // namespace

void read_simulation_params(ConfigReader& r, FleshSimulationParams& p) {
  {
    auto b = r.child("body");
    // A body from 1 mm to 100 m, bones of 1 mm or more: a radius of 1e-320 m passed "> 0" and
    // stopped in an internal check of a tet's volume, bones of 1e-200 m left a system that
    // could not be factorised, neither naming the key.
    b.get("radius", p.radius, in_range(1e-3, 100.0));
    b.get("rings", p.rings, at_least(1));
    b.get("segments", p.segments, at_least(3));
    b.get("layers", p.layers, at_least(1));
    // At most 1e6 vertices: 31,735 took 238 MB and 6 s a frame (both passes) here, so 1e6 is
    // about 10 GB and hours a frame; rings of 1e5 by mistake ran out of memory naming nothing.
    if (const double n = (1.0 + static_cast<double>(p.rings) * p.segments) * (p.layers + 1.0);
        n > 1e6)
      b.fail_together({"rings", "segments", "layers"},
                      "at most 1e6 vertices, (1 + rings segments) (layers + 1) = (1 + " +
                          std::to_string(p.rings) + " x " + std::to_string(p.segments) + ") x " +
                          std::to_string(p.layers + 1) + " = " + app::number_text(n));
    b.get("pin_radius", p.pin_radius, non_negative());
  }
  {
    auto c = r.child("bones");
    // Bones from 1 mm to 100 m, frame rates from 1 to 10,000 fps: 1e308 m bones and 1e-300 fps
    // reached internal checks of the solver instead of naming the key.
    c.get("lengths", p.chain.lengths, in_range(1e-3, 100.0));
    if (p.chain.lengths.empty()) c.fail("lengths", "a list of at least one bone length >= 0.001");
    c.get("blend_width", p.chain.blend_width, positive());
    c.get_enum("skinning", p.skinning,
               {{"linear", SkinningMethod::LinearBlend},
                {"dual_quaternion", SkinningMethod::DualQuaternion}});
  }
  {
    auto m = r.child("motion");
    m.get_enum("kind", p.motion.kind,
               {{"swing", std::string("swing")},
                {"bounce", std::string("bounce")},
                {"twist", std::string("twist")},
                {"shake", std::string("shake")},
                {"bvh", std::string("bvh")},
                {"skin", std::string("skin")}});
    m.get("amplitude", p.motion.amplitude, non_negative());
    m.get("frequency", p.motion.frequency, positive());
    m.get("frames", p.frames, at_least(3));
    m.get("frame_rate", p.frame_rate, in_range(1.0, 1e4));
  }
  {
    auto s = r.child("solver");
    // As for sm-example-sim: 1000 steps a frame is far finer than backward Euler needs here, and
    // 2e9 would run for days instead of naming the key.
    s.get("substeps", p.substeps, in_range(1, 1000));
    s.get("iterations", p.iterations, at_least(1));
    s.get("quasistatic_iterations", p.quasistatic_iterations, at_least(1));
    s.get("dynamic", p.dynamic);
  }
  {
    auto m = r.child("material");
    m.get_enum("model", p.model,
               {{"corotated", ElasticModel::Corotated}, {"neo_hookean", ElasticModel::NeoHookean}});
    // From softer than any gel (gelatine is about 1e3 Pa) to beyond diamond (about 1.1e12 Pa):
    // 1e-300 passed and the solve failed naming the simulation, not the key.
    m.get("youngs_modulus", p.youngs_modulus, in_range(1.0, 2e12));
    app::Range nu{0.0, 0.5, false, true};
    m.get("poisson_ratio", p.poisson_ratio, nu);
    // From air (1.2 kg/m^3) to beyond osmium (22,590 kg/m^3).
    m.get("density", p.density, in_range(1.0, 1e5));
    m.get("gravity", p.gravity);
  }
}

void read_simulate_config(ConfigReader& r, SimulateConfig& c) {
  read_simulation_params(r, c.sim);
  c.origin = r.origins();
  auto m = r.child("motion");
  m.get_input_file("file", c.motion_file.file);
  m.get("root", c.motion_file.root);
  m.get("joints", c.motion_file.joints);
  m.get("scale", c.motion_file.scale, positive());
  m.get("start", c.motion_file.start, non_negative());
  auto b = r.child("body");
  b.get_input_file("mesh", c.mesh.file);
  b.get("scale", c.mesh.scale, positive());
  b.get("max_tet_volume", c.mesh.max_tet_volume, non_negative());
  const FleshSimulationParams& p = c.sim;
  if (c.sim.motion.kind == "skin" && c.mesh.file.empty())
    b.fail("mesh", "a rigged mesh file (glTF, FBX, Collada, ...) for motion.kind \"skin\"",
           {m.dotted("kind")});
  if (!c.mesh.file.empty() && c.sim.motion.kind != "skin")
    m.fail("kind", "\"skin\" with body.mesh (the mesh moves by its own animation)",
           {b.dotted("mesh")});
  if (c.mesh.file.empty()) {
    if (p.pin_radius >= p.radius)
      b.fail("pin_radius", "a number < body.radius", {b.dotted("radius")});
    // Pinning only the centre line would leave a zero-energy mode: the body spins freely about
    // it (a rigid rotation about the pinned line costs no corotated energy).
    const double first_ring = p.radius / p.rings;
    if (p.pin_radius + 1e-12 < first_ring)
      b.fail("pin_radius",
             "a number >= body.radius / body.rings = " + std::to_string(first_ring) +
                 " m (the innermost ring: the axis alone lets the body spin about it)",
             {b.dotted("radius"), b.dotted("rings")});
  }
  if (!c.motion_file.file.empty() && c.sim.motion.kind != "bvh")
    m.fail("kind", "\"bvh\" with motion.file (the chain moves by the capture)", {m.dotted("file")});
  if (c.sim.motion.kind == "bvh") {
    if (c.motion_file.file.empty())
      m.fail("file", "a motion file (BVH) for kind \"bvh\"", {m.dotted("kind")});
    if (c.motion_file.joints.size() != c.sim.chain.lengths.size())
      m.fail("joints",
             "one joint name per bone (" + std::to_string(c.sim.chain.lengths.size()) +
                 ", as bones.lengths)",
             {"bones.lengths", m.dotted("kind")});
  }
}

void read_fit_config(ConfigReader& r, FitConfig& c) {
  auto f = r.child("fit");
  // Beyond 1e12 (a natural frequency of 1e6 rad/s) a spring is rigid at any frame rate, and
  // the search's samples in log space overflowed to a non-finite spring from about 1e200.
  const app::Range spring_range{0.0, 1e12, true, false};
  f.get("ks_min", c.fit.ks_min, spring_range);
  f.get("ks_max", c.fit.ks_max, spring_range);
  f.get("kd_min", c.fit.kd_min, spring_range);
  f.get("kd_max", c.fit.kd_max, spring_range);
  if (!(c.fit.ks_max > c.fit.ks_min)) f.fail_order("ks_min", "ks_max");
  if (!(c.fit.kd_max > c.fit.kd_min)) f.fail_order("kd_min", "kd_max");
  // The search is over two numbers (ln ks, ln kd): 1000 random starts already put about 32 on
  // each axis of the box, and a larger population only multiplies the time per vertex (a
  // population of 2e9 ran out of memory instead of naming the key).
  f.get("population", c.fit.population, in_range(2, 1000));
  // The mutation scale, 0.15 x 0.6^g of the box, is below 1e-14 of it after 60 generations;
  // past that only the elites are blended, which the descent that follows does better (2e9
  // generations ran for hours before SIGTERM's watchdog ended them).
  f.get("generations", c.fit.generations, in_range(0, 60));
  f.get("seed", c.fit.seed);
  f.get("iterations", c.fit.iterations, at_least(0));
  f.get("reject_mads", c.fit.reject_mads, non_negative());
  f.get("shared_regions", c.shared_regions);
  {
    std::vector<bool> seen;
    for (const auto& region : c.shared_regions) {
      if (region.empty()) f.fail("shared_regions", "lists of one or more vertex ids");
      for (const std::int64_t v : region) {
        if (v < 0) f.fail("shared_regions", "vertex ids >= 0");
        if (static_cast<std::size_t>(v) >= seen.size())
          seen.resize(static_cast<std::size_t>(v) + 1);
        if (seen[static_cast<std::size_t>(v)])
          f.fail("shared_regions",
                 "each vertex in one region at most (" + std::to_string(v) + " is listed twice)");
        seen[static_cast<std::size_t>(v)] = true;
      }
    }
  }
  f.get("rigid_tolerance", c.rigid_tolerance, non_negative());
  c.origin = r.origins();
  r.get("target_sequence", c.target_sequence);
  r.get("truth_sequence", c.truth_sequence);
  r.get("teleport_distance", c.teleport_distance, non_negative());
  r.get_output_file("report", c.report);
}

void read_apply_config(ConfigReader& r, ApplyConfig& c) {
  r.get("target_sequence", c.target_sequence);
  r.get("output_sequence", c.output_sequence);
  // Checked here, not when the cache is written after the work.
  if (c.output_sequence.empty() || c.output_sequence.find('/') != std::string::npos ||
      c.output_sequence == "." || c.output_sequence == "..")
    r.fail("output_sequence", "a sequence name (not empty, \".\" or \"..\", without '/')");
  r.get("truth_sequence", c.truth_sequence);
  r.get("subframes", c.subframes, in_range(1, 64));
  r.get("reset_frames", c.reset_frames);
  r.get("teleport_distance", c.teleport_distance, non_negative());
  r.get("amount", c.amount, in_range(0.0, 100.0));
  r.get("stiffness_scale", c.stiffness_scale, in_range(1e-6, 1e6));
  r.get("damping_scale", c.damping_scale, in_range(0.0, 1e6));
  r.get_output_file("report", c.report);
}

void run_simulate(app::Context& ctx) {
  const auto c = ctx.config<SimulateConfig>(read_simulate_config);
  FleshSimulationParams p = c.sim;
  if (p.motion.kind == "bvh") {
    try {
      p.motion =
          load_chain_motion(c.motion_file.file, c.motion_file.root, c.motion_file.joints,
                            c.motion_file.scale, c.motion_file.start, p.frame_rate, p.frames);
    } catch (const MissingJoint& e) {
      // A name in the config, not damage in the file: the key, and the names there are.
      std::string names;
      for (std::size_t k = 0; k < e.names.size() && k < 60; ++k)
        names += (k ? ", " : "") + e.names[k];
      if (e.names.size() > 60) names += ", ... (" + std::to_string(e.names.size()) + " in all)";
      const bool root = e.joint < 0;
      const std::string& name =
          root ? c.motion_file.root : c.motion_file.joints[static_cast<std::size_t>(e.joint)];
      throw ConfigError(c.origin({root ? "motion.root" : "motion.joints", "motion.file"}),
                        root ? "/motion/root" : "/motion/joints/" + std::to_string(e.joint),
                        "a joint of " + c.motion_file.file + "'s skeleton: " + names,
                        "\"" + name + "\"");
    }
  }
  const auto out = ctx.output();
  // Built before a dry run too: it checks the mesh and the pins, and counts what is written.
  const FleshBody body =
      c.mesh.file.empty() ? cylinder_body(p) : skinned_mesh_body(c.mesh, p, c.motion_file.start);
  if (ctx.dry_run()) {
    // Each written sequence (skinned, quasistatic, dynamic) stores every frame's surface
    // positions, float32.
    const std::uintmax_t bytes = static_cast<std::uintmax_t>(p.dynamic ? 3 : 2) *
                                 static_cast<std::uintmax_t>(p.frames) *
                                 body_surface(body).vertices.size() * 3 * sizeof(float);
    std::printf(
        "would simulate %d frames of a \"%s\" motion (%s) and write %s (%s of frame arrays "
        "before compression)\n",
        p.frames, p.motion.kind.c_str(), p.dynamic ? "targets and ground truth" : "targets only",
        out.c_str(), app::byte_text(bytes).c_str());
    return;
  }
  // Every frame is solved twice: its quasistatic target, then (after all targets) its dynamic
  // state.
  spdlog::info("{} frames: the quasistatic targets first, then the dynamic state", p.frames);
  app::Progress progress("frame solve", 2 * static_cast<std::size_t>(p.frames));
  const auto tick = [&](std::size_t done, std::size_t) {
    if (done > progress.done()) progress.tick(done - progress.done());
  };
  const auto r = simulate_body(body, p, tick);
  progress.finish();
  spdlog::info("simulated {} tet vertices, {} tets, {} pinned; {} surface vertices", r.tet_vertices,
               r.tets, r.pinned, r.rest.rows());
  io::CacheWriter w(out, ctx.provenance());
  const io::Attributes attrs = {{"motion", c.sim.motion.kind},
                                {"amplitude", p.motion.amplitude},
                                {"frequency", p.motion.frequency}};
  write_points_sequence(w, "skinned", p.frame_rate, r.skinned, r.times, r.rest, r.triangles, r.uv,
                        attrs);
  write_points_sequence(w, "quasistatic", p.frame_rate, r.quasistatic, r.times, r.rest, r.triangles,
                        r.uv, attrs);
  if (p.dynamic)
    write_points_sequence(w, "dynamic", p.frame_rate, r.dynamic, r.times, r.rest, r.triangles, r.uv,
                          attrs);
  w.commit();
}

namespace {

/// The fit's training sequences: each input's, cut where the target jumps (a cut would read as a
/// huge velocity: each side is a sequence of its own, started at rest on the target as apply
/// restarts it there). `parts` holds the frames of the pieces cut out.
struct CutSequences {
  std::deque<std::vector<Points3>> parts;  // target and truth frames of each part (stable)
  std::vector<FitSequence> seqs;
  std::vector<const std::int64_t*> first_number;  // of each sequence fitted: its frame numbers
};
CutSequences cut_at_teleports(const FitConfig& c, const std::vector<std::filesystem::path>& inputs,
                              const std::vector<LoadedSequence>& targets,
                              const std::vector<LoadedSequence>& truths) {
  CutSequences cut;
  for (std::size_t s = 0; s < targets.size(); ++s) {
    const std::string name = inputs[s].filename().string();
    const double dt = 1.0 / targets[s].frame_rate;
    std::vector<std::size_t> cuts;
    if (c.teleport_distance > 0.0) cuts = jump_frames(targets[s].frames, c.teleport_distance);
    if (cuts.empty()) {
      cut.seqs.push_back({name, &targets[s].frames, &truths[s].frames, dt});
      cut.first_number.push_back(targets[s].numbers.data());
      continue;
    }
    const std::vector<std::int64_t>& numbers = targets[s].numbers;
    std::string listed;
    for (const std::size_t f : cuts)
      listed += (listed.empty() ? "" : ", ") + std::to_string(numbers[f]);
    spdlog::info("{}: cut at frame{} {} (a target point moved over teleport_distance {} m)", name,
                 cuts.size() > 1 ? "s" : "", listed, c.teleport_distance);
    cuts.push_back(numbers.size());
    std::size_t begin = 0;
    std::vector<std::int64_t> alone;  // frames between two cuts: no velocity to fit
    for (const std::size_t end : cuts) {
      const auto from = static_cast<std::ptrdiff_t>(begin), to = static_cast<std::ptrdiff_t>(end);
      const std::string part = name + " frames " + std::to_string(numbers[begin]) + "-" +
                               std::to_string(numbers[end - 1]);
      begin = end;
      if (to - from < 2) {
        alone.push_back(numbers[static_cast<std::size_t>(from)]);
        continue;
      }
      const auto& target =
          cut.parts.emplace_back(targets[s].frames.begin() + from, targets[s].frames.begin() + to);
      const auto& truth =
          cut.parts.emplace_back(truths[s].frames.begin() + from, truths[s].frames.begin() + to);
      cut.seqs.push_back({part, &target, &truth, dt});
      cut.first_number.push_back(numbers.data() + from);
    }
    if (!alone.empty())
      spdlog::warn("{}: {} alone between cuts, left out of the fit: {}", name,
                   app::counted(alone.size(), "frame", "frames"), frame_list_text(alone));
  }
  if (cut.seqs.empty())
    throw ConfigError(c.origin({"teleport_distance"}), "/teleport_distance",
                      "a distance that leaves two frames between cuts somewhere (every frame of "
                      "the training sequences is a cut)",
                      fmt::format("{}", c.teleport_distance));
  return cut;
}

/// The fit's parameters with its shared regions: the config's, then the vertices that stay
/// rigidly on the target (rigid_tolerance > 0). `sources` says where each came from.
struct RegionedParams {
  SpringFitParams params;
  std::vector<std::string> sources;
};
RegionedParams shared_regions(const FitConfig& c, const std::vector<FitSequence>& seqs,
                              std::size_t N) {
  RegionedParams out{c.fit, {}};
  SpringFitParams& params = out.params;
  std::vector<std::string>& region_sources = out.sources;
  std::vector<bool> in_region(N, false);
  for (const auto& region : c.shared_regions) {
    params.shared_regions.emplace_back(region.begin(), region.end());
    region_sources.push_back("explicit");
    for (const std::int64_t v : region) in_region[static_cast<std::size_t>(v)] = true;
  }
  if (c.rigid_tolerance > 0) {
    std::vector<Eigen::Index> rigid;
    for (const Eigen::Index v : rigid_vertices(seqs, c.rigid_tolerance))
      if (!in_region[static_cast<std::size_t>(v)]) rigid.push_back(v);
    spdlog::info(
        "{} of {} vertices stay within {} m of the target in every frame: one shared "
        "region",
        rigid.size(), N, c.rigid_tolerance);
    if (!rigid.empty()) {
      params.shared_regions.push_back(std::move(rigid));
      region_sources.push_back("rigid");
    }
  }
  return out;
}

/// The fit report: per sequence its errors and rejected frames (the cache's frame numbers), the
/// springs' ranges, and per shared region its springs and pooled loss. Logs the same.
json fit_report(const SpringFitResult& fit, const CutSequences& cut, const RegionedParams& regions,
                std::size_t N) {
  const std::vector<FitSequence>& seqs = cut.seqs;
  const SpringFitParams& params = regions.params;
  json report = json::object();
  report["vertices"] = N;
  report["sequences"] = json::array();
  for (std::size_t k = 0; k < fit.sequences.size(); ++k) {
    const SequenceFitReport& s = fit.sequences[k];
    spdlog::info(
        "{}: rms error {:.3e} m with the target alone, {:.3e} m with springs; {} frames "
        "rejected",
        s.name, s.rms_target, s.rms_fitted, s.rejected_frames.size());
    // Frame numbers of the cache, also for a part cut out of a sequence.
    const std::int64_t* numbers = cut.first_number[k];
    std::vector<std::int64_t> rejected;
    for (const int f : s.rejected_frames) rejected.push_back(numbers[f]);
    report["sequences"].push_back({{"name", s.name},
                                   {"frames", {numbers[0], numbers[seqs[k].target->size() - 1]}},
                                   {"loss_target_m2", s.loss_target},
                                   {"loss_fitted_m2", s.loss_fitted},
                                   {"rms_target_m", s.rms_target},
                                   {"rms_fitted_m", s.rms_fitted},
                                   {"rejected_frames", rejected}});
  }
  const Eigen::VectorXd& ks = fit.springs.ks;
  const Eigen::VectorXd& kd = fit.springs.kd;
  const Eigen::VectorXd indicator = kd.array().square() - 4.0 * ks.array();
  const auto stats = [](const Eigen::VectorXd& v) {
    return json{{"min", v.minCoeff()}, {"mean", v.mean()}, {"max", v.maxCoeff()}};
  };
  report["ks"] = stats(ks);
  report["kd"] = stats(kd);
  report["overdamped_fraction"] = double((indicator.array() > 0).count()) / double(N);
  report["shared_regions"] = json::array();
  for (std::size_t r = 0; r < params.shared_regions.size(); ++r) {
    const auto& region = params.shared_regions[r];
    double pooled = 0.0;
    for (const Eigen::Index v : region) pooled += fit.loss[v];
    spdlog::info("shared region {} ({}): {} vertices, ks {:.6g} 1/s^2, kd {:.6g} 1/s", r,
                 regions.sources[r], region.size(), ks[region.front()], kd[region.front()]);
    report["shared_regions"].push_back({{"source", regions.sources[r]},
                                        {"vertices", region.size()},
                                        {"ks", ks[region.front()]},
                                        {"kd", kd[region.front()]},
                                        {"loss_m2", pooled}});
  }
  return report;
}

/// Writes the springs and, as static vertex attributes on the rest pose, the maps of fig. 7.
void write_springs(const std::filesystem::path& out, const io::Provenance& provenance,
                   const SpringFitResult& fit, const LoadedSequence& first, std::size_t N) {
  const Eigen::VectorXd& ks = fit.springs.ks;
  const Eigen::VectorXd& kd = fit.springs.kd;
  const Eigen::VectorXd indicator = kd.array().square() - 4.0 * ks.array();
  io::CacheWriter w(out, provenance);
  w.write_array("/springs/ks", io::view(ks));
  w.write_array("/springs/kd", io::view(kd));
  w.set_attribute("/springs", "ks_unit", std::string("1/s^2"));
  w.set_attribute("/springs", "kd_unit", std::string("1/s"));
  // The maps of fig. 7 as static vertex attributes on the rest pose.
  {
    const Points3 rest =
        first.rest.rows() == static_cast<Eigen::Index>(N) ? first.rest : first.frames[0];
    auto& s = w.add_sequence("springs", {first.frame_rate, 3});
    s.write_static("rest/position", io::view(rest));
    if (first.triangles.rows() > 0) s.write_static("topology/triangles", io::view(first.triangles));
    io::write_face_uv(s, first.uv);
    s.write_static("points/ks", io::view(ks));
    s.write_static("points/kd", io::view(kd));
    s.write_static("points/kd2_minus_4ks", io::view(indicator));
    s.append_frame(1, 0.0, {{"points/position", io::view(rest)}});
  }
  w.commit();
}

}  // namespace

void run_fit(app::Context& ctx) {
  const auto c = ctx.config<FitConfig>(read_fit_config);
  const auto inputs = ctx.inputs();
  if (inputs.empty())
    throw UsageError("-i/--input: give one or more caches with sequences \"" + c.target_sequence +
                     "\" and \"" + c.truth_sequence + "\"");
  // The same cache twice counted its frames twice in the fit, without a word.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(inputs[i], inputs[j], ec) && !ec)
        throw UsageError("-i/--input: " + inputs[j].string() +
                         (inputs[i] == inputs[j]
                              ? " is given twice"
                              : " and " + inputs[i].string() + " are the same file") +
                         "; expected each training cache once (a second copy would count its "
                         "frames twice in the fit)");
    }
  const auto out = ctx.output();
  // Checked before any work: the report must not replace an input or the cache.
  const auto rp = ctx.side_output(report_path(c.report, out), out, "/report");
  io::check_writable_directory(rp);
  std::vector<LoadedSequence> targets, truths;
  for (const auto& in : inputs) {
    io::CacheReader cache(in);
    targets.push_back(load_sequence(cache, c.target_sequence, "target_sequence"));
    truths.push_back(load_sequence(cache, c.truth_sequence, "truth_sequence"));
    check_pair(targets.back(), truths.back());
    if (targets.back().frames[0].rows() != targets[0].frames[0].rows())
      throw IoError(in.string() + ": /sequences/" + c.target_sequence + ": " +
                    std::to_string(targets.back().frames[0].rows()) + " vertices, but " +
                    inputs[0].string() + " has " + std::to_string(targets[0].frames[0].rows()));
  }
  const Eigen::Index vertex_count = targets[0].frames[0].rows();
  for (std::size_t r = 0; r < c.shared_regions.size(); ++r)
    for (std::size_t k = 0; k < c.shared_regions[r].size(); ++k)
      if (c.shared_regions[r][k] >= vertex_count)
        throw ConfigError(c.origin({"fit.shared_regions"}),
                          "/fit/shared_regions/" + std::to_string(r) + "/" + std::to_string(k),
                          "a vertex id < " + std::to_string(vertex_count) +
                              " (the vertex count of " + inputs[0].string() + ")",
                          std::to_string(c.shared_regions[r][k]));
  if (ctx.dry_run()) {
    std::printf("would fit %ld springs to %s and write %s and the report %s\n",
                static_cast<long>(targets[0].frames[0].rows()),
                app::counted(targets.size(), "sequence", "sequences").c_str(), out.c_str(),
                rp.c_str());
    return;
  }
  const CutSequences cut = cut_at_teleports(c, inputs, targets, truths);
  const std::size_t N = static_cast<std::size_t>(vertex_count);
  const RegionedParams regions = shared_regions(c, cut.seqs, N);
  app::Progress progress("spring", (regions.params.reject_mads > 0 ? 2 : 1) * N);
  const auto fit = fit_springs(cut.seqs, regions.params, [&](std::size_t done, std::size_t) {
    if (done > progress.done()) progress.tick(done - progress.done());
  });
  progress.finish();
  json report = fit_report(fit, cut, regions, N);
  write_springs(out, ctx.provenance(), fit, targets[0], N);
  report["provenance"] = app::provenance_json(ctx.provenance());
  write_json(rp, report);
}

namespace {

/// Frame indices of the config's reset_frames (frame numbers of the target; `origin` names where
/// the key was set), ascending, without frame 0 (which starts at rest anyway).
std::vector<std::size_t> listed_restarts(const ApplyConfig& c, const LoadedSequence& target,
                                         const std::string& origin) {
  std::vector<std::size_t> out;
  for (const std::int64_t number : c.reset_frames) {
    const auto it = std::find(target.numbers.begin(), target.numbers.end(), number);
    if (it == target.numbers.end())
      throw ConfigError(origin, "/reset_frames",
                        "frame numbers of " + target.file + ": /sequences/" + target.name + " (" +
                            std::to_string(target.numbers.front()) + " to " +
                            std::to_string(target.numbers.back()) + ")",
                        std::to_string(number));
    out.push_back(static_cast<std::size_t>(it - target.numbers.begin()));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (!out.empty() && out.front() == 0) out.erase(out.begin());
  return out;
}

/// The target's frames read in order, holding only the last four (an interval's cubic needs the
/// frames n - 1 to n + 2), so apply's memory does not grow with the animation's length. Marks
/// where a clip starts: frame 0, the listed restarts, and (teleport_distance > 0) every frame
/// at which some point moved farther than that since the frame before, found as it is read.
class TargetFrames {
 public:
  TargetFrames(const io::SequenceReader& s, const LoadedSequence& header,
               const std::vector<std::size_t>& listed, double teleport_distance)
      : s_(s), header_(header), teleport_(teleport_distance), starts_(header.numbers.size(), 0) {
    starts_[0] = 1;
    for (const std::size_t f : listed) starts_[f] = 1;
  }
  std::size_t size() const { return starts_.size(); }
  /// Frame f; reads on to it. @pre f is one of the last four frames read, or later.
  const Points3& at(std::size_t f) {
    while (read_ <= f) {
      Points3& slot = ring_[read_ % ring_.size()];
      Points3 p = read_position_frame(s_, header_, read_);
      if (teleport_ > 0.0 && read_ > 0) {
        const double moved = largest_move(ring_[(read_ - 1) % ring_.size()], p);
        if (moved > teleport_ && !starts_[read_]) {
          starts_[read_] = 1;
          spdlog::debug(
              "frame {}: a target point moved {:.4g} m since frame {} (teleport_distance {:.4g} "
              "m); the springs restart at rest there",
              header_.numbers[read_], moved, header_.numbers[read_ - 1], teleport_);
        }
      }
      slot = std::move(p);
      ++read_;
    }
    DATADYN_CHECK(f + ring_.size() >= read_);
    return ring_[f % ring_.size()];
  }
  /// Whether a clip starts at frame f. @pre f has been read.
  bool starts(std::size_t f) const {
    DATADYN_CHECK_LT(f, read_);
    return starts_[f] != 0;
  }
  /// The clip starts after frame 0, ascending. @pre every frame has been read.
  std::vector<std::size_t> restarts() const {
    DATADYN_CHECK_EQ(read_, size());
    std::vector<std::size_t> out;
    for (std::size_t f = 1; f < size(); ++f)
      if (starts_[f]) out.push_back(f);
    return out;
  }

 private:
  const io::SequenceReader& s_;
  const LoadedSequence& header_;
  double teleport_;
  std::vector<char> starts_;
  std::array<Points3, 4> ring_;
  std::size_t read_ = 0;
};

/// The largest ks (1/s^2) and kd (1/s) a springs cache may hold: fit's bound (fit.ks_max,
/// fit.kd_max), rigid at any frame rate. 1e300 overflowed the integration, and the run stopped
/// at a non-finite output frame, naming the output instead of the springs.
constexpr double kMaxSpring = 1e12;

/// /springs/<name> of a springs cache ("ks" or "kd"), checked before it is read: a float64 [N]
/// dataset, one value per vertex of the animation `animation` (file and sequence, for the
/// message), each in [0, kMaxSpring]. IoError naming the file and dataset otherwise.
Eigen::VectorXd read_spring_constants(const io::CacheReader& cache, const std::string& name,
                                      Eigen::Index N, const std::string& animation) {
  const std::string file = cache.path().string(), dataset = "/springs/" + name;
  if (!cache.exists(dataset))
    throw IoError(file + ": " + dataset +
                  ": no such dataset; a springs cache from `spring-fit fit` holds /springs/ks "
                  "and /springs/kd, float64 [N] with one spring per vertex");
  const io::Shape shape = cache.shape(dataset);  // a group or a string is refused here
  if (shape.size() != 1)
    throw IoError(file + ": " + dataset + ": expected float64 [N], one spring per vertex, got " +
                  io::shape_string(shape));
  if (static_cast<Eigen::Index>(shape[0]) != N)
    throw IoError(file + ": " + dataset + ": " + std::to_string(shape[0]) + " springs, but " +
                  animation + " has " + std::to_string(N) + " vertices");
  const auto values = cache.read_array<double>(dataset);
  for (std::size_t v = 0; v < values.data.size(); ++v)
    if (!(values.data[v] >= 0.0 && values.data[v] <= kMaxSpring))
      throw IoError(file + ": " + dataset + ": vertex " + std::to_string(v) + " has " +
                    app::number_text(values.data[v]) + ", expected a number in [0, 1e12] " +
                    (name == "ks" ? "1/s^2" : "1/s") + " (what `spring-fit fit` writes)");
  return Eigen::Map<const Eigen::VectorXd>(values.data.data(), N);
}

/// The springs of a springs cache for an animation of N vertices (`animation` names it), each
/// dataset checked (read_spring_constants).
Springs read_springs(const io::CacheReader& cache, Eigen::Index N, const std::string& animation) {
  Springs springs;
  springs.ks = read_spring_constants(cache, "ks", N, animation);
  springs.kd = read_spring_constants(cache, "kd", N, animation);
  return springs;
}

/// The frame numbers of frame indices (ascending).
std::vector<std::int64_t> frame_numbers(const LoadedSequence& seq,
                                        const std::vector<std::size_t>& frames) {
  std::vector<std::int64_t> numbers;
  for (const std::size_t f : frames) numbers.push_back(seq.numbers[f]);
  return numbers;
}

}  // namespace

void run_apply(app::Context& ctx) {
  const auto c = ctx.config<ApplyConfig>(read_apply_config);
  // A third cache was opened and refused only as a second of its kind, or not at all.
  if (ctx.inputs().size() > 2)
    throw UsageError(
        "-i/--input: apply reads two caches, an animation and a springs cache (from "
        "`spring-fit fit`), got " +
        std::to_string(ctx.inputs().size()) + " files");
  std::optional<std::filesystem::path> springs_file, anim_file;
  for (const auto& in : ctx.inputs()) {
    io::CacheReader cache(in);
    // By its group: a springs cache without /springs/ks was taken for an animation, and its
    // missing sequence named instead.
    const bool springs = cache.exists("/springs");
    // An animation cache without the sequence the config names: said as fit says it, naming the
    // key (it said "neither an animation cache nor a springs cache").
    if (!springs && !cache.sequence_names().empty())
      require_sequence(cache, c.target_sequence, "target_sequence");
    // A file of neither kind (a cloth model, a wave's features) was called an animation cache.
    if (!springs && !cache.exists("/sequences/" + c.target_sequence))
      throw IoError(in.string() + ": neither an animation cache (no /sequences/" +
                    c.target_sequence +
                    ") nor a springs cache (no /springs/ks); it was written by " +
                    cache.provenance().generator);
    auto& slot = springs ? springs_file : anim_file;
    if (slot)  // the later file used to win silently
      throw UsageError("-i/--input: " + slot->string() + " and " + in.string() + " are both " +
                       (springs ? "springs caches" : "animation caches") +
                       "; apply takes one animation and one springs cache");
    slot = in;
  }
  if (!springs_file || !anim_file)
    throw UsageError("-i/--input: give an animation cache (sequence \"" + c.target_sequence +
                     "\") and a springs cache (/springs/ks, from `spring-fit fit`)");
  const auto out = ctx.output();
  const auto rp = ctx.side_output(report_path(c.report, out), out, "/report");
  if (!c.truth_sequence.empty()) io::check_writable_directory(rp);
  io::CacheReader anim(*anim_file), springs_cache(*springs_file);
  require_sequence(anim, c.target_sequence, "target_sequence");
  const io::SequenceReader target_reader = anim.sequence(c.target_sequence);
  const LoadedSequence target = sequence_header(anim, target_reader, c.target_sequence);
  const Eigen::Index N = target.points;
  Springs springs =
      read_springs(springs_cache, N, anim_file->string() + ": /sequences/" + c.target_sequence);
  // The same vertex count is not the same mesh: a re-export with its vertices in another order
  // got every vertex another's spring, silently. The faces the springs were fitted on must be
  // the animation's (a moved or re-posed character keeps them).
  const auto same_faces = [&] {
    const Triangles fitted = springs_cache.sequence("springs").topology("triangles");
    return fitted.rows() == target.triangles.rows() && fitted == target.triangles;
  };
  if (springs_cache.exists("/sequences/springs/topology/triangles") &&
      target.triangles.rows() > 0 && !same_faces())
    throw IoError(springs_file->string() +
                  ": /sequences/springs/topology/triangles: the springs "
                  "were fitted on a mesh with other faces than " +
                  anim_file->string() + ": /sequences/" + c.target_sequence +
                  " (same vertex count, another vertex order or mesh); expected the mesh they "
                  "were fitted on");
  springs.ks *= c.stiffness_scale;
  springs.kd *= c.damping_scale;
  SpringApplyOptions opt;
  opt.subframes = c.subframes;
  opt.amount = c.amount;
  const auto listed = listed_restarts(c, target, ctx.config_origin("reset_frames"));
  // The ground truth, if the animation has one, is checked against the target before anything
  // is written (its frames as they are compared).
  std::optional<LoadedSequence> truth;
  std::optional<io::SequenceReader> truth_reader;
  const auto names = anim.sequence_names();  // by value: one vector for both iterators
  if (!c.truth_sequence.empty() &&
      std::find(names.begin(), names.end(), c.truth_sequence) != names.end()) {
    truth_reader.emplace(anim.sequence(c.truth_sequence));
    truth = sequence_header(anim, *truth_reader, c.truth_sequence);
    check_pair(target, *truth);
    read_position_frame(*truth_reader, *truth, 0);  // checked; the loop compares from frame 1
  }
  TargetFrames frames(target_reader, target, listed, c.teleport_distance);
  const std::size_t F = frames.size(), S = static_cast<std::size_t>(c.subframes);
  if (ctx.dry_run()) {
    // Reads every frame (checked, and the teleports found) but integrates nothing.
    for (std::size_t f = 0; f < F; ++f) {
      frames.at(f);
      if (truth) read_position_frame(*truth_reader, *truth, f);
    }
    const std::string restarts = frame_list_text(frame_numbers(target, frames.restarts()));
    // Each output frame stores N float32 positions; deflate saves little on them (~15 %).
    const auto bytes = static_cast<std::uintmax_t>((F - 1) * S + 1) *
                       static_cast<std::uintmax_t>(N) * 3 * sizeof(float);
    std::printf(
        "would apply %ld springs to %zu frames (%s)%s and write %s (about %s of positions)%s\n",
        static_cast<long>(N), F, app::counted(S, "sub-frame", "sub-frames").c_str(),
        restarts.empty() ? "" : (", restarting at frame(s) " + restarts).c_str(), out.c_str(),
        app::byte_text(bytes).c_str(),
        truth ? (" and the report " + rp.string() + " (against " + c.truth_sequence + ")").c_str()
              : "");
    return;
  }
  const double dt = 1.0 / target.frame_rate;
  SpringStepper stepper(springs, dt, opt);
  std::vector<Points3> states(S);
  double e_target = 0.0, e_springs = 0.0;  // squared errors against the truth (m^2)

  io::CacheWriter w(out, ctx.provenance());
  auto& seq = w.add_sequence(c.output_sequence, {target.frame_rate * c.subframes, 3});
  seq.set_attribute("subframes", static_cast<std::int64_t>(c.subframes));
  if (target.rest.rows() == N) seq.write_static("rest/position", io::view(target.rest));
  if (target.triangles.rows() > 0)
    seq.write_static("topology/triangles", io::view(target.triangles));
  io::write_face_uv(seq, target.uv);
  const auto append = [&](std::size_t k, const Points3& p) {  // output frame k, from 0
    seq.append_frame(static_cast<std::int64_t>(k) + 1, target.times[0] + dt * double(k) / double(S),
                     {{"points/position", io::view(p)}});
  };
  append(0, frames.at(0));
  app::Progress progress("frame", F);
  progress.tick();
  for (std::size_t n = 0; n + 1 < F; ++n) {
    frames.at(std::min(n + 2, F - 1));  // reads on, finding a teleport at n + 1 or n + 2
    if (frames.starts(n + 1))
      stepper.cut(frames.at(n), frames.at(n + 1), states);
    else
      stepper.advance(frames.starts(n) ? nullptr : &frames.at(n - 1), frames.at(n),
                      frames.at(n + 1),
                      n + 2 < F && !frames.starts(n + 2) ? &frames.at(n + 2) : nullptr, states);
    for (std::size_t j = 0; j < S; ++j) append(n * S + j + 1, states[j]);
    if (truth) {
      const Points3 t = read_position_frame(*truth_reader, *truth, n + 1);
      e_target += (frames.at(n + 1) - t).squaredNorm();
      e_springs += (states[S - 1] - t).squaredNorm();
    }
    progress.tick();
  }
  progress.finish();
  const auto restarts = frames.restarts();
  const auto reset_numbers = frame_numbers(target, restarts);
  if (!restarts.empty()) {  // in the output's own frame numbers
    spdlog::info("the springs restarted at rest at frame(s) {}", frame_list_text(reset_numbers));
    std::vector<std::int64_t> numbers;
    for (const std::size_t f : restarts) numbers.push_back(static_cast<std::int64_t>(f * S) + 1);
    seq.set_attribute("reset_frames", numbers);
  }
  seq.finish();
  w.commit();

  // Held-out evaluation when the animation carries its own ground truth.
  if (truth) {
    const double count = double(F - 1) * double(N);
    const double rms_t = std::sqrt(e_target / count), rms_s = std::sqrt(e_springs / count);
    spdlog::info("against {}: rms error {:.3e} m with the target alone, {:.3e} m with springs",
                 c.truth_sequence, rms_t, rms_s);
    write_json(rp, {{"rms_target_m", rms_t},
                    {"rms_springs_m", rms_s},
                    {"frames", F},
                    {"vertices", N},
                    {"reset_frames", reset_numbers},
                    {"provenance", app::provenance_json(ctx.provenance())}});
  }
}

}  // namespace datadyn::flesh
