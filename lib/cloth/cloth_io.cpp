#include "cloth/cloth_io.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include <spdlog/spdlog.h>
#include <Eigen/Geometry>

#include "app/progress.hpp"
#include "cloth/colliders.hpp"
#include "cloth/mass_spring_solver.hpp"
#include "cloth/miniature.hpp"
#include "cloth/self_collision.hpp"
#include "cloth/training_pairs.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/shard.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/path_template.hpp"

namespace datadyn::cloth {
namespace {

using app::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

const std::vector<std::pair<std::string, Integrator>> kSolverNames{
    {"projective", Integrator::Projective}, {"admm", Integrator::Admm}};
const std::vector<std::pair<std::string, PinMode>> kPinNames{{"none", PinMode::None},
                                                             {"top_row", PinMode::TopRow},
                                                             {"top_corners", PinMode::TopCorners},
                                                             {"left_column", PinMode::LeftColumn}};

/// The resolved `cloth` block of one run, stored with its sequence so that train, upscale and
/// evaluate rebuild the exact parameters.
std::string cloth_json(const ClothParams& params) {
  ClothParams copy = params;
  auto reader = app::ConfigReader::from_json(json::object(), "<run>");
  read_cloth_params(reader, copy);
  return app::json_dump(reader.resolved());
}

/// The parameters of the run `seq` from its cloth_json, checked against what the sequence holds:
/// its points are the nx x ny grid, and its stored topology/quads (indices checked by the reader)
/// are that grid's cells. Every reader of a run (train, upscale's miniature, evaluate) builds
/// the grid from these parameters, so a damaged run is refused here, naming the file and object.
ClothParams params_of(const io::SequenceReader& seq, const std::string& file) {
  const auto attrs = seq.attributes();
  const auto it = attrs.find("cloth_json");
  const std::string where = file + ": /sequences/" + seq.name();
  if (it == attrs.end() || !std::holds_alternative<std::string>(it->second))
    throw IoError(where + ": no string attribute cloth_json (not written by cloth-train simulate)");
  ClothParams p;
  try {
    // The central parser: bad JSON is named by its attribute (it was the library's own text),
    // and a deep nesting is refused instead of overflowing the stack.
    auto reader = app::ConfigReader::from_json(
        app::parse_json_text(std::get<std::string>(it->second), where + "@cloth_json"),
        where + "@cloth_json");
    read_cloth_params(reader, p);
    reader.finish();
  } catch (const ConfigError& e) {
    throw IoError(e.what());
  }
  const auto grid = static_cast<std::size_t>(p.nx) * static_cast<std::size_t>(p.ny);
  if (seq.point_count() != grid)
    throw IoError(where + ": " + std::to_string(seq.point_count()) +
                  " points, but its cloth_json " + "describes a " + std::to_string(p.nx) + " x " +
                  std::to_string(p.ny) + " grid (" + std::to_string(grid) + " points)");
  if (seq.has("topology/quads") && seq.topology("quads") != grid_quads(p))
    throw IoError(where + "/topology/quads: not the cells of the " + std::to_string(p.nx) + " x " +
                  std::to_string(p.ny) + " grid its cloth_json describes (a damaged run)");
  return p;
}

/// Every frame's positions; a point that is not finite (a damaged cache) is an IoError naming
/// the file, sequence, frame and point. It used to train a network on NaN (exit 0, the initial
/// weights written) and to stop evaluate with an internal check.
std::vector<Points3> read_frames(const io::SequenceReader& seq, const std::filesystem::path& file) {
  std::vector<Points3> frames;
  frames.reserve(seq.frame_count());
  for (std::size_t f = 0; f < seq.frame_count(); ++f) {
    Points3 x = seq.positions(f);
    if (!x.allFinite()) {
      Eigen::Index bad = 0;
      while (x.row(bad).allFinite()) ++bad;
      throw IoError(file.string() + ": /sequences/" + seq.name() + "/points/position: frame " +
                    std::to_string(seq.frames()[f]) + ": point " + std::to_string(bad) +
                    " is not finite");
    }
    frames.push_back(std::move(x));
  }
  return frames;
}

/// Simulates params.frames frames (frame 0 = rest). Throws RunError naming the frame and particle
/// on divergence.
std::vector<Points3> simulate_frames(const ClothParams& params, const std::string& name,
                                     double* ms_per_frame = nullptr,
                                     const std::function<void()>& on_frame = {}) {
  MassSpringSolver sim(params);
  std::vector<Points3> frames{sim.positions()};
  if (on_frame) on_frame();
  double ms = 0.0, motion = 0.0;
  int fastest = 0;
  for (int f = 1; f < params.frames; ++f) {
    const auto t0 = Clock::now();
    const StepResult r = sim.advance_frame();
    ms += ms_since(t0);
    if (!r.ok)
      throw RunError(name + ": frame " + std::to_string(f) + ": particle " +
                     std::to_string(r.particle) + " diverged (try a smaller time_step)");
    if (r.motion > motion) {
      motion = r.motion;
      fastest = f;
    }
    frames.push_back(sim.positions());
    if (on_frame) on_frame();
  }
  // Measured on the collision scene (docs/tools/cloth-train.md, Limits): up to 1 thickness a
  // step kept its layers apart (17 x 17; 49 x 49 at 6 steps a frame), 1.5 and 2 did not.
  const double thickness = self_thickness(params);
  if (params.self_collision.enabled && motion > thickness)
    spdlog::warn(
        "{}: a particle moved {:.2f} self-collision thicknesses in one step (frame {}); layers "
        "that meet that fast can pass through each other: raise cloth.substeps",
        name, motion / thickness, fastest);
  if (ms_per_frame) *ms_per_frame = params.frames > 1 ? ms / (params.frames - 1) : 0.0;
  return frames;
}

Interpolation interpolation_of(const std::string& method) {
  if (method == "bilinear") return Interpolation::Bilinear;
  if (method == "biquadratic") return Interpolation::Biquadratic;
  return Interpolation::Bicubic;
}

/// What upscale does to a frame after the method, as the simulation does after every solve
/// (docs/tools/cloth-train.md, upscale). upscale.pins: a network's prediction or correction moves
/// the particles the target pins, so the edge the cloth hangs from drifts and jitters; they are put
/// back on their pins (a corrected miniature's own pinned particles are put back before it is
/// upsampled, so the surface next to the pins stays smooth). upscale.colliders: an upscaled surface
/// can cut through a collider its miniature only touched at its own particles, and a prediction
/// or correction can move a particle into it; the particles inside the sphere or below the ground
/// (but those put back on their pins) are moved to the surface plus the margin.
/// upscale.self_collision, for a miniature simulated with self-collision: a correction moves
/// stacked layers of the miniature differently and puts one through the other, so it is applied as
/// a motion from the simulated miniature, in steps of at most kStep thicknesses with the
/// miniature's self-collision after each, the way the simulation keeps layers apart.
class SceneConstraints {
 public:
  /// `target`: the target grid with its pins (at its rest positions) and colliders in target
  /// metres; `mini`: its miniature, with its pins and self-collision.
  SceneConstraints(const ClothParams& target, const ClothParams& mini, bool pins, bool colliders,
                   bool self_collision)
      : target_(target),
        pins_(pins),
        colliders_(colliders && (target.sphere.enabled || target.ground.enabled)),
        mini_pinned_(pinned_particles(mini)) {
    pinned_ = pinned_particles(target);  // ascending
    // Particles the colliders move: all but those put back on their pins.
    std::size_t k = 0;
    for (int i = 0; i < target.nx * target.ny; ++i)
      if (pins_ && k < pinned_.size() && pinned_[k] == i)
        ++k;
      else
        movable_.push_back(i);
    if (pins_) pin_positions_ = rest_positions(target);
    if (self_collision && mini.self_collision.enabled) mini_self_.emplace(mini, mini_pinned_);
  }

  /// A corrected miniature from the simulated one: its pinned particles back where the simulated
  /// miniature has them, and the correction applied in steps with self-collision.
  void constrain_miniature(Points3& corrected, const Points3& simulated) const {
    if (pins_)
      for (int i : mini_pinned_) corrected.row(i) = simulated.row(i);
    if (!mini_self_) return;
    const Points3 to = corrected;
    corrected = simulated;
    mini_self_->move(corrected, to, kStep, kPasses);
  }

  /// The target frame's pinned particles on their pins, the others out of the colliders.
  void operator()(Points3& x) const {
    if (pins_)
      for (int i : pinned_) x.row(i) = pin_positions_.row(i);
    if (colliders_) project_to_colliders(target_, x, movable_, nullptr);
  }

 private:
  /// Measured on the collision scene with self-collision (docs/tools/cloth-train.md): steps of
  /// 0.25, 0.5 and 1 thickness left 5.85, 8.88 and 16.72 layer crossings a frame, against 158.82.
  static constexpr double kStep = 0.5;
  static constexpr int kPasses = 8;
  ClothParams target_;
  bool pins_ = false, colliders_ = false;
  std::vector<int> pinned_, movable_, mini_pinned_;
  Points3 pin_positions_;
  std::optional<SelfCollision> mini_self_;
};

/// One target frame from miniature frames t-2, t-1, t by `method` (interpolation uses only t),
/// then its pins and colliders. A network trained on the simulated miniature corrects the
/// miniature, which is then interpolated bicubically (see correct_miniature).
Points3 upscale_frame(const Points3& m2, const Points3& m1, const Points3& m0,
                      const MiniatureGrid& grid, const std::string& method,
                      const UpscaleModel* model, const SceneConstraints& constraints) {
  Points3 x;
  if (method != "network") {
    x = interpolate_upscale(m0, grid, interpolation_of(method));
  } else {
    const PatchRegressor regressor = [&](const Eigen::MatrixXf& in) {
      return learn::predict(model->network, model->input, model->output, in);
    };
    if (model->miniature == "simulated") {
      Points3 corrected = correct_miniature(m2, m1, m0, grid, model->options, regressor);
      constraints.constrain_miniature(corrected, m0);
      x = interpolate_upscale(corrected, grid, Interpolation::Bicubic);
    } else {
      x = regressor_upscale(m2, m1, m0, grid, model->options, regressor);
    }
  }
  constraints(x);
  return x;
}

/// Target frames from miniature frames by `method`; the network uses frames t-2, t-1, t (clamped
/// to 0 at the start).
std::vector<Points3> upscale_frames(const std::vector<Points3>& mini, const MiniatureGrid& grid,
                                    const std::string& method, const UpscaleModel* model,
                                    const SceneConstraints& constraints) {
  std::vector<Points3> out;
  out.reserve(mini.size());
  for (std::size_t t = 0; t < mini.size(); ++t)
    out.push_back(upscale_frame(mini[t >= 2 ? t - 2 : 0], mini[t >= 1 ? t - 1 : 0], mini[t], grid,
                                method, model, constraints));
  return out;
}

void write_grid_sequence(io::CacheWriter& writer, const std::string& name, const ClothParams& p,
                         const std::vector<Points3>& frames, const io::Attributes& attrs,
                         const Points3& rest) {
  auto& seq = writer.add_sequence(name, {1.0 / p.time_step, 3});
  for (const auto& [k, v] : attrs) seq.set_attribute(k, v);
  seq.set_attribute("nx", std::int64_t{p.nx});
  seq.set_attribute("ny", std::int64_t{p.ny});
  seq.write_static("rest/position", io::view(rest));
  // One face per grid cell: triangles and quads in one sequence are one mixed mesh
  // (docs/cache-format.md), and storing both of the same cells doubled every face on export.
  seq.write_static("topology/quads", io::view(grid_quads(p)));
  seq.write_static("points/uv", io::view(grid_uv(p)));
  for (std::size_t f = 0; f < frames.size(); ++f)
    seq.append_frame(static_cast<std::int64_t>(f) + 1, static_cast<double>(f) * p.time_step,
                     {{"points/position", io::view(frames[f])}});
  seq.finish();  // flat memory over thousands of runs
}

/// The bytes of a grid sequence's frame arrays before compression (write_grid_sequence): its
/// float32 positions, frames x nx x ny x 3 (a --dry-run's estimate of the output's size).
std::uintmax_t grid_frame_bytes(const ClothParams& p, std::size_t frames) {
  return static_cast<std::uintmax_t>(frames) * static_cast<std::uintmax_t>(p.nx) *
         static_cast<std::uintmax_t>(p.ny) * 3 * sizeof(float);
}

std::string run_name(const std::string& scene, std::size_t k) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "_%03zu", k);
  return scene + buf;
}

