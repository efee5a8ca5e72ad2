#include "fluid/fluid_io.hpp"

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "app/frame_range.hpp"
#include "app/progress.hpp"
#include "core/errors.hpp"
#include "io/atomic_file.hpp"

namespace datadyn::fluid {

namespace {

/// Bounds of a database config: a farm's database is a few hundred simulations of a tank with a
/// few obstacles; beyond these, checking the config alone took minutes.
constexpr int kMaxSimulations = 100000;
constexpr std::size_t kMaxObstacles = 1000;

using app::ConfigReader;
using app::json;

using app::number_text;

// --- JSON helpers for the free-form geometry keys ------------------------------------------------

json to_json(const Eigen::Vector2d& v) {
  return json::array({v.x(), v.y()});
}
json to_json(const Polygon& poly) {
  json a = json::array();
  for (const auto& v : poly) a.push_back(to_json(v));
  return a;
}

/// A value given by --set arrives as text: parse it as JSON when it looks like it.
json parsed(const json& j) {
  if (j.is_string()) {
    json p = app::parse_json(j.get<std::string>());
    if (!p.is_discarded()) return p;
  }
  return j;
}

bool point_from_json(const json& j, Eigen::Vector2d& out) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number()) return false;
  out = {j[0].get<double>(), j[1].get<double>()};
  return out.allFinite();
}