/// Mean per-particle Euclidean distance over all frames (m), and the frame-particle count.
std::pair<double, double> euclidean_error(const std::vector<Points3>& a,
                                          const std::vector<Points3>& b) {
  double sum = 0.0, count = 0.0;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t f = 0; f < n; ++f) {
    sum += (a[f] - b[f]).rowwise().norm().sum();
    count += static_cast<double>(a[f].rows());
  }
  return {sum, count};
}

void write_model(io::CacheWriter& w, const UpscaleModel& m) {
  std::vector<std::int64_t> sizes(m.network.sizes().begin(), m.network.sizes().end());
  w.set_attribute("/model", "sizes", sizes);
  w.set_attribute("/model", "activation", std::string("relu"));
  w.set_attribute("/model", "loss", std::string("mse"));
  w.set_attribute("/model", "dsds_factor", std::int64_t{m.factor});
  w.set_attribute("/model", "features_local", std::int64_t{m.options.local});
  w.set_attribute("/model", "features_residual", std::int64_t{m.options.residual});
  w.set_attribute("/model", "features_history", std::int64_t{m.options.history});
  w.set_attribute("/model", "features_velocities", std::int64_t{m.options.velocities});
  w.set_attribute("/model", "train_miniature", m.miniature);
  w.set_attribute("/model", "best_epoch", std::int64_t{m.best_epoch});
  if (!m.train_sequences.empty()) w.set_attribute("/model", "train_sequences", m.train_sequences);
  if (!m.test_sequences.empty()) w.set_attribute("/model", "test_sequences", m.test_sequences);
  for (int l = 0; l < m.network.layer_count(); ++l) {
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> wt =
        m.network.weight(l);
    const Eigen::VectorXf b = m.network.bias(l);
    const std::string g = "/model/layer_" + std::to_string(l);
    w.write_array(g + "/weight", io::view(wt));
    w.write_array(g + "/bias", io::view(b));
  }
  w.write_array("/model/normalisation/input_mean", io::view(m.input.mean));
  w.write_array("/model/normalisation/input_std", io::view(m.input.std));
  w.write_array("/model/normalisation/output_mean", io::view(m.output.mean));
  w.write_array("/model/normalisation/output_std", io::view(m.output.std));
  std::vector<double> train, test;
  for (const auto& e : m.history) {
    train.push_back(e.train_loss);
    test.push_back(e.test_loss);
  }
  if (!train.empty()) {
    w.write_array("/model/history/train_loss", io::view(train));
    w.write_array("/model/history/test_loss", io::view(test));
  }
  if (m.domain)
    for (const auto& r : m.domain->ranges)
      w.set_attribute("/model/domain", r.key, std::vector<double>{r.low, r.high});
}

template <class T>
T attribute_or(const io::Attributes& a, const std::string& key, T fallback) {
  const auto it = a.find(key);
  if (it == a.end() || !std::holds_alternative<T>(it->second)) return fallback;
  return std::get<T>(it->second);
}

std::string svg_loss_curves(const std::vector<std::pair<std::string, UpscaleModel>>& models) {
  const double w = 640, h = 400, left = 70, bottom = 40, top = 20, right = 20;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::size_t epochs = 1;
  for (const auto& [name, m] : models) {
    epochs = std::max(epochs, m.history.size());
    for (const auto& e : m.history)
      for (double v : {e.train_loss, e.test_loss})
        if (std::isfinite(v) && v > 0) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
  }
  if (!(hi > 0)) lo = 1e-6, hi = 1;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi)) + (lo == hi);
  auto px = [&](double epoch) {
    return left + (w - left - right) * (epoch - 1) / std::max<double>(1, epochs - 1);
  };
  auto py = [&](double v) { return top + (h - top - bottom) * (l1 - std::log10(v)) / (l1 - l0); };
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"640\" height=\"400\" "
      "fill=\"white\"/>\n";
  for (double d = l0; d <= l1; d += 1) {
    s += "<line x1=\"" + format("%.1f", left) + "\" x2=\"" + format("%.1f", w - right) +
         "\" y1=\"" + format("%.1f", py(std::pow(10, d))) + "\" y2=\"" +
         format("%.1f", py(std::pow(10, d))) + "\" stroke=\"#ddd\"/>\n<text x=\"5\" y=\"" +
         format("%.1f", py(std::pow(10, d)) + 4) + "\">1e" + format("%.0f", d) + "</text>\n";
  }
  s += "<text x=\"" + format("%.0f", w / 2) + "\" y=\"" + format("%.0f", h - 8) +
       "\">epoch (MSE in m^2, log scale)</text>\n";
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::size_t c = 0;
  for (const auto& [name, m] : models) {
    for (int which = 0; which < 2; ++which) {
      std::string pts;
      for (const auto& e : m.history) {
        const double v = which == 0 ? e.train_loss : e.test_loss;
        if (std::isfinite(v) && v > 0) pts += format("%.1f,", px(e.epoch)) + format("%.1f ", py(v));
      }
      s += "<polyline fill=\"none\" stroke=\"" + std::string(colours[c % 6]) + "\"" +
           (which == 1 ? " stroke-dasharray=\"6,3\"" : "") + " points=\"" + pts + "\"/>\n";
    }
    s += "<text x=\"" + format("%.0f", w - 260) + "\" y=\"" + format("%.0f", top + 15 + 15.0 * c) +
         "\" fill=\"" + colours[c % 6] + "\">" + name + " (solid train, dashed test)</text>\n";
    ++c;
  }
  return s + "</svg>\n";
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  io::AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Config

/// A frame is a time step (the cache's frame rate is 1 / time_step): 1e-320 s gave an infinite
/// frame rate, refused by the cache writer after the simulation with only the output named.
const app::Range kTimeStepRange = app::in_range(1e-6, 1.0);
/// Particle spacing (m): 1e-320 made a cloth of no size, with exit 0.
const app::Range kSpacingRange = app::in_range(1e-4, 100.0);

void read_cloth_params(app::ConfigReader& r, ClothParams& p) {
  using app::at_least;
  using app::non_negative;
  using app::positive;
  r.get("nx", p.nx, at_least(2));
  r.get("ny", p.ny, at_least(2));
  r.get("spacing", p.spacing, kSpacingRange);
  r.get("origin", p.origin);
  r.get("axis_u", p.axis_u);
  r.get("axis_v", p.axis_v);
  r.get("mass", p.mass, positive());
  r.get("k_structural", p.k_structural, positive());
  r.get("k_shear", p.k_shear, non_negative());
  r.get("k_bending", p.k_bending, non_negative());
  r.get("time_step", p.time_step, kTimeStepRange);
  r.get("substeps", p.substeps, app::in_range(1, 64));
  r.get("iterations", p.iterations, at_least(1));
  r.get_enum("solver", p.solver, kSolverNames);
  r.get("damping", p.damping, app::Range{0.0, 1.0, false, true});
  r.get("frames", p.frames, at_least(1));
  r.get("gravity", p.gravity);
  r.get_enum("pins", p.pins, kPinNames);
  auto w = r.child("wind");
  w.get("velocity", p.wind.velocity);
  w.get("drag", p.wind.drag, non_negative());
  w.get("drag_tangent", p.wind.drag_tangent, non_negative());
  w.get("gust", p.wind.gust, app::unit_interval());
  w.get("gust_period", p.wind.gust_period, positive());
  auto s = r.child("sphere");
  s.get("enabled", p.sphere.enabled);
  s.get("center", p.sphere.center);
  s.get("radius", p.sphere.radius, positive());
  auto g = r.child("ground");
  g.get("enabled", p.ground.enabled);
  g.get("height", p.ground.height);
  r.get("collision_margin", p.collision_margin, non_negative());
  auto sc = r.child("self_collision");
  sc.get("enabled", p.self_collision.enabled);
  // Pairs closer than 1.5 thicknesses at rest are never tested: beyond 5 spacings, that would
  // leave the folds of a cloth of a few dozen rows untested.
  sc.get("thickness", p.self_collision.thickness, app::non_negative());
  if (p.self_collision.thickness > 5.0 * p.spacing)
    sc.fail("thickness",
            fmt::format("a number in [0, {}] (5 spacings: cloth.spacing = {} m)", 5.0 * p.spacing,
                        p.spacing),
            {r.dotted("spacing")});
  r.get("force_scale", p.force_scale, positive());
  r.get("velocity_scale", p.velocity_scale, positive());
  if (p.axis_u.norm() == 0.0) r.fail("axis_u", "a non-zero vector");
  if (p.axis_v.norm() == 0.0) r.fail("axis_v", "a non-zero vector");
  // Parallel axes put every particle on one line, coinciding rows and all.
  if (!(p.axis_u.normalized().cross(p.axis_v.normalized()).norm() > 1e-6))
    r.fail("axis_v", "a vector not parallel to axis_u", {r.dotted("axis_u")});
  // At most 1e8 particles (about 40 GB of solver state): a grid past 2^31 particles overflowed
  // the index type and crashed while the config was read.
  if (!(static_cast<double>(p.nx) * static_cast<double>(p.ny) <= 1e8))
    r.fail("ny", "a grid of at most 1e8 particles (nx x ny; nx is " + std::to_string(p.nx) + ")",
           {r.dotted("nx")});
}