bool polygon_from_json(const json& j, Polygon& out) {
  if (!j.is_array() || j.size() < 3) return false;
  Polygon poly(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    if (!point_from_json(j[i], poly[i])) return false;
  out = std::move(poly);
  return true;
}

void read_polygon(ConfigReader& r, const std::string& key, Polygon& poly) {
  json j = to_json(poly);
  r.get_json(key, j);
  if (!polygon_from_json(parsed(j), poly))
    r.fail(key, "a list of at least 3 [x, y] points (metres)");
}

// --- Params
// ----------------------------------------------------------------------------------------

void read_solver(ConfigReader& r, MpsParams& p) {
  using namespace app;
  r.get("density", p.density, positive());
  r.get("viscosity", p.viscosity, non_negative());
  r.get("gravity", p.gravity);
  r.get_enum("source_term", p.source_term,
             {{"mixed", SourceTerm::Mixed}, {"density", SourceTerm::Density}});
  r.get("relaxation", p.relaxation, {0.0, 1.0, true, false});
  r.get("compressibility", p.compressibility, non_negative());
  r.get("gradient_correction", p.gradient_correction);
  r.get("re_density", p.re_density, {1.0, 4.0, true, false});
  r.get("re_laplacian", p.re_laplacian, {1.0, 5.0, true, false});
  if (p.re_laplacian < p.re_density)
    r.fail("re_laplacian", "a number >= re_density (" + number_text(p.re_density) + ")",
           {"solver.re_density"});
  r.get("surface_threshold", p.surface_threshold, {0.0, 1.0, true, true});
  r.get("collision_distance", p.collision_distance, {0.0, 1.0, false, false});
  r.get("restitution", p.restitution, unit_interval());
  r.get_enum("time_step", p.time_step,
             {{"courant", TimeStepMode::Courant}, {"fixed", TimeStepMode::Fixed}});
  r.get("dt", p.dt, positive());
  r.get("courant", p.courant, {0.0, 1.0, true, false});
  r.get("courant_max", p.courant_max, positive());
  if (p.courant_max < p.courant)
    r.fail("courant_max", "a number >= courant (" + number_text(p.courant) + ")",
           {"solver.courant"});
  r.get("dt_min", p.dt_min, positive());
  // Courant mode steps at most dt: a floor above it failed every run as a divergence.
  if (p.time_step == TimeStepMode::Courant && p.dt_min > p.dt)
    r.fail("dt_min", "a step <= solver.dt (" + number_text(p.dt) + " s), the largest Courant step",
           {"solver.dt", "solver.time_step"});
  r.get("ppe_tolerance", p.ppe_tolerance, {0.0, 1.0, true, true});
  r.get("ppe_max_iterations", p.ppe_max_iterations, at_least(1));
  r.get("leak_depth", p.leak_depth, positive());
}

void read_tank(ConfigReader& r, TankShape& t) {
  read_polygon(r, "vertices", t.vertices);
  r.get("open_top", t.open_top);
  json j = json::array();
  for (const auto& o : t.obstacles) j.push_back(to_json(o));
  r.get_json("obstacles", j);
  j = parsed(j);
  std::vector<Polygon> obstacles;
  bool ok = j.is_array();
  for (std::size_t k = 0; ok && k < j.size(); ++k) {
    Polygon poly;
    ok = polygon_from_json(j[k], poly);
    obstacles.push_back(std::move(poly));
  }
  if (!ok) r.fail("obstacles", "a list of polygons, each a list of at least 3 [x, y] points");
  // A tank of 10,000 obstacles took minutes to check before it was refused or run.
  if (obstacles.size() > kMaxObstacles)
    r.fail("obstacles", "at most " + std::to_string(kMaxObstacles) + " obstacles, not " +
                            std::to_string(obstacles.size()));
  t.obstacles = std::move(obstacles);
  // Name the key the fault is in: an obstacle's, or the tank's own vertices.
  if (const std::string e = tank_shape_error(t); !e.empty())
    r.fail(e.rfind("obstacle", 0) == 0 ? "obstacles" : "vertices", "a valid tank (" + e + ")",
           {r.dotted("vertices"), r.dotted("obstacles")});
}

void read_column(ConfigReader& r, WaterColumn& c) {
  using namespace app;
  r.get("x", c.x);
  r.get("bottom", c.bottom);
  r.get("width", c.width, positive());
  r.get("height", c.height, positive());
  r.get("velocity", c.velocity);
}

void read_scene(ConfigReader& r, Scene& s) {
  using namespace app;
  r.get("l0", s.l0, positive());
  r.get("duration", s.duration, positive());
  // Up to 10,000 fps: 1e308 passed and the frame bound then blamed the duration.
  r.get("frame_rate", s.frame_rate, Range{0.0, 1e4, true, false});
  // A height in the tank's coordinates: no still water when at or below the tank's floor (0 is
  // "none" only for a tank whose floor is at y >= 0).
  r.get("water_level", s.water_level, in_range(-1e6, 1e6));
  r.get("wall_layers", s.wall_layers, in_range(1, 4));
  r.get("dummy_layers", s.dummy_layers, in_range(0, 4));
  ConfigReader tank = r.child("tank");
  read_tank(tank, s.tank);
  ConfigReader column = r.child("column");
  read_column(column, s.column);
}

void read_sweep(ConfigReader& r, Sweep& s) {
  using namespace app;
  r.get("heights", s.heights, positive());
  ConfigReader range = r.child("height_range");
  range.get("from", s.height_from, positive());
  range.get("to", s.height_to, positive());
  range.get("count", s.height_count, at_least(1));
  r.get("widths", s.widths, positive());
  json j = json::array();
  for (const auto& v : s.velocities) j.push_back(to_json(v));
  r.get_json("velocities", j);
  j = parsed(j);
  std::vector<Eigen::Vector2d> v;
  bool ok = j.is_array();
  for (std::size_t k = 0; ok && k < j.size(); ++k) {
    Eigen::Vector2d u;
    ok = point_from_json(j[k], u);
    v.push_back(u);
  }
  if (!ok) r.fail("velocities", "a list of [vx, vy] velocities (m/s)");
  s.velocities = std::move(v);
  // The same value twice runs the same simulation twice (the solver is deterministic).
  const auto twice = [](auto values, auto less) {
    std::sort(values.begin(), values.end(), less);
    return std::adjacent_find(values.begin(), values.end(), [&](const auto& a, const auto& b) {
             return !less(a, b) && !less(b, a);
           }) != values.end();
  };
  const auto by_value = [](double a, double b) { return a < b; };
  if (twice(s.heights, by_value)) r.fail("heights", "a list of distinct heights");
  if (twice(s.widths, by_value)) r.fail("widths", "a list of distinct widths");
  if (twice(s.velocities, [](const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
        return std::lexicographical_compare(a.data(), a.data() + 2, b.data(), b.data() + 2);
      }))
    r.fail("velocities", "a list of distinct velocities");
  // One simulation per combination: lists of a thousand values each made a billion, and a
  // dry run that listed them for minutes.
  const double count =
      static_cast<double>(s.heights.empty() ? s.height_count : static_cast<int>(s.heights.size())) *
      static_cast<double>(std::max<std::size_t>(1, s.widths.size())) *
      static_cast<double>(std::max<std::size_t>(1, s.velocities.size()));
  if (count > kMaxSimulations) {
    const std::string expected = "at most " + std::to_string(kMaxSimulations) +
                                 " simulations (heights x widths x velocities), not " +
                                 number_text(count);
    if (s.heights.empty())
      range.fail("count", expected, {"sweep"});
    else
      r.fail("heights", expected, {"sweep"});
  }
}

std::string column_text(const SimulationSpec& s) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s (column x %g m, width %g m, height %g m, velocity [%g, %g] m/s)",
                s.name.c_str(), s.column.x, s.column.width, s.column.height, s.column.velocity.x(),
                s.column.velocity.y());
  return buf;
}

}  // namespace