void read_cloth_config(app::ConfigReader& r, ClothConfig& c) {
  using app::at_least;
  using app::positive;
  r.get("scene", c.scene);
  {
    // The preset centres the grid from its size: read nx, ny, spacing first, then the preset,
    // then the cloth block again so that its keys override the preset.
    ClothParams sized = c.cloth;
    auto first = r.child("cloth");
    read_cloth_params(first, sized);
    c.cloth.nx = sized.nx;
    c.cloth.ny = sized.ny;
    c.cloth.spacing = sized.spacing;
    if (!apply_scene_preset(c.scene, c.cloth)) {
      std::string names;
      for (const auto& n : scene_names()) names += (names.empty() ? "\"" : ", \"") + n + "\"";
      r.fail("scene", "one of " + names);
    }
    auto second = r.child("cloth");
    read_cloth_params(second, c.cloth);
    // A thickness is a request for self-collision that does nothing while it is off.
    if (c.cloth.self_collision.thickness > 0.0 && !c.cloth.self_collision.enabled)
      spdlog::warn(
          "cloth.self_collision.thickness is {} m but cloth.self_collision.enabled is false: no "
          "self-collision",
          c.cloth.self_collision.thickness);
    // A cloth that starts inside the sphere or below the ground is thrown out by the first
    // projection (a sphere larger than the cloth ended as "diverged" at frame 1), and a pinned
    // particle there can never leave.
    const ClothParams& p = c.cloth;
    const Points3 x = rest_positions(p);
    const auto particle = [&](Eigen::Index i) {
      return "particle " + std::to_string(i) + " (row " + std::to_string(i / p.nx) + ", column " +
             std::to_string(i % p.nx) + ")";
    };
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      if (p.sphere.enabled &&
          (x.row(i).transpose() - p.sphere.center).norm() < p.sphere.radius + p.collision_margin)
        second.child("sphere").fail("radius",
                                    "a sphere (plus the collision margin) the cloth starts "
                                    "outside; " +
                                        particle(i) + " starts inside it",
                                    {"cloth.sphere.enabled", "cloth.sphere.center", "scene",
                                     "cloth.nx", "cloth.ny", "cloth.spacing", "cloth.origin",
                                     "cloth.axis_u", "cloth.axis_v", "cloth.collision_margin"});
      if (p.ground.enabled && x(i, 1) < p.ground.height + p.collision_margin)
        second.child("ground").fail(
            "height",
            "a ground (plus the collision margin) the cloth starts "
            "above; " +
                particle(i) + " starts below it",
            {"cloth.ground.enabled", "scene", "cloth.nx", "cloth.ny", "cloth.spacing",
             "cloth.origin", "cloth.axis_u", "cloth.axis_v", "cloth.collision_margin"});
    }
  }
  auto runs = r.child("runs");
  runs.get("mass", c.runs.mass, positive());
  runs.get("k_structural", c.runs.k_structural, positive());
  runs.get("time_step", c.runs.time_step, kTimeStepRange);
  runs.get("wind_velocity", c.runs.wind_velocity);
  if (!c.runs.wind_velocity.empty() && c.cloth.wind.drag == 0 && c.cloth.wind.drag_tangent == 0)
    runs.fail("wind_velocity",
              "no wind velocities while cloth.wind.drag and cloth.wind.drag_tangent are 0 (drags "
              "of 0 take no force from the wind, so the runs would not differ)",
              {"cloth.wind.drag", "cloth.wind.drag_tangent", "scene"});
  r.get("dsds_factor", c.dsds_factor, app::in_range(2, 4));
  c.dsds_factor_given = r.has("dsds_factor");
  if (!has_miniature(c.cloth, c.dsds_factor))
    r.fail("dsds_factor",
           "a factor that divides cloth.nx - 1 = " + std::to_string(c.cloth.nx - 1) +
               " and cloth.ny - 1 = " + std::to_string(c.cloth.ny - 1),
           {"scene", "cloth.nx", "cloth.ny"});
  r.get("simulate_miniature", c.simulate_miniature);
  auto features = r.child("features");
  features.get("local", c.features.local);
  features.get("residual", c.features.residual);
  features.get("history", c.features.history, app::in_range(1, 3));
  features.get("velocities", c.features.velocities);
  auto t = r.child("train");
  t.get("hidden", c.train.hidden, at_least(1));
  // The model stores its layer sizes in an HDF5 attribute (a few thousand numbers at most); the
  // paper's networks have 3 to 5 hidden layers (table 5).
  if (c.train.hidden.size() > 64) t.fail("hidden", "at most 64 hidden layers");
  t.get("learning_rate", c.train.adam.learning_rate, positive());
  t.get("beta1", c.train.adam.beta1, app::Range{0.0, 1.0, false, true});
  t.get("beta2", c.train.adam.beta2, app::Range{0.0, 1.0, false, true});
  t.get("batch_size", c.train.batch_size, at_least(1));
  t.get("max_epochs", c.train.max_epochs, at_least(1));
  t.get("patience", c.train.patience, at_least(0));
  t.get("min_improvement", c.train.min_improvement, app::Range{0.0, 1.0, false, true});
  std::int64_t seed = static_cast<std::int64_t>(c.train.seed);
  t.get("seed", seed, at_least(0));
  c.train.seed = static_cast<std::uint64_t>(seed);
  t.get("test_fraction", c.test_fraction, app::in_range(0.0, 0.9));
  t.get("checkpoint_every", c.train.checkpoint_every, at_least(0));
  t.get("resume", c.resume);
  t.get("miniature", c.train_miniature);
  if (c.train_miniature != "dsds" && c.train_miniature != "simulated")
    t.fail("miniature", "one of \"dsds\", \"simulated\"");
  t.get("max_departure", c.max_departure, app::in_range(0.0, 1e3));
  if (c.max_departure > 0 && c.train_miniature != "simulated")
    t.fail("max_departure",
           "0 with train.miniature \"dsds\" (the DSDS miniature is the target's, it departs "
           "from nothing)",
           {t.dotted("miniature")});
  auto u = r.child("upscale");
  u.get("method", c.upscale_method);
  if (c.upscale_method != "network" && c.upscale_method != "bilinear" &&
      c.upscale_method != "biquadratic" && c.upscale_method != "bicubic")
    u.fail("method", "one of \"network\", \"bilinear\", \"biquadratic\", \"bicubic\"");
  u.get("pins", c.upscale_pins);
  u.get("colliders", c.upscale_colliders);
  u.get("self_collision", c.upscale_self_collision);
  auto e = r.child("evaluate");
  // 0: no timings, so that the report is the same bytes on any machine and thread count.
  e.get("timing_frames", c.timing_frames, at_least(0));
}