Scene DatabaseParams::default_scene() {
  Scene s;
  // A 2 m flume with a 1:3.7 beach: each column collapses into a 7.5 cm deep layer, the bore runs
  // up the beach and plunges - the breaking waves of Chiba et al. 2011, fig. 2.
  s.tank.vertices = {{0.0, 0.0}, {2.0, 0.0}, {2.0, 1.0}, {0.0, 1.0}};
  s.tank.open_top = true;
  s.tank.obstacles = {{{0.9, 0.0}, {2.0, 0.0}, {2.0, 0.3}}};
  s.l0 = 0.0125;
  s.duration = 2.0;
  s.frame_rate = 30.0;
  s.water_level = 0.075;
  s.column = WaterColumn{0.0, 0.3, 0.4, 0.0, Eigen::Vector2d::Zero()};
  return s;
}

void read_database_params(ConfigReader& r, DatabaseParams& p) {
  using namespace app;
  ConfigReader scene = r.child("scene");
  read_scene(scene, p.scene);
  ConfigReader sweep = r.child("sweep");
  read_sweep(sweep, p.sweep);
  ConfigReader solver = r.child("solver");
  read_solver(solver, p.solver);
  ConfigReader output = r.child("output");
  output.get("velocity", p.output.velocity);
  output.get("pressure", p.output.pressure);

  if (p.solver.leak_depth > p.scene.wall_layers + p.scene.dummy_layers)
    solver.fail("leak_depth",
                "a depth <= wall_layers + dummy_layers (" +
                    std::to_string(p.scene.wall_layers + p.scene.dummy_layers) + " l0)",
                {"scene.wall_layers", "scene.dummy_layers"});
  // A million frames (9 hours at 30 fps): beyond it duration x frame_rate is a typo, and at 1e20
  // the frame count no longer fits an integer.
  if (!(p.scene.duration * p.scene.frame_rate <= 1e6))
    scene.fail("duration",
               "at most 1e6 frames of output (duration x frame_rate = " +
                   number_text(p.scene.duration * p.scene.frame_rate) + ")",
               {"scene.frame_rate"});
  // Checks across keys: the lattice is of a size that can be built, every simulation's water fits
  // in the tank, a fixed step keeps the Courant bound for the fastest column.
  Eigen::Vector2d lo = p.scene.tank.vertices.front(), hi = lo;
  for (const Eigen::Vector2d& v : p.scene.tank.vertices) lo = lo.cwiseMin(v), hi = hi.cwiseMax(v);
  const Eigen::Vector2d size = hi - lo;
  if (size.minCoeff() < 4 * p.scene.l0)
    scene.fail(
        "l0",
        "a spacing at most a quarter of the tank's size (" + number_text(size.minCoeff()) + " m)",
        {"scene.tank"});
  // At most 1e8 lattice points in the tank's bounding box, 5,000 times the largest scene
  // benchmarked (20,000 particles): a smaller l0 is a typo, not a scene, and building its lattice
  // would not end in any useful time.
  const double max_points = 1e8;
  if (size.x() * size.y() / (p.scene.l0 * p.scene.l0) > max_points)
    scene.fail("l0",
               "a spacing of at least " + number_text(std::sqrt(size.x() * size.y() / max_points)) +
                   " m (at most 1e8 lattice points in the tank's " + number_text(size.x()) + " x " +
                   number_text(size.y()) + " m bounding box)",
               {"scene.tank"});
  const Tank tank(p.scene.tank, p.scene.l0, p.scene.wall_layers, p.scene.dummy_layers);
  const bool sweep_given = sweep.has("heights") || sweep.has("height_range") ||
                           sweep.has("widths") || sweep.has("velocities");
  const std::string column_key = sweep_given ? "/sweep" : "/scene/column";
  const std::string column_origin =
      r.origin({"sweep", "scene.column", "scene.l0", "scene.tank", "scene.water_level"});
  double fastest = 0;
  std::string fastest_name;
  for (const auto& sim : sweep_simulations(p.scene, p.sweep)) {
    const InitialWater w = initial_water(tank, p.scene, sim.column);
    if (!w.error.empty())
      throw ConfigError(ConfigError::FreeText{}, column_origin, column_key,
                        column_text(sim) + ": " + w.error);
    if (w.position.rows() == 0)
      throw ConfigError(ConfigError::FreeText{}, column_origin, column_key,
                        column_text(sim) +
                            ": no water particle (the column is narrower or lower "
                            "than l0 = " +
                            number_text(p.scene.l0) + " m)");
    const double u = estimated_max_speed(tank, sim.column, p.solver.gravity);
    if (u > fastest) {
      fastest = u;
      fastest_name = sim.name;
    }
  }
  if (p.solver.time_step == TimeStepMode::Fixed && fastest > 0) {
    const double dt_max = p.solver.courant * p.scene.l0 / fastest;
    if (p.solver.dt > dt_max) {
      solver.fail("dt",
                  "a step <= " + number_text(dt_max) + " s: Courant number " +
                      number_text(p.solver.courant) + " at l0 = " + number_text(p.scene.l0) +
                      " m for the " + number_text(fastest) + " m/s that " + fastest_name +
                      "'s column reaches falling (|v0| + sqrt(2 g h)); or use time_step "
                      "\"courant\"",
                  {"solver.time_step", "solver.courant", "solver.gravity", "scene.l0", "scene.tank",
                   "scene.column", "sweep"});
    }
  }
}