std::vector<ClothParams> expand_runs(const ClothConfig& c) {
  auto or_base = [](const std::vector<double>& v, double base) {
    return v.empty() ? std::vector<double>{base} : v;
  };
  std::vector<Eigen::Vector3d> winds;
  for (const auto& w : c.runs.wind_velocity) winds.emplace_back(w[0], w[1], w[2]);
  if (winds.empty()) winds.push_back(c.cloth.wind.velocity);
  std::vector<ClothParams> runs;
  for (double m : or_base(c.runs.mass, c.cloth.mass))
    for (double k : or_base(c.runs.k_structural, c.cloth.k_structural))
      for (double h : or_base(c.runs.time_step, c.cloth.time_step))
        for (const Eigen::Vector3d& wind : winds) {
          ClothParams p = c.cloth;
          p.mass = m;
          const double scale = k / c.cloth.k_structural;
          p.k_structural = k;
          p.k_shear *= scale;
          p.k_bending *= scale;
          p.time_step = h;
          p.wind.velocity = wind;
          runs.push_back(p);
        }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Model file

namespace {

/// Attribute `key` of the object `where` names ("model.h5: /model"), of type T: IoError naming it
/// and what was expected when it is missing or of another type (a silent default upscaled with
/// another network than the one trained).
template <class T>
T required_attribute(const io::Attributes& a, const std::string& where, const std::string& key,
                     const std::string& expected) {
  const auto it = a.find(key);
  if (it == a.end()) throw IoError(where + "@" + key + ": missing, expected " + expected);
  if (!std::holds_alternative<T>(it->second))
    throw IoError(where + "@" + key + ": expected " + expected + ", got " +
                  io::attribute_string(it->second));
  return std::get<T>(it->second);
}

/// A flag of the model (features_local, features_residual): 0 or 1.
bool model_flag(const io::Attributes& a, const std::string& where, const std::string& key) {
  const std::string expected = "0 or 1 (" + key + " of the training)";
  const auto v = required_attribute<std::int64_t>(a, where, key, expected);
  if (v != 0 && v != 1)
    throw IoError(where + "@" + key + ": expected " + expected + ", got " + std::to_string(v));
  return v == 1;
}

}  // namespace

UpscaleModel read_model(const std::filesystem::path& path) {
  io::CacheReader r(path);
  if (!r.exists("/model"))
    throw IoError(path.string() + ": /model: missing (not written by cloth-train train)");
  const auto a = r.attributes("/model");
  const std::string where = path.string() + ": /model";
  UpscaleModel m;
  const auto activation =
      required_attribute<std::string>(a, where, "activation", "\"relu\" (the only one)");
  if (activation != "relu")
    throw IoError(where + "@activation: expected \"relu\" (the only one), got \"" + activation +
                  "\"");
  m.factor = static_cast<int>(
      required_attribute<std::int64_t>(a, where, "dsds_factor", "a DSDS factor of 2, 3 or 4"));
  if (m.factor < 2 || m.factor > 4)
    throw IoError(where + "@dsds_factor: expected a DSDS factor of 2, 3 or 4, got " +
                  std::to_string(m.factor));
  m.options.local = model_flag(a, where, "features_local");
  m.options.residual = model_flag(a, where, "features_residual");
  // Models written before table 3's inputs had the paper's: three frames, no velocities.
  if (a.count("features_history")) {
    const auto h = required_attribute<std::int64_t>(a, where, "features_history", "1, 2 or 3");
    if (h < 1 || h > 3)
      throw IoError(where + "@features_history: expected 1, 2 or 3, got " + std::to_string(h));
    m.options.history = static_cast<int>(h);
  }
  if (a.count("features_velocities"))
    m.options.velocities = model_flag(a, where, "features_velocities");
  m.miniature =
      required_attribute<std::string>(a, where, "train_miniature", "\"dsds\" or \"simulated\"");
  if (m.miniature != "dsds" && m.miniature != "simulated")
    throw IoError(where + "@train_miniature: expected \"dsds\" or \"simulated\", got \"" +
                  m.miniature + "\"");
  const auto best = required_attribute<std::int64_t>(a, where, "best_epoch", "an epoch >= 0");
  if (best < 0 || best > std::numeric_limits<int>::max())
    throw IoError(where + "@best_epoch: expected an epoch >= 0, got " + std::to_string(best));
  m.best_epoch = static_cast<int>(best);
  for (const auto& [key, list] : {std::pair{"train_sequences", &m.train_sequences},
                                  std::pair{"test_sequences", &m.test_sequences}})
    if (a.count(key))
      *list = required_attribute<std::vector<std::string>>(a, where, key, "a list of run names");
  // The sizes are checked against the stored layers before anything is allocated: sizes of
  // 36 1000000000 64 64 27 asked for 100 GB and ended "out of memory" naming no file.
  const int outputs = 3 * (m.factor + 1) * (m.factor + 1);
  const int inputs = patch_input_size(m.options);
  const std::string sizes_expected =
      "layer sizes from " + std::to_string(inputs) +
      " inputs to 3 (f+1)^2 = " + std::to_string(outputs) + " outputs (dsds_factor " +
      std::to_string(m.factor) + ", features_history " + std::to_string(m.options.history) +
      ", features_velocities " + std::to_string(int{m.options.velocities}) + ")";
  const auto sizes64 =
      required_attribute<std::vector<std::int64_t>>(a, where, "sizes", sizes_expected);
  if (sizes64.size() < 2 || sizes64.front() != inputs || sizes64.back() != outputs ||
      std::any_of(sizes64.begin(), sizes64.end(),
                  [](std::int64_t n) { return n < 1 || n > std::numeric_limits<int>::max(); }))
    throw IoError(where + "@sizes: expected " + sizes_expected + ", got " +
                  io::attribute_string(sizes64));
  const std::vector<int> sizes(sizes64.begin(), sizes64.end());
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::string g = "/model/layer_" + std::to_string(l);
    const io::Shape weight{static_cast<std::size_t>(sizes[l + 1]),
                           static_cast<std::size_t>(sizes[l])};
    const io::Shape bias{static_cast<std::size_t>(sizes[l + 1])};
    for (const auto& [dataset, expected] :
         {std::pair{g + "/weight", weight}, std::pair{g + "/bias", bias}})
      if (!r.exists(dataset))
        throw IoError(path.string() + ": " + dataset + ": missing, but /model@sizes " +
                      io::attribute_string(sizes64) + " has " + std::to_string(sizes.size() - 1) +
                      " layers");
      else if (const io::Shape got = r.shape(dataset); got != expected)
        throw IoError(path.string() + ": " + dataset + ": expected " + io::shape_string(expected) +
                      " as /model@sizes " + io::attribute_string(sizes64) + " says, got " +
                      io::shape_string(got));
  }
  if (r.exists("/model/layer_" + std::to_string(sizes.size() - 1)))
    throw IoError(path.string() + ": /model/layer_" + std::to_string(sizes.size() - 1) +
                  ": one layer more than /model@sizes " + io::attribute_string(sizes64) + " has");
  // A NaN weight passed through the ReLUs as a silently different upscaling (exit 0).
  const auto require_finite = [&](const auto& values, const std::string& dataset) {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        throw IoError(path.string() + ": " + dataset + ": element " + std::to_string(i) +
                      " is not finite (a damaged model)");
  };
  Eigen::VectorXf params(learn::Mlp<float>::parameter_count(sizes));
  Eigen::Index o = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::string g = "/model/layer_" + std::to_string(l);
    const auto w = r.read_array<float>(g + "/weight");  // shapes checked above
    const auto b = r.read_array<float>(g + "/bias");
    require_finite(w.data, g + "/weight");
    require_finite(b.data, g + "/bias");
    const Eigen::MatrixXf wm = w.matrix();  // column-major copy: the flat layout of Mlp
    params.segment(o, wm.size()) = Eigen::Map<const Eigen::VectorXf>(wm.data(), wm.size());
    o += wm.size();
    params.segment(o, sizes[l + 1]) =
        Eigen::Map<const Eigen::VectorXf>(b.data.data(), sizes[l + 1]);
    o += sizes[l + 1];
  }
  m.network = learn::Mlp<float>(sizes, params);
  auto vec = [&](const std::string& name, std::size_t n) {
    const std::string dataset = "/model/normalisation/" + name;
    const auto arr = r.read_array<double>(dataset);
    if (arr.size() != n)
      throw IoError(path.string() + ": " + dataset + ": expected " + std::to_string(n) +
                    " values, got " + io::shape_string(arr.shape));
    require_finite(arr.data, dataset);
    // Training keeps every deviation above zero (learn::Standardizer); 0 divided by zero.
    if (name.ends_with("_std"))
      for (std::size_t i = 0; i < n; ++i)
        if (!(arr.data[i] > 0.0))
          throw IoError(path.string() + ": " + dataset + ": element " + std::to_string(i) + " is " +
                        format("%g", arr.data[i]) + ", expected a deviation > 0 (a damaged model)");
    return Eigen::VectorXd(
        Eigen::Map<const Eigen::VectorXd>(arr.data.data(), static_cast<Eigen::Index>(n)));
  };
  m.input.mean = vec("input_mean", static_cast<std::size_t>(inputs));
  m.input.std = vec("input_std", static_cast<std::size_t>(inputs));
  m.output.mean = vec("output_mean", static_cast<std::size_t>(sizes.back()));
  m.output.std = vec("output_std", static_cast<std::size_t>(sizes.back()));
  if (r.exists("/model/history/train_loss")) {
    const auto tr = r.read_array<double>("/model/history/train_loss");
    const auto te = r.read_array<double>("/model/history/test_loss");
    for (std::size_t i = 0; i < tr.size() && i < te.size(); ++i)
      m.history.push_back({static_cast<int>(i) + 1, tr.data[i], te.data[i]});
  }
  if (r.exists("/model/domain")) {
    // Each quantity as [least, greatest]; keys of a later writer are left to it.
    const auto d = r.attributes("/model/domain");
    const std::string dw = path.string() + ": /model/domain";
    TrainingDomain domain;
    for (const auto& key : TrainingDomain::quantity_keys()) {
      if (!d.count(key)) continue;
      const auto v = required_attribute<std::vector<double>>(d, dw, key, "[least, greatest]");
      if (v.size() != 2 || !std::isfinite(v[0]) || !std::isfinite(v[1]) || v[0] > v[1])
        throw IoError(dw + "@" + key + ": expected [least, greatest], finite, got " +
                      io::attribute_string(v));
      domain.ranges.push_back({key, v[0], v[1]});
    }
    m.domain = std::move(domain);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Subcommands

void run_simulate(app::Context& ctx, const ClothConfig& config) {
  const auto runs = expand_runs(config);
  const auto range = shard_range(runs.size(), ctx.shard());
  const auto out = ctx.output();
  std::size_t total = 0;
  std::uintmax_t bytes = 0;
  for (std::size_t k = range.begin; k < range.end; ++k) {
    total += static_cast<std::size_t>(runs[k].frames);
    bytes += grid_frame_bytes(
        config.simulate_miniature ? miniature_params(runs[k], config.dsds_factor) : runs[k],
        static_cast<std::size_t>(runs[k].frames));
  }
  if (ctx.dry_run()) {
    std::printf(
        "would simulate %zu of %zu runs (%zu frames, %s) into %s (%s of frame arrays before "
        "compression)\n",
        range.size(), runs.size(), total, config.simulate_miniature ? "miniatures" : "targets",
        out.c_str(), app::byte_text(bytes).c_str());
    return;
  }
  io::CacheWriter writer(out, ctx.provenance());
  app::Progress progress("frame", total);
  for (std::size_t k = range.begin; k < range.end; ++k) {
    ClothParams p = runs[k];
    if (config.simulate_miniature) p = miniature_params(p, config.dsds_factor);
    const std::string name = run_name(config.scene, k);
    double ms = 0.0;
    const auto frames = simulate_frames(p, name, &ms, [&] { progress.tick(1); });
    spdlog::info("{}: {} frames, {}x{} particles, {:.2f} ms/frame ({} step{} a frame)", name,
                 frames.size(), p.nx, p.ny, ms, p.substeps, p.substeps == 1 ? "" : "s");
    io::Attributes attrs{
        {"scene", config.scene},
        {"run", static_cast<std::int64_t>(k)},
        {"mass", p.mass},
        {"k_structural", p.k_structural},
        {"time_step", p.time_step},
        {"miniature_factor", std::int64_t{config.simulate_miniature ? config.dsds_factor : 1}},
        {"cloth_json", cloth_json(p)}};
    write_grid_sequence(writer, name, p, frames, attrs, rest_positions(p));
  }
  progress.finish();
  writer.commit();
}

/// The training state of a checkpoint (learn::TrainState) under /checkpoint.
void write_train_state(io::CacheWriter& w, const learn::TrainState& s) {
  w.set_attribute("/checkpoint", "epoch", std::int64_t{s.epoch});
  w.set_attribute("/checkpoint", "adam_steps", std::int64_t{s.adam_steps});
  w.set_attribute("/checkpoint", "batch_rng", s.batch_rng);
  w.set_attribute("/checkpoint", "best_loss", s.best_loss);
  w.set_attribute("/checkpoint", "since_best", std::int64_t{s.since_best});
  w.write_array("/checkpoint/parameters", io::view(s.parameters));
  w.write_array("/checkpoint/adam_m", io::view(s.adam_m));
  w.write_array("/checkpoint/adam_v", io::view(s.adam_v));
  w.write_array("/checkpoint/order", io::view(s.order));
}

/// A checkpoint written by train, checked against the run that resumes it (same architecture,
/// features and sequences; the data then decide the rest).
learn::TrainResult read_checkpoint(const std::filesystem::path& path, const UpscaleModel& run,
                                   const std::vector<int>& sizes, Eigen::Index train_pairs) {
  const UpscaleModel m = read_model(path);
  const std::string where = path.string() + ": ";
  if (m.factor != run.factor || m.options.local != run.options.local ||
      m.options.residual != run.options.residual || m.options.history != run.options.history ||
      m.options.velocities != run.options.velocities || m.train_sequences != run.train_sequences ||
      m.test_sequences != run.test_sequences || m.network.sizes() != sizes)
    throw IoError(where +
                  "/model: written for another run (DSDS factor, features, sequences or "
                  "layer sizes); delete it or set train.resume=false");
  io::CacheReader r(path);
  if (!r.exists("/checkpoint"))
    throw IoError(where + "/checkpoint: missing (a checkpoint without the training state)");
  const auto a = r.attributes("/checkpoint");
  learn::TrainResult result;
  result.network = m.network;
  result.input = m.input;
  result.output = m.output;
  result.history = m.history;
  result.best_epoch = m.best_epoch;
  learn::TrainState& s = result.state;
  s.epoch = static_cast<int>(attribute_or<std::int64_t>(a, "epoch", -1));
  s.adam_steps = static_cast<long>(attribute_or<std::int64_t>(a, "adam_steps", -1));
  s.batch_rng = attribute_or<std::string>(a, "batch_rng", "");
  s.best_loss = attribute_or<double>(a, "best_loss", 0.0);
  s.since_best = static_cast<int>(attribute_or<std::int64_t>(a, "since_best", -1));
  if (s.epoch < 1 || s.adam_steps < 0 || s.since_best < 0 || s.batch_rng.empty() ||
      std::isnan(s.best_loss) || m.history.size() != static_cast<std::size_t>(s.epoch))
    throw IoError(where +
                  "/checkpoint: epoch, adam_steps, since_best, batch_rng, best_loss or the "
                  "loss history missing or inconsistent");
  const auto n = static_cast<std::size_t>(m.network.parameters().size());
  auto floats = [&](const std::string& name) {
    const std::string dataset = "/checkpoint/" + name;
    if (const io::Shape shape = r.shape(dataset); shape != io::Shape{n})
      throw IoError(where + dataset + ": expected " + std::to_string(n) + " values, got " +
                    io::shape_string(shape));
    const auto arr = r.read_array<float>(dataset);
    // A NaN weight or moment trained on as NaN, and the run ended "diverged" as if the training
    // had; Adam's second moments are squares.
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(arr.data[i]) || (name == "adam_v" && arr.data[i] < 0.0f))
        throw IoError(
            where + dataset + ": element " + std::to_string(i) + " is " +
            format("%g", arr.data[i]) +
            (name == "adam_v" ? ", expected a finite number >= 0" : ", expected a finite number") +
            " (a damaged checkpoint; delete it or set train.resume=false)");
    return Eigen::VectorXf(
        Eigen::Map<const Eigen::VectorXf>(arr.data.data(), static_cast<Eigen::Index>(n)));
  };
  s.parameters = floats("parameters");
  s.adam_m = floats("adam_m");
  s.adam_v = floats("adam_v");
  s.order = r.read_array<std::int64_t>("/checkpoint/order").data;
  std::vector<char> seen(static_cast<std::size_t>(train_pairs), 0);
  bool permutation = s.order.size() == seen.size();
  for (std::size_t i = 0; permutation && i < s.order.size(); ++i) {
    const std::int64_t k = s.order[i];
    permutation = k >= 0 && k < train_pairs && !seen[static_cast<std::size_t>(k)];
    if (permutation) seen[static_cast<std::size_t>(k)] = 1;
  }
  if (!permutation)
    throw IoError(where + "/checkpoint/order: not an order of this run's " +
                  std::to_string(train_pairs) + " training pairs (" +
                  std::to_string(s.order.size()) + " stored)");
  return result;
}

namespace {

/// The sequences of a cache of cloth runs; none is an error (a model file given where runs belong
/// read as an empty cache and gave NaN tables with exit 0).
std::vector<std::string> cloth_sequences(const io::CacheReader& cache,
                                         const std::filesystem::path& file,
                                         const std::string& expected) {
  // Another tool's cache (an mps-gen database) was taken for cloth runs, and its sequences
  // reported as "a target run" where a miniature belonged.
  const std::string generator = cache.provenance().generator;
  for (const char* other : {"mps-gen", "wave-edit", "sm-example-sim", "spring-fit", "mesh-export"})
    if (generator.rfind(std::string(other) + " ", 0) == 0)
      throw IoError(file.string() + ": written by " + generator + ", expected " + expected);
  auto names = cache.sequence_names();
  if (names.empty())
    throw IoError(file.string() + ": /sequences: " +
                  (cache.exists("/model") ? "none, this is a model file (cloth-train train)"
                                          : std::string("no sequences")) +
                  ", expected " + expected);
  return names;
}

/// Checks that sequence `name` of `file` is a miniature of `factor` (1: a full target run), as
/// its `miniature_factor` attribute says; a target where a miniature belongs, or the reverse,
/// upscaled to the wrong grid with exit 0.
void expect_miniature_factor(const io::SequenceReader& seq, const std::filesystem::path& file,
                             int factor) {
  const auto have = attribute_or<std::int64_t>(seq.attributes(), "miniature_factor", 1);
  if (have == factor) return;
  const auto what = [](std::int64_t k) {
    return k == 1 ? std::string("a target run") : "a miniature of factor " + std::to_string(k);
  };
  throw IoError(file.string() + ": /sequences/" + seq.name() + "@miniature_factor: " + what(have) +
                ", expected " + what(factor) +
                (factor == 1 ? " (cloth-train simulate without simulate_miniature)"
                             : " (the model's dsds_factor)"));
}

}  // namespace

/// A target run read for training: its frames, its miniature's grid, its parameters.
struct TrainingRun {
  std::string name;
  std::vector<Points3> frames;
  MiniatureGrid grid;
  ClothParams params;
};

/// The first frame (0-based) at which the miniature `mini` (miniature metres), times the factor,
/// lies on average farther than `max_departure` (target metres) from the DSDS of `target`; the
/// frame count when it never does.
std::size_t first_departure(const std::vector<Points3>& target, const std::vector<Points3>& mini,
                            const MiniatureGrid& grid, double max_departure) {
  const std::size_t n = std::min(target.size(), mini.size());
  for (std::size_t t = 0; t < n; ++t) {
    const Points3 dsds =
        downsample_downscale(target[t], grid.target_nx(), grid.target_ny(), grid.factor);
    const double departure = grid.factor * (mini[t] - dsds).rowwise().norm().mean();
    if (departure > max_departure) return t;
  }
  return n;
}

/// The target runs of the caches `inputs`, in their order, each checked to have a miniature of
/// `factor`. The same run (same frames) given twice is a UsageError; two runs of one name with
/// other frames are a warning.
std::vector<TrainingRun> read_training_runs(const std::vector<std::filesystem::path>& inputs,
                                            int factor) {
  const int f = factor;
  std::vector<TrainingRun> seqs;
  // Run name -> the file that gave it first and its index in seqs.
  std::map<std::string, std::pair<std::filesystem::path, std::size_t>> given;
  const char* const kind = "target runs (cloth-train simulate)";
  // The runs of every input, listed first for the progress line (reading hundreds of runs takes
  // a while); each file is then opened again to read its runs.
  std::vector<std::vector<std::string>> names_of;
  std::size_t total = 0;
  for (const auto& in : inputs) {
    names_of.push_back(cloth_sequences(io::CacheReader(in), in, kind));
    total += names_of.back().size();
  }
  spdlog::info("reading {}", app::counted(total, "run", "runs"));
  app::Progress progress("run", total);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    io::CacheReader cache(in);
    for (const auto& name : names_of[i]) {
      const auto seq = cache.sequence(name);
      expect_miniature_factor(seq, in, 1);
      const ClothParams p = params_of(seq, in.string());
      if (!has_miniature(p, f))
        throw IoError(in.string() + ": /sequences/" + name + ": a " + std::to_string(p.nx) + "x" +
                      std::to_string(p.ny) + " grid has no miniature of dsds_factor " +
                      std::to_string(f) + " (nx - 1 and ny - 1 must be multiples of it)");
      TrainingRun next{name, read_frames(seq, in), {(p.nx - 1) / f + 1, (p.ny - 1) / f + 1, f}, p};
      // A run given twice (a shard beside the merged cache) could land in both the training
      // and the test split, and the test loss would measure what the network has seen. Runs of
      // separate simulate calls share names (curtain_000, ...) but not their frames.
      if (const auto it = given.find(name); it != given.end()) {
        const TrainingRun& earlier = seqs[it->second.second];
        if (earlier.frames.size() == next.frames.size() &&
            std::equal(earlier.frames.begin(), earlier.frames.end(), next.frames.begin(),
                       [](const Points3& a, const Points3& b) {
                         // Eigen's == reads out of bounds on matrices of other sizes.
                         return a.rows() == b.rows() && a == b;
                       }))
          throw UsageError("-i/--input: " + it->second.first.string() + " and " + in.string() +
                           " both hold the run /sequences/" + name +
                           " (the same frames); expected each run once (a run in both splits "
                           "makes the test loss a training loss)");
        spdlog::warn(
            "{} and {} both have a run named {} (other frames): the model lists its "
            "runs by name, and evaluate cannot tell these two apart",
            it->second.first.string(), in.string(), name);
      } else {
        given.emplace(name, std::make_pair(in, seqs.size()));
      }
      seqs.push_back(std::move(next));
      progress.tick();
    }
  }
  progress.finish();
  return seqs;
}