std::vector<std::int64_t> output_frames(const Scene& scene,
                                        const std::optional<std::vector<std::int64_t>>& requested) {
  return app::frames_within(static_cast<std::int64_t>(frame_count(scene)), requested,
                            " (duration " + number_text(scene.duration) + " s at " +
                                number_text(scene.frame_rate) + " fps; frame 1 is t = 0)");
}

std::string database_plan(const DatabaseParams& params, const std::vector<SimulationSpec>& sims,
                          const std::vector<std::int64_t>& frames) {
  const Scene& s = params.scene;
  const Tank tank(s.tank, s.l0, s.wall_layers, s.dummy_layers);
  std::string out;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%zu simulation%s, l0 = %g m, %zu wall/dummy particles, %zu frame%s (%g fps, "
                "%g s simulated)\n",
                sims.size(), sims.size() == 1 ? "" : "s", s.l0,
                static_cast<std::size_t>(tank.boundary_positions().rows()), frames.size(),
                frames.size() == 1 ? "" : "s", s.frame_rate,
                static_cast<double>(frames.empty() ? 0 : frames.back() - 1) / s.frame_rate);
  out += buf;
  // Each frame stores float32 arrays per water particle: 8 bytes of position, 8 of velocity and
  // 4 of pressure where asked for. A simulation keeps its frames until it finishes.
  const std::uintmax_t per_particle_frame =
      8 + (params.output.velocity ? 8 : 0) + (params.output.pressure ? 4 : 0);
  std::uintmax_t total = 0, largest = 0;
  for (const auto& sim : sims) {
    const InitialWater w = initial_water(tank, s, sim.column);
    std::snprintf(buf, sizeof buf, "  %s: %ld water particles\n", column_text(sim).c_str(),
                  static_cast<long>(w.position.rows()));
    out += buf;
    const std::uintmax_t bytes =
        static_cast<std::uintmax_t>(w.position.rows()) * frames.size() * per_particle_frame;
    total += bytes;
    largest = std::max(largest, bytes);
  }
  out += "per-frame arrays: " + app::byte_text(total) +
         " before compression; a running simulation holds its frames, up to " +
         app::byte_text(largest) + " for the largest\n";
  return out;
}