/// The training/test split by run (sec. 5: 80 % / 20 %): a seeded shuffle of the runs' order,
/// whose last `test` runs are held out. A fraction that leaves no run to train on is a
/// ConfigError.
struct RunSplit {
  std::vector<std::size_t> order;
  std::size_t test = 0;
};
RunSplit split_runs(const app::Context& ctx, const ClothConfig& config, std::size_t runs) {
  RunSplit split;
  std::vector<std::size_t>& order = split.order;
  order.resize(runs);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(config.train.seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  std::size_t& n_test = split.test;
  n_test = static_cast<std::size_t>(std::lround(config.test_fraction * static_cast<double>(runs)));
  if (config.test_fraction > 0 && n_test == 0 && runs >= 2) n_test = 1;
  // 0.9 of 4 runs held out all four, and the run failed with "no training pairs".
  if (n_test >= runs && runs > 0) {
    char most[32];
    std::snprintf(most, sizeof most, "%.3g",
                  (static_cast<double>(runs) - 0.5) / static_cast<double>(runs));
    throw ConfigError(
        ctx.config_origin("train.test_fraction"), "/train/test_fraction",
        "a fraction that leaves a run to train on: " + app::counted(runs, "run", "runs") +
            " given, so below " + most + " (or 0 to hold none out)",
        app::json_text(config.test_fraction));
  }
  return split;
}

/// The checkpoint beside the output to resume from, checked to be of this training: the same
/// data (the normalisation of the training pairs) and the same settings but those about stopping
/// and checkpoints. IoError otherwise.
learn::TrainResult resume_from(const app::Context& ctx, const ClothConfig& config,
                               const std::filesystem::path& checkpoint_path,
                               const UpscaleModel& model, const learn::Dataset& train) {
  std::vector<int> sizes{patch_input_size(config.features)};
  sizes.insert(sizes.end(), config.train.hidden.begin(), config.train.hidden.end());
  sizes.push_back(3 * (model.factor + 1) * (model.factor + 1));
  learn::TrainResult resume = read_checkpoint(checkpoint_path, model, sizes, train.size());
  // Runs of the same names may hold other frames (another simulate): the training data's
  // normalisation, the same to the bit for the same data, tells them apart.
  const auto x = learn::Standardizer::fit(train.x), y = learn::Standardizer::fit(train.y);
  if (x.mean != resume.input.mean || x.std != resume.input.std || y.mean != resume.output.mean ||
      y.std != resume.output.std)
    throw IoError(checkpoint_path.string() +
                  ": trained on other data (runs of the same names, other frames: the "
                  "normalisation of the training pairs differs); delete it or set "
                  "train.resume=false");
  // The output's config must describe the whole training: the checkpoint's run had the same
  // settings except those about stopping and checkpoints (a different learning rate or batch
  // size was resumed silently, and the model's config_json then described neither).
  const auto comparable = [](json j) {
    if (j.contains("train"))
      for (const char* k : {"max_epochs", "checkpoint_every", "resume"}) j["train"].erase(k);
    return j;
  };
  const json was =
      comparable(app::parse_json(io::CacheReader(checkpoint_path).provenance().config_json));
  const json now = comparable(ctx.resolved_config());
  if (was.is_discarded() || was != now) {
    const json patch = was.is_discarded() ? json::array() : json::diff(was, now);
    throw IoError(
        checkpoint_path.string() + ": written with other settings (" +
        (patch.empty() ? std::string("its config_json") : patch[0]["path"].get<std::string>()) +
        " differs); delete it or set train.resume=false");
  }
  if (resume.state.epoch > config.train.max_epochs)
    throw IoError(checkpoint_path.string() + ": already at epoch " +
                  std::to_string(resume.state.epoch) +
                  ", past train.max_epochs = " + std::to_string(config.train.max_epochs));
  spdlog::info("resuming from {} after epoch {}", checkpoint_path.string(), resume.state.epoch);
  return resume;
}

void run_train(app::Context& ctx, const ClothConfig& config) {
  const auto inputs = ctx.inputs();
  if (inputs.empty()) throw UsageError("-i/--input: give the target cache(s) from simulate");
  const auto out = ctx.output();  // its directory checked before the inputs are read
  const int f = config.dsds_factor;
  std::vector<TrainingRun> seqs = read_training_runs(inputs, f);
  const RunSplit split = split_runs(ctx, config, seqs.size());
  const std::vector<std::size_t>& order = split.order;
  const std::size_t n_test = split.test;
  UpscaleModel model;
  std::vector<const ClothParams*> trained;
  for (std::size_t i = 0; i + n_test < order.size(); ++i) trained.push_back(&seqs[order[i]].params);
  if (!trained.empty()) model.domain = TrainingDomain::of(trained);
  model.factor = f;
  model.options = config.features;
  model.miniature = config.train_miniature;
  const bool simulated = config.train_miniature == "simulated";
  const std::string runs = app::counted(seqs.size(), "run", "runs");
  if (simulated)
    spdlog::info("simulating the miniatures of {} and pairing them", runs);
  else
    spdlog::info("pairing {} into training pairs", runs);
  app::Progress pairing(simulated ? "miniature" : "run", seqs.size());
  // Room for each split's pairs, one per patch and frame of its runs (max_departure only
  // shortens a run), so that each pair is held once.
  Eigen::Index capacity[2] = {0, 0};
  double frame_bytes = 0;  // the runs' frames as read, all held before the first is paired
  for (std::size_t i = 0; i < order.size(); ++i) {
    const TrainingRun& s = seqs[order[i]];
    for (const Points3& x : s.frames) frame_bytes += static_cast<double>(x.size() * sizeof(double));
    if (s.frames.size() >= 3)
      capacity[i >= order.size() - n_test] +=
          static_cast<Eigen::Index>(s.frames.size()) * s.grid.patch_count();
  }
  const MiniatureGrid grid{2, 2, f};  // the sizes of a pair, which every run of factor f shares
  const int inputs_per_pair = patch_input_size(config.features);
  cloth::PairSet sets[2] = {{inputs_per_pair, grid.output_size(), capacity[0]},
                            {inputs_per_pair, grid.output_size(), capacity[1]}};
  for (std::size_t i = 0; i < order.size(); ++i) {
    TrainingRun& s = seqs[order[i]];
    const bool is_test = i >= order.size() - n_test;
    (is_test ? model.test_sequences : model.train_sequences).push_back(s.name);
    cloth::PairSet& pairs = sets[is_test];
    if (simulated) {
      // The miniature of this run as upscale simulates it, one frame per target frame.
      ClothParams mp = miniature_params(s.params, f);
      mp.frames = static_cast<int>(s.frames.size());
      std::vector<Points3> mini = simulate_frames(mp, s.name + " (miniature)");
      std::vector<Points3> target = std::move(s.frames);
      if (config.max_departure > 0) {
        // The frames before it; at least 3, the fewest that give pairs.
        const std::size_t departs = first_departure(target, mini, s.grid, config.max_departure);
        const std::size_t kept = std::max(departs, std::min<std::size_t>(3, target.size()));
        if (kept < target.size()) {
          spdlog::info(
              "{}: pairs from frames 1-{} of {}: from frame {} the miniature departs "
              "from the target's DSDS by more than train.max_departure = {} m",
              s.name, kept, target.size(), departs + 1, config.max_departure);
          target.resize(kept);
          mini.resize(kept);
        }
      }
      pairs.append(training_pairs(target, mini, s.grid, config.features));
    } else {
      pairs.append(training_pairs(s.frames, s.grid, config.features));
    }
    std::vector<Points3>().swap(s.frames);  // its pairs hold what training needs of it
    pairing.tick();
  }
  pairing.finish();
  // Each pair is held once: a run's frames go once it is paired, and train_mlp standardises the
  // sets in place.
  auto dataset = [](cloth::PairSet&& pairs) {
    PatchPairs all = std::move(pairs).take();
    return learn::Dataset{std::move(all.x), std::move(all.y)};
  };
  learn::Dataset train = dataset(std::move(sets[0])), test = dataset(std::move(sets[1]));
  spdlog::info("{} training pairs from {}, {} test pairs from {}", train.size(),
               app::counted(model.train_sequences.size(), "sequence", "sequences"), test.size(),
               app::counted(model.test_sequences.size(), "sequence", "sequences"));
  if (train.size() == 0) throw RunError("train: no training pairs (need sequences of >= 3 frames)");
  auto to_model = [&](const learn::TrainResult& r) {
    UpscaleModel m = model;
    m.network = r.network;
    m.input = r.input;
    m.output = r.output;
    m.history = r.history;
    m.best_epoch = r.best_epoch;
    return m;
  };
  // Checkpoints: the best weights so far and the training state (/checkpoint), atomically
  // replaced, beside the output; train.resume goes on from there.
  const auto checkpoint_path = io::sidecar(out, ".checkpoint.h5");
  if (config.train.checkpoint_every > 0)
    ctx.refuse_input(checkpoint_path, "train.checkpoint_every (the checkpoint beside -o)");
  auto checkpoint = [&](const learn::TrainResult& r) {
    io::CacheWriter w(checkpoint_path, ctx.provenance());
    write_model(w, to_model(r));
    write_train_state(w, r.state);
    w.commit();
    io::commit_held_files();  // in place at once: a failed or stopped training resumes from it
  };
  std::optional<learn::TrainResult> resume;
  if (config.resume && std::filesystem::exists(checkpoint_path))
    resume = resume_from(ctx, config, checkpoint_path, model, train);
  // A dry run checks the checkpoint it would resume from, too (it did not).
  if (ctx.dry_run()) {
    std::string layers = std::to_string(patch_input_size(config.features));
    for (const int h : config.train.hidden) layers += "-" + std::to_string(h);
    // What grows with the runs, for a farm job's memory request: the pairs (float) and the frames
    // they come from (released as paired, but all read first).
    const double pair_bytes =
        static_cast<double>(train.x.size() + train.y.size() + test.x.size() + test.y.size()) *
        sizeof(float);
    std::printf(
        "would train %s-%d on %ld pairs (%ld test) into %s\n"
        "memory for the data: %.0f MB (%.0f MB of pairs, %.0f MB of frames)\n",
        layers.c_str(), 3 * (f + 1) * (f + 1), static_cast<long>(train.size()),
        static_cast<long>(test.size()), out.c_str(), (pair_bytes + frame_bytes) / 1e6,
        pair_bytes / 1e6, frame_bytes / 1e6);
    return;
  }
  // Every epoch: its line carries the losses.
  app::Progress progress("epoch", static_cast<std::size_t>(config.train.max_epochs), true);
  // A resumed training goes on counting from its checkpoint's epoch (it counted from 1 again).
  if (resume) progress.start_at(static_cast<std::size_t>(resume->state.epoch));
  auto result = learn::train_mlp(
      std::move(train), std::move(test), config.train,
      [&](const learn::EpochReport& e) {
        // Without test runs the test loss is NaN: the line says there are none.
        const std::string test_part = std::isfinite(e.test_loss)
                                          ? " test " + format("%.3e", e.test_loss) + " m^2"
                                          : " m^2 (no test runs)";
        progress.tick(1, "train " + format("%.3e", e.train_loss) + test_part);
      },
      checkpoint, resume ? &*resume : nullptr);
  progress.finish();
  // A loss that is not finite stops the training and the best epoch's weights are kept; with no
  // finite epoch at all there are none (the initial weights were written with exit 0).
  if (result.diverged_epoch > 0 && result.best_epoch == 0)
    throw RunError("train: the training diverged in epoch " +
                   std::to_string(result.diverged_epoch) +
                   " (its loss is not finite) before any epoch ended with a finite loss: lower "
                   "train.learning_rate (" +
                   format("%g", config.train.adam.learning_rate) + ")");
  if (result.diverged_epoch > 0)
    spdlog::warn(
        "the training diverged in epoch {} (its loss is not finite): the model keeps "
        "epoch {}",
        result.diverged_epoch, result.best_epoch);
  model = to_model(result);
  spdlog::info("best epoch {} of {}{}", result.best_epoch, result.history.size(),
               result.stopped_early ? " (stopped early on a plateau)" : "");
  io::CacheWriter writer(out, ctx.provenance());
  write_model(writer, model);
  writer.set_attribute("/model", "stopped_early", std::int64_t{result.stopped_early});
  writer.commit();
}

namespace {

/// Warns, naming the run and the model, of each quantity of `run` outside what the model's
/// training runs spanned (a model without the record is not checked).
void warn_outside_training(const std::string& name, const ClothParams& run,
                           const UpscaleModel& model, const std::filesystem::path& model_path) {
  if (!model.domain) return;
  std::string list;
  for (const auto& d : model.domain->outside(run)) {
    auto text = [&](double v) {
      return d.trained.flag ? std::string(v != 0 ? "true" : "false") : app::number_text(v);
    };
    list +=
        (list.empty() ? "" : ", ") + d.trained.key + " " + text(d.value) + " (trained " +
        (d.trained.low == d.trained.high ? text(d.trained.low)
                                         : text(d.trained.low) + " to " + text(d.trained.high)) +
        ")";
  }
  if (!list.empty())
    spdlog::warn(
        "{}: outside the runs {} was trained on: {}; the network knows only motions like "
        "those it learned (Lee et al. 2019, sec. 6, fig. 15: wind from another direction gave "
        "wrong wrinkles)",
        name, model_path.string(), list);
}

}  // namespace

void run_upscale(app::Context& ctx, const ClothConfig& config, const std::string& method_flag) {
  const std::string method = method_flag.empty() ? config.upscale_method : method_flag;
  const auto inputs = ctx.inputs();
  std::optional<UpscaleModel> model;
  std::size_t next = 0;
  if (method == "network" || (!inputs.empty() && io::CacheReader(inputs[0]).exists("/model"))) {
    if (inputs.empty()) throw UsageError("-i/--input: --method network needs the model file");
    model = read_model(inputs[0]);
    next = 1;
    // The model's factor decides; a different one asked for was recorded and ignored.
    if (config.dsds_factor_given && config.dsds_factor != model->factor)
      throw ConfigError(ctx.config_origin("dsds_factor"), "/dsds_factor",
                        "the factor of the model " + inputs[0].string() + " (" +
                            std::to_string(model->factor) + "), or no dsds_factor",
                        std::to_string(config.dsds_factor));
    // Recorded as used, so the output's stored config runs again with this model.
    ctx.record_config_value("/dsds_factor", model->factor);
  }
  const int f = model ? model->factor : config.dsds_factor;
  struct Job {
    std::string name;
    ClothParams mini;
    ClothParams target;           // its grid, pins and colliders
    bool simulate = false;        // else its miniature is read from the cache
    std::vector<Points3> frames;  // the miniature's, while the run is upscaled
    std::size_t frame_count = 0;  // of the miniature in the cache (simulate: its frames)
  };
  std::vector<Job> jobs;
  if (inputs.size() > next + 1)
    throw UsageError("-i/--input: upscale reads " +
                     std::string(model ? "the model and at most one miniature cache"
                                       : "at most one miniature cache") +
                     ", got " + std::to_string(inputs.size()) + " files");
  std::optional<io::CacheReader> mini_cache;
  // A run's miniature frames, checked: the patches index the miniature as an nx x ny grid, so
  // another point count (an empty sequence crashed the upscaling) or a non-finite position is
  // refused.
  auto read_miniature = [&](const Job& job) {
    const std::filesystem::path& file = inputs[next];
    std::vector<Points3> frames = read_frames(mini_cache->sequence(job.name), file);
    const Eigen::Index expected = static_cast<Eigen::Index>(job.mini.nx) * job.mini.ny;
    for (std::size_t t = 0; t < frames.size(); ++t)
      if (frames[t].rows() != expected)
        throw IoError(file.string() + ": /sequences/" + job.name + "/positions: frame " +
                      std::to_string(t + 1) + " has " + std::to_string(frames[t].rows()) +
                      " points, expected the miniature's " + std::to_string(job.mini.nx) + " x " +
                      std::to_string(job.mini.ny));
    if (frames.empty()) throw IoError(file.string() + ": /sequences/" + job.name + ": no frames");
    return frames;
  };
  if (next < inputs.size()) {  // a miniature cache
    mini_cache.emplace(inputs[next]);
    // A shard takes its part of the runs, as it does when it simulates them.
    const auto names =
        cloth_sequences(*mini_cache, inputs[next], "miniature runs (cloth-train simulate)");
    const auto range = shard_range(names.size(), ctx.shard());
    for (std::size_t k = range.begin; k < range.end; ++k) {
      const auto seq = mini_cache->sequence(names[k]);
      expect_miniature_factor(seq, inputs[next], f);
      Job job{names[k], params_of(seq, inputs[next].string()), {}, false, {}};
      job.target = target_of_miniature(job.mini, f);
      // Every run is checked before the first is upscaled, so a bad run late in the cache fails
      // at once; its frames are read again when it is upscaled. Holding every run's frames from
      // here on grew with the cache (about 1 MB a run for a 33 x 33 curtain of 30 frames).
      job.frame_count = read_miniature(job).size();
      jobs.push_back(std::move(job));
    }
  } else {
    const auto runs = expand_runs(config);
    const auto range = shard_range(runs.size(), ctx.shard());
    for (std::size_t k = range.begin; k < range.end; ++k) {
      if (!has_miniature(runs[k], f))
        throw ConfigError(ctx.config_origins()({"scene", "cloth.nx", "cloth.ny"}), "/cloth/nx",
                          "nx - 1 and ny - 1 divisible by the model's factor " + std::to_string(f),
                          std::to_string(runs[k].nx) + " x " + std::to_string(runs[k].ny));
      jobs.push_back({run_name(config.scene, k),
                      miniature_params(runs[k], f),
                      runs[k],
                      true,
                      {},
                      static_cast<std::size_t>(runs[k].frames)});
    }
  }
  if (model)
    for (const auto& job : jobs) warn_outside_training(job.name, job.target, *model, inputs[0]);
  const auto out = ctx.output();
  if (ctx.dry_run()) {
    std::uintmax_t bytes = 0;
    for (const auto& job : jobs) bytes += grid_frame_bytes(job.target, job.frame_count);
    std::printf(
        "would upscale %s by %s (factor %d) into %s (%s of frame arrays before "
        "compression)\n",
        app::counted(jobs.size(), "sequence", "sequences").c_str(), method.c_str(), f, out.c_str(),
        app::byte_text(bytes).c_str());
    return;
  }
  io::CacheWriter writer(out, ctx.provenance());
  for (auto& job : jobs) {
    const MiniatureGrid grid{job.mini.nx, job.mini.ny, f};
    const SceneConstraints constraints(job.target, job.mini, config.upscale_pins,
                                       config.upscale_colliders, config.upscale_self_collision);
    const bool simulate = job.simulate;
    if (!simulate) job.frames = read_miniature(job);
    const auto frames = static_cast<std::size_t>(simulate ? job.mini.frames : job.frames.size());
    app::Progress progress("frame", frames);
    const auto t0 = Clock::now();
    std::vector<Points3> target(frames);
    auto upscale_at = [&](std::size_t t) {
      return upscale_frame(job.frames[t >= 2 ? t - 2 : 0], job.frames[t >= 1 ? t - 1 : 0],
                           job.frames[t], grid, method, model ? &*model : nullptr, constraints);
    };
    if (!simulate) {
      for (std::size_t t = 0; t < frames; ++t) {
        target[t] = upscale_at(t);
        progress.tick(1);
      }
    } else {
      // Streamed: frame t - 1 is upscaled while the miniature steps to t (a step alone leaves
      // cores idle at the top of its elimination tree and at its barriers). Each result is
      // computed as one after the other would, so the bytes do not change.
      MassSpringSolver sim(job.mini);
      job.frames.resize(frames);
      job.frames[0] = sim.positions();
      StepResult step;
      for (std::size_t t = 1; t <= frames; ++t) {
        parallel_for(2, 1, [&](std::size_t b, std::size_t e) {
          for (std::size_t task = b; task < e; ++task) {
            if (task == 0 && t < frames) {
              step = sim.advance_frame();
              job.frames[t] = sim.positions();
            } else if (task == 1) {
              target[t - 1] = upscale_at(t - 1);
            }
          }
        });
        if (!step.ok)
          throw RunError(job.name + " (miniature): frame " + std::to_string(t) + ": particle " +
                         std::to_string(step.particle) + " diverged (try a smaller time_step)");
        progress.tick(1);
      }
    }
    progress.finish();
    spdlog::info("{}: {}{} upscaling {:.2f} ms/frame", job.name,
                 simulate ? "miniature simulated and streamed into " : "", method,
                 ms_since(t0) / static_cast<double>(frames));
    const Points3 rest =
        interpolate_upscale(rest_positions(job.mini), grid, Interpolation::Bilinear);
    write_grid_sequence(writer, job.name, job.target, target,
                        {{"method", method}, {"dsds_factor", std::int64_t{f}}}, rest);
    std::vector<Points3>().swap(job.frames);  // done with: memory stays flat over many runs
  }
  writer.commit();
}

namespace {

/// The runs evaluate scores: the first model's held-out ones in the target cache `target`
/// (`all` its runs), else all of them, with a warning; a later model that trained on any of them
/// is named in a warning too.
std::vector<std::string> evaluation_sequences(
    const std::vector<std::pair<std::string, UpscaleModel>>& models,
    const std::vector<std::string>& all, const std::filesystem::path& target) {
  std::vector<std::string> names;
  for (const auto& n : models.front().second.test_sequences)
    if (std::find(all.begin(), all.end(), n) != all.end()) names.push_back(n);
  if (names.empty()) {
    // A model trained on a single run held none out: its errors below are training errors.
    if (models.front().second.test_sequences.empty())
      spdlog::warn(
          "{} held no sequence out of its training (one run, or test_fraction 0): "
          "evaluating every sequence of {}, errors on seen data",
          models.front().first, target.string());
    else
      spdlog::warn("{}: none of the model's test sequences is here; evaluating every sequence",
                   target.string());
    names = all;
  }
  // The sequences are the first model's held-out ones: another model may have trained on them
  // (another seed splits otherwise), and its errors there were printed beside the others' as if
  // they were held out too.
  for (std::size_t m = 1; m < models.size(); ++m) {
    std::string seen;
    for (const auto& n : names)
      if (std::find(models[m].second.train_sequences.begin(),
                    models[m].second.train_sequences.end(),
                    n) != models[m].second.train_sequences.end())
        seen += (seen.empty() ? "" : ", ") + n;
    if (!seen.empty())
      spdlog::warn(
          "{} trained on {}, held out by {}: its errors there are on data it saw (evaluate models "
          "of different splits one at a time)",
          models[m].first, seen, models.front().first);
  }
  return names;
}

/// Per-frame measures summed over frames: roughness, and where the sheet passes through itself
/// (self_collision.hpp; an upscaler can put layers through each other that the target keeps
/// apart).
template <class Measure>
double sum_over(const std::vector<Points3>& frames, const Measure& measure) {
  double sum = 0.0;
  for (const auto& x : frames) {
    app::check_interrupted();  // count_crossings takes a while on a large sheet
    sum += measure(x);
  }
  return sum;
}

double roughness(const std::vector<Points3>& frames, const ClothParams& p) {
  return sum_over(frames, [&](const Points3& x) { return grid_roughness(x, p.nx, p.ny); });
}

double layer_crossings(const std::vector<Points3>& frames, const ClothParams& p) {
  return sum_over(
      frames, [&](const Points3& x) { return static_cast<double>(count_crossings(p, x).layers); });
}

double collider_penetrations(const std::vector<Points3>& frames, const ClothParams& p) {
  return sum_over(frames, [&](const Points3& x) {
    return static_cast<double>(count_collider_penetrations(p, x));
  });
}

/// The largest distance of a pinned particle from its pin over all frames: a method that moves
/// the pins makes the edge the cloth hangs from jitter.
double pin_drift(const std::vector<Points3>& frames, const ClothParams& p) {
  const Points3 rest = rest_positions(p);
  const std::vector<int> pinned = pinned_particles(p);
  double largest = 0.0;
  for (const auto& x : frames)
    for (int i : pinned) largest = std::max(largest, (x.row(i) - rest.row(i)).norm());
  return largest;
}

/// The evaluation report as markdown (tables like the paper's 4, 6 and 7), from its JSON;
/// `loss_curves` names the SVG beside it.
std::string evaluation_markdown(const json& report, const std::string& loss_curves) {
  // "-" for a figure there is none of: a missing key, or a test loss without test runs (NaN,
  // null in the JSON).
  auto num = [](const json& j, const char* key) {
    return j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>())
               ? format("%.3e", j[key].get<double>())
               : "-";
  };
  auto ms = [](const json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? format("%.2f", j[key].get<double>()) : "-";
  };
  std::string md =
      "# cloth-train evaluation\n\nTarget cache `" + report["target_cache"].get<std::string>() +
      "`, " + app::counted(report["sequences"].size(), "sequence", "sequences") +
      ". Error: mean per-particle Euclidean distance to the target "
      "simulation over all frames (m): `error` with the miniature simulated (the method end to "
      "end), "
      "`DSDS error` upscaling the DSDS of the target itself (the upscaler alone). Time: "
      "miniature step + upscaling per frame.\n\n";
  md +=
      "## DSDS factor and features (paper table 4: 2 -> 1.816e-3 / 37.5 ms, 3 -> 2.916e-3 / "
      "19.1 ms, 4 -> 3.901e-3 / 16.2 ms; table 3: the inputs)\n\n| model | factor | inputs | local "
      "| residual | trained on | train MSE | test MSE | error (m) | DSDS error (m) | ms/frame |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : report["dsds_factor"])
    md += "| " + r["model"].get<std::string>() + " | " +
          std::to_string(r["dsds_factor"].get<int>()) + " | positions x" +
          std::to_string(r["features_history"].get<int>()) +
          (r["features_velocities"].get<bool>() ? " + velocities" : "") + " | " +
          (r["features_local"].get<bool>() ? "yes" : "no") + " | " +
          (r["features_residual"].get<bool>() ? "yes" : "no") + " | " +
          (r["train_miniature"] == "simulated" ? "simulated miniature (corrector)" : "DSDS") +
          " | " + num(r, "train_loss") + " | " + num(r, "test_loss") + " | " + num(r, "error") +
          " | " + num(r, "dsds_error") + " | " + ms(r, "ms_per_frame") + " |\n";
  md +=
      "\n## Upscaling method, the first model's DSDS factor (paper table 6: bilinear 1.826e-3, "
      "biquadratic 1.825e-3, bicubic 1.825e-3, network 1.816e-3). Roughness: the mean second "
      "difference along rows and columns (m), the target's own " +
      num(report, "target_roughness") +
      ". Layer crossings: edges of the surface through its own triangles 3 or more rows or "
      "columns away, per frame (the sheet passing through itself), the target's own " +
      ms(report, "target_layer_crossings_per_frame") +
      ". Inside colliders: particles inside the sphere or below the ground per frame, the "
      "target's own " +
      ms(report, "target_collider_penetrations_per_frame") +
      ". Pin drift: the largest distance of a pinned particle from its pin over all frames." +
      "\n\n| method | error (m) | DSDS error (m) | roughness (m) | layer crossings/frame | "
      "inside colliders/frame | pin drift (m) | ms/frame |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : report["upscaling"])
    md += "| " + r["method"].get<std::string>() +
          (r.contains("model") ? ", " + r["model"].get<std::string>() : "") + " | " +
          num(r, "error") + " | " + num(r, "dsds_error") + " | " + num(r, "roughness") + " | " +
          ms(r, "layer_crossings_per_frame") + " | " + ms(r, "collider_penetrations_per_frame") +
          " | " + num(r, "pin_drift") + " | " + ms(r, "ms_per_frame") + " |\n";
  md +=
      "\n## Against the target simulation (paper table 7: curtain 1.816e-3, flag 7.767e-3, "
      "collision 5.973e-3)\n\n| sequence | particles | target ms/frame | network error (m) | "
      "network ms/frame | speed-up | bilinear error (m) |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : report["against_target"])
    md += "| " + r["sequence"].get<std::string>() + " | " +
          std::to_string(r["particles"].get<int>()) + " | " + ms(r, "target_ms_per_frame") + " | " +
          num(r, "network_error") + " | " + ms(r, "network_ms_per_frame") + " | " +
          ms(r, "speedup") + " | " + num(r, "bilinear_error") + " |\n";
  md += "\nLoss curves: `" + loss_curves + "`\n";
  return md;
}

}  // namespace

void run_evaluate(app::Context& ctx, const ClothConfig& config) {
  const auto inputs = ctx.inputs();
  if (inputs.size() < 2)
    throw UsageError("-i/--input: give the target cache, then one or more model files");
  std::vector<std::pair<std::string, UpscaleModel>> models;
  for (std::size_t i = 1; i < inputs.size(); ++i)
    models.emplace_back(inputs[i].filename().string(), read_model(inputs[i]));
  io::CacheReader cache(inputs[0]);
  const auto all = cloth_sequences(cache, inputs[0], "the target runs (cloth-train simulate)");
  const std::vector<std::string> names = evaluation_sequences(models, all, inputs[0]);
  for (const auto& n : names) expect_miniature_factor(cache.sequence(n), inputs[0], 1);
  std::string prefix = ctx.output().string();
  for (const char* ext : {".json", ".md"})
    if (prefix.size() > std::string(ext).size() && prefix.ends_with(ext))
      prefix.resize(prefix.size() - std::string(ext).size());
  for (const char* ext : {".json", ".md", ".loss.svg"})
    ctx.refuse_input(prefix + ext, "-o/--output (the report " + prefix + ext + ")");
  if (ctx.dry_run()) {
    std::printf("would evaluate %s on %s into %s.json, %s.md, %s.loss.svg\n",
                app::counted(models.size(), "model", "models").c_str(),
                app::counted(names.size(), "sequence", "sequences").c_str(), prefix.c_str(),
                prefix.c_str(), prefix.c_str());
    return;
  }
  const std::vector<std::string> methods{"bilinear", "biquadratic", "bicubic", "network"};
  json report = json::object();
  report["provenance"] = app::provenance_json(ctx.provenance());
  report["target_cache"] = inputs[0].string();
  report["sequences"] = names;
  json per_model = json::array(), per_method = json::array(), against = json::array();
  // A line per upscaling (the four methods with the first model, the network with each other
  // one, for every sequence): a sequence of thousands of frames takes minutes.
  app::Progress progress("upscaling", names.size() * (methods.size() + models.size() - 1));
  // Sums over sequences: [model][method] -> (error sum, count, ms sum, frames).
  struct Acc {
    double err = 0, count = 0, ms = 0, frames = 0, dsds_err = 0, dsds_count = 0, rough = 0;
    double layers = 0;     // edge-triangle crossings between parts of the sheet, summed over frames
    double inside = 0;     // particles inside a collider, summed over frames
    double pin_drift = 0;  // largest distance of a pinned particle from its pin, m, over all
  };
  double target_rough = 0.0, target_frames = 0.0, target_layers = 0.0, target_inside = 0.0;
  std::vector<std::vector<Acc>> acc(models.size(), std::vector<Acc>(methods.size()));
  const bool timed = config.timing_frames > 0;
  for (const auto& name : names) {
    const auto seq = cache.sequence(name);
    const ClothParams target = params_of(seq, inputs[0].string());
    const auto truth = read_frames(seq, inputs[0]);
    target_rough += roughness(truth, target);
    target_layers += layer_crossings(truth, target);
    target_inside += collider_penetrations(truth, target);
    target_frames += static_cast<double>(truth.size());
    json row = {{"sequence", name}, {"particles", target.nx * target.ny}};
    // Time the target simulation itself over the first frames (table 7/8's P-ADMM column).
    double target_ms = 0.0;
    if (timed) {
      ClothParams first_frames = target;
      first_frames.frames = std::min<int>(config.timing_frames + 1, static_cast<int>(truth.size()));
      simulate_frames(first_frames, name, &target_ms);
      row["target_ms_per_frame"] = target_ms;
    }
    for (std::size_t m = 0; m < models.size(); ++m) {
      const UpscaleModel& model = models[m].second;
      warn_outside_training(name, target, model, models[m].first);
      if (!has_miniature(target, model.factor)) {
        spdlog::warn("{}: no miniature of factor {} for {}", name, model.factor, models[m].first);
        progress.tick(m == 0 ? methods.size() : 1);
        continue;
      }
      ClothParams mini = miniature_params(target, model.factor);
      mini.frames = static_cast<int>(truth.size());
      double mini_ms = 0.0;
      const auto mframes = simulate_frames(mini, name + " (miniature)", &mini_ms);
      const MiniatureGrid grid{mini.nx, mini.ny, model.factor};
      const SceneConstraints constraints(target, mini, config.upscale_pins,
                                         config.upscale_colliders, config.upscale_self_collision);
      // The DSDS of the target itself: the upscaler's own error, without the miniature's drift.
      std::vector<Points3> dsds;
      for (const auto& x : truth)
        dsds.push_back(downsample_downscale(x, target.nx, target.ny, model.factor));
      for (std::size_t k = 0; k < methods.size(); ++k) {
        if (m > 0 && methods[k] != "network") continue;
        const auto t0 = Clock::now();
        const auto up = upscale_frames(mframes, grid, methods[k], &model, constraints);
        const double up_ms = ms_since(t0) / static_cast<double>(mframes.size());
        const auto [sum, count] = euclidean_error(up, truth);
        const auto [dsum, dcount] =
            euclidean_error(upscale_frames(dsds, grid, methods[k], &model, constraints), truth);
        Acc& a = acc[m][k];
        a.dsds_err += dsum;
        a.dsds_count += dcount;
        a.err += sum;
        a.count += count;
        a.rough += roughness(up, target);
        a.layers += layer_crossings(up, target);
        a.inside += collider_penetrations(up, target);
        a.pin_drift = std::max(a.pin_drift, pin_drift(up, target));
        a.ms += (mini_ms + up_ms) * static_cast<double>(mframes.size());
        a.frames += static_cast<double>(mframes.size());
        if (m == 0) {
          row[methods[k] + "_error"] = sum / count;
          row[methods[k] + "_dsds_error"] = dsum / dcount;
          if (timed) row[methods[k] + "_ms_per_frame"] = mini_ms + up_ms;
        }
        progress.tick(1);
      }
    }
    if (row.contains("network_ms_per_frame"))
      row["speedup"] = target_ms / row["network_ms_per_frame"].get<double>();
    against.push_back(row);
  }
  progress.finish();
  for (std::size_t m = 0; m < models.size(); ++m) {
    const auto& model = models[m].second;
    const Acc& a = acc[m][3];
    json r = {{"model", models[m].first},
              {"dsds_factor", model.factor},
              {"features_local", model.options.local},
              {"features_residual", model.options.residual},
              {"features_history", model.options.history},
              {"features_velocities", model.options.velocities},
              {"train_miniature", model.miniature},
              {"best_epoch", model.best_epoch},
              {"error", a.count > 0 ? a.err / a.count : std::nan("")},
              {"dsds_error", a.dsds_count > 0 ? a.dsds_err / a.dsds_count : std::nan("")}};
    if (timed) r["ms_per_frame"] = a.frames > 0 ? a.ms / a.frames : std::nan("");
    if (model.best_epoch > 0 &&
        static_cast<std::size_t>(model.best_epoch) <= model.history.size()) {
      r["train_loss"] = model.history[static_cast<std::size_t>(model.best_epoch) - 1].train_loss;
      r["test_loss"] = model.history[static_cast<std::size_t>(model.best_epoch) - 1].test_loss;
    }
    per_model.push_back(r);
  }
  // Table 6: the interpolations of the first model's miniature, then every network of that factor.
  auto method_row = [timed](const std::string& method, const Acc& a) {
    json row{{"method", method},
             {"error", a.count > 0 ? a.err / a.count : std::nan("")},
             {"dsds_error", a.dsds_count > 0 ? a.dsds_err / a.dsds_count : std::nan("")},
             {"roughness", a.frames > 0 ? a.rough / a.frames : std::nan("")},
             {"layer_crossings_per_frame", a.frames > 0 ? a.layers / a.frames : std::nan("")},
             {"collider_penetrations_per_frame", a.frames > 0 ? a.inside / a.frames : std::nan("")},
             {"pin_drift", a.frames > 0 ? a.pin_drift : std::nan("")}};
    if (timed) row["ms_per_frame"] = a.frames > 0 ? a.ms / a.frames : std::nan("");
    return row;
  };
  for (std::size_t k = 0; k + 1 < methods.size(); ++k)
    per_method.push_back(method_row(methods[k], acc[0][k]));
  for (std::size_t m = 0; m < models.size(); ++m)
    if (models[m].second.factor == models.front().second.factor) {
      json row = method_row(
          models[m].second.miniature == "simulated" ? "corrector + bicubic" : "network", acc[m][3]);
      row["model"] = models[m].first;
      per_method.push_back(row);
    }
  report["target_roughness"] = target_frames > 0 ? target_rough / target_frames : std::nan("");
  report["target_layer_crossings_per_frame"] =
      target_frames > 0 ? target_layers / target_frames : std::nan("");
  report["target_collider_penetrations_per_frame"] =
      target_frames > 0 ? target_inside / target_frames : std::nan("");
  report["dsds_factor"] = per_model;
  report["upscaling"] = per_method;
  report["against_target"] = against;

  const std::string md =
      evaluation_markdown(report, std::filesystem::path(prefix + ".loss.svg").filename().string());
  write_text(prefix + ".json", app::json_dump(report, 2) + "\n");
  write_text(prefix + ".md", md);
  write_text(prefix + ".loss.svg", svg_loss_curves(models));
  std::fputs(md.c_str(), stdout);
}

}  // namespace datadyn::cloth