// --- Running -------------------------------------------------------------------------------------

namespace {

struct Cancelled {};

/// One simulation's output, filled by a worker and written by the HDF5 thread.
struct Job {
  const SimulationSpec* spec = nullptr;
  std::vector<float> position, velocity, pressure;  // frames × N × 2, frames × N × 2, frames × N
  std::vector<std::int64_t> frames;
  std::vector<double> times;
  std::size_t fluid = 0;
  SimulationResult result;
  double seconds = 0;
  std::exception_ptr error;
  bool done = false;

  /// Keeps the solver's state as the frame `frame` at `time` (float32, as the cache stores it).
  void keep_frame(const MpsSolver& solver, const OutputOptions& output, std::int64_t frame,
                  double time) {
    Points2 x, v;
    Eigen::VectorXd p;
    solver.fluid_positions(x);
    position.insert(position.end(), x.data(), x.data() + x.size());
    if (output.velocity) {
      solver.fluid_velocities(v);
      velocity.insert(velocity.end(), v.data(), v.data() + v.size());
    }
    if (output.pressure) {
      solver.fluid_pressures(p);
      pressure.insert(pressure.end(), p.data(), p.data() + p.size());
    }
    frames.push_back(frame);
    times.push_back(time);
  }
};

/// Writes a finished simulation as a sequence: its parameters as attributes, the tank as static
/// arrays, the kept frames.
void write_simulation(io::CacheWriter& writer, const Job& job, const Tank& tank,
                      const DatabaseParams& params) {
  const SimulationSpec& spec = *job.spec;
  const Scene& base = params.scene;
  io::SequenceWriter& seq = writer.add_sequence(spec.name, {base.frame_rate, 2});
  seq.set_attribute("index", static_cast<std::int64_t>(spec.index));
  seq.set_attribute("column_height", spec.column.height);
  seq.set_attribute("column_width", spec.column.width);
  seq.set_attribute("column_x", spec.column.x);
  seq.set_attribute("column_bottom", spec.column.bottom);
  seq.set_attribute("initial_velocity",
                    std::vector<double>{spec.column.velocity.x(), spec.column.velocity.y()});
  seq.set_attribute("water_level", base.water_level);
  seq.set_attribute("l0", base.l0);
  seq.set_attribute("fluid_count", static_cast<std::int64_t>(job.fluid));
  seq.set_attribute("steps", static_cast<std::int64_t>(job.result.steps));
  const Points2& bp = tank.boundary_positions();
  std::vector<float> tank_pos(static_cast<std::size_t>(bp.size()));
  for (Eigen::Index i = 0; i < bp.size(); ++i)
    tank_pos[static_cast<std::size_t>(i)] = static_cast<float>(bp.data()[i]);
  std::vector<std::int8_t> tank_type;
  for (ParticleType t : tank.boundary_types()) tank_type.push_back(static_cast<std::int8_t>(t));
  seq.write_static("tank/position", io::view(tank_pos, {static_cast<std::size_t>(bp.rows()), 2}));
  seq.write_static("tank/type", io::view(tank_type));
  const std::size_t n = job.fluid;
  for (std::size_t f = 0; f < job.frames.size(); ++f) {
    std::vector<std::pair<std::string, io::ArrayView>> data;
    data.emplace_back(
        "points/position",
        io::ArrayView{job.position.data() + f * n * 2, io::ElementType::Float32, {n, 2}});
    if (params.output.velocity)
      data.emplace_back(
          "points/velocity",
          io::ArrayView{job.velocity.data() + f * n * 2, io::ElementType::Float32, {n, 2}});
    if (params.output.pressure)
      data.emplace_back("points/pressure",
                        io::ArrayView{job.pressure.data() + f * n, io::ElementType::Float32, {n}});
    seq.append_frame(job.frames[f], job.times[f], data);
  }
  seq.finish();  // flat memory over thousands of simulations
}

/// The summary of a finished simulation, logged with its speed and where the time went.
SimulationSummary summarize(const Job& job) {
  SimulationSummary s;
  s.name = job.spec->name;
  s.fluid = job.fluid;
  s.frames = job.frames.size();
  s.steps = job.result.steps;
  s.max_iterations = job.result.max_iterations;
  s.seconds = job.seconds;
  const StepTiming& tm = job.result.timing;
  spdlog::info(
      "{}: {} water particles, {} frames, {} steps in {:.1f} s ({:.3g} particle-steps/s; "
      "neighbours {:.0f}%, PPE {:.0f}% with {:.1f} CG iterations per step, max {})",
      s.name, s.fluid, s.frames, s.steps, s.seconds,
      static_cast<double>(s.fluid) * static_cast<double>(s.steps) / std::max(s.seconds, 1e-9),
      100 * tm.neighbors / std::max(1e-9, tm.neighbors + tm.ppe + tm.other),
      100 * tm.ppe / std::max(1e-9, tm.neighbors + tm.ppe + tm.other),
      static_cast<double>(tm.ppe_iterations) / std::max(1, tm.steps), s.max_iterations);
  return s;
}

/// Ends a run whose simulation `k` failed: the simulations before it are committed, with an
/// `incomplete` attribute saying so; none are when it was the first.
[[noreturn]] void stop_at_failure(io::CacheWriter& writer, const std::vector<SimulationSpec>& sims,
                                  std::size_t k, const SimulationResult& result) {
  const SimulationSpec& spec = sims[k];
  // With no simulation completed there is nothing to keep: the writer is not committed, so
  // an existing database stays as it was.
  if (k == 0)
    throw RunError(column_text(spec) + ": " + result.message + "; no simulation was completed, " +
                   writer.path().string() + " is left as it was");
  const std::string kept = "it keeps the " + std::to_string(k) + " simulation" +
                           (k == 1 ? "" : "s") + " before it (" + sims.front().name +
                           (k == 1 ? "" : ".." + sims[k - 1].name) + ")";
  // Said in the file too: a shard cut short merged with the others without a word, and
  // the merged database looked whole (dd-cache merge warns of an input that says this).
  writer.set_attribute("/", "incomplete",
                       spec.name + " failed, and the simulations after it were not run; " + kept);
  writer.commit();
  io::commit_held_files();  // kept although the run fails
  throw RunError(column_text(spec) + ": " + result.message + "; " + writer.path().string() +
                 " was written: " + kept);
}

}  // namespace

std::vector<SimulationSummary> write_database(const DatabaseParams& params,
                                              const std::vector<SimulationSpec>& sims,
                                              const RunOptions& options, io::CacheWriter& writer) {
  const Scene& base = params.scene;
  const std::vector<std::int64_t> frames =
      options.frames.empty() ? output_frames(base, std::nullopt) : options.frames;
  Scene scene = base;  // simulate up to the last stored frame only
  scene.duration = static_cast<double>(frames.back() - 1) / base.frame_rate;
  const Tank tank(base.tank, base.l0, base.wall_layers, base.dummy_layers);
  const std::size_t count = sims.size();
  const std::size_t total_frames = frame_count(scene) * count;

  std::vector<Job> jobs(count);
  for (std::size_t k = 0; k < count; ++k) jobs[k].spec = &sims[k];
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<std::size_t> next{0}, frames_done{0};
  std::atomic<std::size_t> first_failed{std::numeric_limits<std::size_t>::max()};
  std::atomic<bool> abort_all{false};
  std::string note;

  auto run_one = [&](std::size_t k) {
    Job& job = jobs[k];
    const auto t0 = std::chrono::steady_clock::now();
    const InitialWater water = initial_water(tank, base, job.spec->column);
    job.fluid = static_cast<std::size_t>(water.position.rows());
    std::size_t next_frame = 0;  // index into `frames`
    auto on_frame = [&](std::size_t index, double time, const MpsSolver& solver) {
      if (abort_all.load() || k > first_failed.load()) throw Cancelled{};
      if (next_frame < frames.size() && frames[next_frame] == static_cast<std::int64_t>(index) + 1)
        job.keep_frame(solver, params.output, frames[next_frame++], time);
      frames_done.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(mu);
        note = job.spec->name + " t = " + number_text(time) + " s";
      }
      cv.notify_all();
    };
    job.position.reserve(frames.size() * job.fluid * 2);
    job.result = run_simulation(tank, scene, params.solver, water, on_frame);
    job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!job.result.ok) {
      std::size_t cur = first_failed.load();
      while (k < cur && !first_failed.compare_exchange_weak(cur, k)) {
      }
    }
  };

  // Workers: `lanes` tasks each take the next simulation in index order; a simulation's own loops
  // are isolated so a waiting thread never picks up another whole simulation.
  const std::size_t lanes = std::max<std::size_t>(
      1, std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, options.threads))));
  std::thread compute([&] {
    tbb::task_group group;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      group.run([&] {
        for (;;) {
          const std::size_t k = next.fetch_add(1);
          if (k >= count) break;
          Job& job = jobs[k];
          if (!abort_all.load() && k <= first_failed.load()) {
            try {
              tbb::this_task_arena::isolate([&] { run_one(k); });
            } catch (const Cancelled&) {
            } catch (...) {
              job.error = std::current_exception();
            }
          }
          {
            std::lock_guard<std::mutex> lock(mu);
            job.done = true;
          }
          cv.notify_all();
        }
      });
    }
    group.wait();
  });
  struct Joiner {
    std::thread& t;
    std::atomic<bool>& abort;
    std::condition_variable& cv;
    ~Joiner() {
      abort = true;
      cv.notify_all();
      if (t.joinable()) t.join();
    }
  } joiner{compute, abort_all, cv};

  app::Progress progress("frame", total_frames);
  std::size_t ticked = 0;
  std::vector<SimulationSummary> summaries;
  for (std::size_t k = 0; k < count; ++k) {
    Job& job = jobs[k];
    for (;;) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::milliseconds(200));
      const bool done = job.done;
      const std::string n = note;
      lock.unlock();
      const std::size_t now = frames_done.load();
      if (now > ticked) {
        progress.tick(now - ticked, n);  // also throws on SIGINT/SIGTERM
        ticked = now;
      } else {
        app::check_interrupted();
      }
      if (done) break;
    }
    if (job.error) std::rethrow_exception(job.error);
    if (!job.result.ok) {
      abort_all = true;
      stop_at_failure(writer, sims, k, job.result);
    }
    write_simulation(writer, job, tank, params);  // this thread only
    summaries.push_back(summarize(job));
    job.position = {};
    job.velocity = {};
    job.pressure = {};
  }
  progress.finish();
  return summaries;
}

}  // namespace datadyn::fluid
