#include "wave/wave_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "app/progress.hpp"
#include "app/tool.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "io/atomic_file.hpp"
#include "wave/density_grid.hpp"
#include "wave/level_set_2d.hpp"
#include "wave/svg_curve.hpp"
#include "wave/wave_features.hpp"

namespace datadyn::wave {

using nlohmann::json;

using app::number_text;

namespace {

/// The points of a drawn target curve (`target.file`): CSV "z,h" lines (a header line allowed)
/// or an SVG's first polyline or path, x -> z and -y -> h times `svg_scale`; (z, h) in metres, in
/// the file's order. Throws IoError for a file that cannot be read or holds no curve.
std::vector<std::vector<double>> read_target_file(const std::string& name, double svg_scale) {
  std::vector<std::vector<double>> pts;
  std::ifstream in(name);
  if (!in) throw IoError(name + ": cannot open (target/file)");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const bool svg = name.size() > 4 && name.substr(name.size() - 4) == ".svg";
  if (svg) {
    std::vector<Eigen::Vector2d> drawn;
    try {
      drawn = svg_curve(text);
    } catch (const std::invalid_argument& e) {
      throw IoError(name + ": " + e.what());
    }
    for (const auto& q : drawn) pts.push_back({q.x() * svg_scale, -q.y() * svg_scale});
  } else {
    std::istringstream ls(text);
    std::string line;
    int number = 0;
    while (std::getline(ls, line)) {
      ++number;
      if (line.empty() || line[0] == '#') continue;
      std::replace(line.begin(), line.end(), ',', ' ');
      std::istringstream vs(line);
      double z, h;
      if (!(vs >> z >> h)) {
        if (pts.empty()) continue;  // a header line
        throw IoError(name + ":" + std::to_string(number) + ": expected two numbers z, h, got \"" +
                      line + "\"");
      }
      pts.push_back({z, h});
    }
  }
  if (pts.empty()) throw IoError(name + ": no points in the target curve");
  return pts;
}

}  // namespace

void read_edit_params(app::ConfigReader& r, EditParams& p) {
  using namespace app;
  ConfigReader g = r.child("grid");
  g.get("spacing", p.grid_spacing, non_negative());
  g.get("min", p.grid_min);
  g.get("max", p.grid_max);
  if (!p.grid_min.empty() && p.grid_min.size() != 2)
    g.fail("min", "a list of 2 numbers [x, y] (metres)");
  if (!p.grid_max.empty() && p.grid_max.size() != 2)
    g.fail("max", "a list of 2 numbers [x, y] (metres)");
  // The grid is the particles' bounds unless both corners are given: one alone was ignored.
  if (p.grid_min.empty() != p.grid_max.empty()) {
    const bool min_given = !p.grid_min.empty();
    g.fail(min_given ? "min" : "max",
           std::string("grid.") + (min_given ? "max" : "min") +
               " given too (both corners, or neither for the particles' bounds)",
           {g.dotted(min_given ? "max" : "min")});
  }
  ConfigReader d = r.child("density");
  d.get("influence_radius", p.influence_radius, positive());
  d.get("iso_fraction", p.iso_fraction, Range{0.0, 1.0, true, true});
  r.get_output_file("features", p.features);

  r.get("cross_section", p.cross_section);
  ConfigReader t = r.child("target");
  // A drawn curve becomes the points, before they are read: the resolved config (--print-config,
  // every output's provenance) then holds the curve the run follows, where it showed the default
  // points that the file had replaced.
  t.get("svg_scale", p.svg_scale, positive());
  t.get_input_file("file", p.target_file);
  if (!p.target_file.empty()) p.target_points = read_target_file(p.target_file, p.svg_scale);
  const auto from_file = p.target_points;
  t.get("points", p.target_points);
  // Points beside a file would be ignored, unless they are the file's own, as a stored config
  // records them: re-running it checks that the file still draws that curve.
  if (!p.target_file.empty() && p.target_points != from_file)
    t.fail("points",
           "no points with target.file, or the points read from it (" + json_text(from_file) +
               ", as a resolved config records them)",
           {t.dotted("file"), t.dotted("svg_scale")});
  for (const auto& pt : p.target_points)
    if (pt.size() != 2) t.fail("points", "a list of [z, h] pairs (metres)");
  if (p.target_points.empty()) t.fail("points", "at least one [z, h] point");
  t.get("tolerance", p.target_tolerance, non_negative());
  ConfigReader s = r.child("slices");
  // At most 4096 slices: the report lists one simulation per slice in an HDF5 attribute, which
  // holds about 8,000 numbers (more failed at the end of the run), and 4096 slices of a wave
  // are far beyond what selection by cross-section needs.
  s.get("count", p.slice_count, in_range(1, 4096));
  s.get("spacing", p.slice_spacing, positive());
  // A coordinate in metres: 1e308 passed and gave a level set whose origin no float holds.
  s.get("first_z", p.first_z, in_range(-1e6, 1e6));
  r.get("alpha", p.alpha, unit_interval());
  std::vector<int> fixed_slices;
  r.get_list<FixedSlice>(
      "fixed", p.fixed, FixedSlice{},
      [&](ConfigReader& f, FixedSlice& x) {
        int slice = static_cast<int>(x.slice);
        f.get("slice", slice, at_least(0));
        if (slice >= p.slice_count)
          f.fail("slice",
                 "a slice index in [0, " + std::to_string(p.slice_count - 1) +
                     "] (slices.count = " + std::to_string(p.slice_count) + ")",
                 {s.dotted("count")});
        // A slice fixed twice: the later entry won silently.
        if (std::find(fixed_slices.begin(), fixed_slices.end(), slice) != fixed_slices.end())
          f.fail("slice", "a slice no other entry of /fixed names");
        fixed_slices.push_back(slice);
        x.slice = static_cast<std::size_t>(slice);
        f.get("simulation", x.simulation, at_least(-1));
      },
      static_cast<std::size_t>(p.slice_count),
      " (one per slice: slices.count = " + std::to_string(p.slice_count) + ")",
      {s.dotted("count")});
  r.get_enum("method", p.method,
             {{"optimal", SelectionMethod::Optimal}, {"greedy", SelectionMethod::Greedy}});
  if (p.method == SelectionMethod::Greedy && p.fixed.empty())
    r.fail("fixed", "at least one fixed slice for the greedy method (eq. 8 grows outward from it)",
           {r.dotted("method")});
  ConfigReader a = r.child("align_time");
  a.get("enabled", p.align_time);
  a.get("arrival_fraction", p.arrival_fraction, Range{0.0, 1.0, true, true});
  r.get_enum("blend", p.blend, {{"linear", BlendMethod::Linear}, {"cubic", BlendMethod::Cubic}});
  // At most 100 voxels, as mesh-export's widths: OpenVDB's narrow bands are a few voxels, and a
  // band of 1e308 made the level set's background infinite.
  r.get("band", p.band, in_range(1.0, 100.0));
  r.get("close_ends", p.close_ends);
}

namespace {

/// Intersects the level set `phi` ([nz, ny, nx]) with the slab lo <= z <= hi: phi = max(phi,
/// distance outside the slab), clamped to the band, so the water ends in flat caps there.
void cap_ends(std::vector<float>& phi, const io::GridSpec& spec, double lo, double hi,
              double band) {
  const std::size_t layer = spec.nx * spec.ny;
  for (std::size_t k = 0; k < spec.nz; ++k) {
    const double z = spec.origin.z() + static_cast<double>(k) * spec.voxel_size;
    const auto outside = static_cast<float>(std::clamp(std::max(lo - z, z - hi), -band, band));
    for (std::size_t i = k * layer; i < (k + 1) * layer; ++i) phi[i] = std::max(phi[i], outside);
  }
}

/// The database's simulations, checked to be alike.
struct Database {
  std::filesystem::path path;
  std::vector<std::string> names;
  std::size_t frames = 0;
  double frame_rate = 0;
  std::vector<std::int64_t> frame_numbers;
  std::vector<double> times;
  double l0 = 0;
  std::string incomplete;  // the root's `incomplete`: what a failed mps-gen run did not finish
};

Database open_database(const io::CacheReader& cache) {
  Database db;
  db.path = cache.path();
  db.names = cache.sequence_names();
  const std::string file = cache.path().string();
  // A database kept by a failed run (mps-gen writes what it finished and says so): the edit
  // can pick only from what is there, and its range may be far narrower than the sweep's.
  const io::Attributes root = cache.attributes("/");
  if (const auto it = root.find("incomplete"); it != root.end()) {
    db.incomplete = std::holds_alternative<std::string>(it->second)
                        ? std::get<std::string>(it->second)
                        : io::attribute_string(it->second);
    spdlog::warn("{}: /@incomplete: {}; the edit picks from the {} simulation{} it holds", file,
                 db.incomplete, db.names.size(), db.names.size() == 1 ? "" : "s");
  }
  if (db.names.empty()) throw IoError(file + ": /sequences: the database holds no simulations");
  for (std::size_t k = 0; k < db.names.size(); ++k) {
    const io::SequenceReader s = cache.sequence(db.names[k]);
    const std::string where = file + ": /sequences/" + s.name();
    if (s.dimension() != 2)
      throw IoError(where + ": expected a 2D simulation, got dimension " +
                    std::to_string(s.dimension()));
    if (!s.has("points/position")) throw IoError(where + "/points/position: missing");
    if (k == 0) {
      db.frames = s.frame_count();
      db.frame_rate = s.frame_rate();
      db.frame_numbers = s.frames();
      db.times = s.times();  // finite: the cache reader checks them
    } else if (s.frame_rate() != db.frame_rate || s.frame_count() != db.frames) {
      throw IoError(where + ": expected " + std::to_string(db.frames) + " frames at " +
                    std::to_string(db.frame_rate) + " fps like /sequences/" + db.names[0] +
                    ", got " + std::to_string(s.frame_count()) + " at " +
                    std::to_string(s.frame_rate()) +
                    " fps (every simulation of a database must share frames and frame rate)");
    }
    // l0 (the particle spacing) is optional - a database from another solver may not have it,
    // and grid.spacing then says the resolution - but where it is, it is one value > 0 that every
    // simulation shares.
    const io::Attributes attrs = s.attributes();
    const auto it = attrs.find("l0");
    const bool has_l0 = it != attrs.end();
    const double* value = has_l0 ? std::get_if<double>(&it->second) : nullptr;
    if (has_l0 && !(value && std::isfinite(*value) && *value > 0))
      throw IoError(where + "/@l0: expected the particle spacing, a number > 0 (metres), got " +
                    io::attribute_string(it->second));
    const double l0 = value ? *value : 0.0;
    if (k == 0) {
      db.l0 = l0;
    } else if ((l0 > 0) != (db.l0 > 0)) {
      throw IoError(where + (has_l0 ? "/@l0: present" : ": no attribute l0") +
                    ", while /sequences/" + db.names[0] + (has_l0 ? " has none" : " has one") +
                    ": simulations must share a resolution");
    } else if (std::abs(l0 - db.l0) > 1e-12 * db.l0) {
      throw IoError(where + "/@l0: " + io::attribute_string(l0) + " differs from /sequences/" +
                    db.names[0] + "'s " + io::attribute_string(db.l0) +
                    ": simulations must share a resolution");
    }
  }
  if (db.frames == 0) throw IoError(file + ": the simulations have no frames");
  return db;
}

/// Fluid particles of simulation `s` at frame index f (points/type == 0 when the array exists).
Points2 fluid_positions(const io::CacheReader& cache, const io::SequenceReader& s, std::size_t f) {
  const auto all = s.positions(f);
  // A NaN position (another program's damage) was dropped by the density grid without a word.
  if (!all.allFinite()) {
    Eigen::Index i = 0;
    while (all.row(i).allFinite()) ++i;
    throw IoError(cache.path().string() + ": /sequences/" + s.name() + "/points/position: frame " +
                  std::to_string(s.frames()[f]) + ": point " + std::to_string(i) +
                  " is not finite");
  }
  if (!s.has("points/type")) return all;
  const auto type = s.read_static<std::int32_t>("points/type");
  Points2 out(static_cast<Eigen::Index>(std::count(type.data.begin(), type.data.end(), 0)), 2);
  Eigen::Index k = 0;
  for (std::size_t i = 0; i < type.data.size(); ++i)
    if (type.data[i] == 0) out.row(k++) = all.row(static_cast<Eigen::Index>(i));
  return out;
}

Grid2Spec feature_grid(const EditParams& p, const Database& db, const io::CacheReader& cache,
                       const app::ConfigOrigin& origin) {
  const double h = p.grid_spacing > 0 ? p.grid_spacing : db.l0;
  if (!(h > 0))
    throw ConfigError(origin({"grid.spacing"}), "/grid/spacing",
                      "a spacing > 0 (the database has no l0 attribute to default to)", "0");
  Eigen::Vector2d lo, hi;
  if (!p.grid_min.empty() && !p.grid_max.empty()) {
    lo = {p.grid_min[0], p.grid_min[1]};
    hi = {p.grid_max[0], p.grid_max[1]};
  } else {
    // The particles' bounds over every frame of every simulation, plus the influence radius.
    lo.setConstant(std::numeric_limits<double>::infinity());
    hi = -lo;
    for (const auto& name : db.names) {
      const io::SequenceReader s = cache.sequence(name);
      for (std::size_t f = 0; f < db.frames; ++f) {
        const Points2 x = fluid_positions(cache, s, f);
        if (x.rows() == 0) continue;
        lo = lo.cwiseMin(x.colwise().minCoeff().transpose());
        hi = hi.cwiseMax(x.colwise().maxCoeff().transpose());
      }
    }
    const double margin = p.influence_radius * (db.l0 > 0 ? db.l0 : h) + 2 * h;
    lo.array() -= margin;
    hi.array() += margin;
  }
  if (!(hi.x() > lo.x() && hi.y() > lo.y()))
    throw ConfigError(origin({"grid"}), "/grid", "max > min", "an empty grid");
  // At most 1e8 grid points (0.8 GB per simulation frame): a finer spacing is a typo, and at
  // 1e-4 m on a 2 m flume the feature pass ran for hours.
  const double points = ((hi.x() - lo.x()) / h + 1) * ((hi.y() - lo.y()) / h + 1);
  if (!(points <= 1e8)) {
    char buf[160];
    std::snprintf(
        buf, sizeof buf,
        "a spacing giving at most 1e8 grid points over the %.4g x %.4g m grid (>= %.3g m)",
        hi.x() - lo.x(), hi.y() - lo.y(), std::sqrt((hi.x() - lo.x()) * (hi.y() - lo.y()) / 1e8));
    throw ConfigError(origin({"grid", "density.influence_radius"}), "/grid/spacing", buf,
                      app::json_text(json(h)));
  }
  Grid2Spec g;
  g.origin = lo;
  g.spacing = h;
  g.nx = static_cast<std::size_t>(std::ceil((hi.x() - lo.x()) / h)) + 1;
  g.ny = static_cast<std::size_t>(std::ceil((hi.y() - lo.y()) / h)) + 1;
  return g;
}

/// Identity of the database and of the feature parameters, stored with the features.
json features_key(const Database& db, const io::CacheReader& cache, const Grid2Spec& g,
                  const DensityParams& d, double iso) {
  // The tools' outputs follow from their config, so the database's provenance names its content;
  // the time, size and sequence names alone matched two sweeps in another order (same bytes
  // count, one SOURCE_DATE_EPOCH), and the edit used the other database's heights.
  const io::Provenance prov = cache.provenance();
  json k;
  k["database_generator"] = prov.generator;
  k["database_command_line"] = prov.command_line;
  k["database_config"] = prov.config_json;
  k["database_created_utc"] = prov.created_utc;
  k["database_size"] = std::filesystem::file_size(db.path);
  k["database_sequences"] = db.names;
  k["grid"] = {
      {"nx", g.nx}, {"ny", g.ny}, {"origin", {g.origin.x(), g.origin.y()}}, {"spacing", g.spacing}};
  k["influence_radius"] = d.influence_radius;
  k["iso"] = iso;
  return k;
}

std::optional<WaveFeatures> load_features(const std::filesystem::path& path, const json& key,
                                          const Grid2Spec& g, const Database& db, double iso) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    io::CacheReader r(path);
    const io::Attributes a = r.attributes("/features");
    const auto it = a.find("key");
    if (it == a.end() || !std::holds_alternative<std::string>(it->second) ||
        std::get<std::string>(it->second) != app::json_dump(key)) {
      spdlog::info(
          "{}: made for another database or other parameters; computing the features again",
          path.string());
      return std::nullopt;
    }
    WaveFeatures f;
    f.grid = g;
    f.iso = iso;
    f.simulations = db.names.size();
    f.frames = db.frames;
    f.heights = r.read_array<float>("/features/heights").data;
    const auto dist = r.read_array<double>("/features/distance");
    if (f.heights.size() != f.simulations * f.frames * g.nx ||
        dist.data.size() != f.simulations * f.simulations)
      throw IoError(path.string() + ": /features: shapes do not match the database");
    // Values a computation cannot give are damage (the shapes may be right): NaN distances made
    // an arbitrary selection with exit 0, and bad heights failed the target as a config error.
    const double bottom = g.origin.y(),
                 top = g.origin.y() + static_cast<double>(g.ny - 1) * g.spacing;
    // Heights are stored as float32: a relative 1e-6 is 16 times its rounding.
    const double slack = 1e-6 * (std::abs(bottom) + std::abs(top) + g.spacing);
    for (std::size_t i = 0; i < f.heights.size(); ++i)
      if (!(f.heights[i] >= bottom - slack && f.heights[i] <= top + slack))
        throw IoError(path.string() + ": /features/heights: element " + std::to_string(i) + " is " +
                      number_text(f.heights[i]) + ", outside the grid's heights [" +
                      number_text(bottom) + ", " + number_text(top) + "] m");
    for (std::size_t i = 0; i < dist.data.size(); ++i)
      if (!(dist.data[i] >= 0.0 && dist.data[i] <= 1.0))
        throw IoError(path.string() + ": /features/distance: element " + std::to_string(i) +
                      " is " + number_text(dist.data[i]) +
                      ", expected a normalised distance in [0, 1]");
    f.distance =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            dist.data.data(), static_cast<Eigen::Index>(f.simulations),
            static_cast<Eigen::Index>(f.simulations));
    return f;
  } catch (const IoError& e) {
    spdlog::warn("{}; computing the features again", e.what());
    return std::nullopt;
  }
}

WaveFeatures compute_features(const io::CacheReader& cache, const Database& db, const Grid2Spec& g,
                              const DensityParams& d, double iso) {
  FeatureBuilder builder(g, iso, db.names.size(), db.frames);
  std::vector<io::SequenceReader> seqs;
  for (const auto& n : db.names) seqs.push_back(cache.sequence(n));
  app::Progress progress("frame", db.frames);
  for (std::size_t t = 0; t < db.frames; ++t) {
    std::vector<Points2> positions;  // HDF5 on this thread only
    for (const auto& s : seqs) positions.push_back(fluid_positions(cache, s, t));
    std::vector<Grid2> grids(seqs.size());
    parallel_for(seqs.size(), 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) grids[k] = density_grid(positions[k], g, d);
    });
    builder.add_frame(t, grids);
    progress.tick(1, "features");
  }
  progress.finish();
  return builder.finish();
}

void store_features(const std::filesystem::path& path, const WaveFeatures& f, const json& key,
                    const io::Provenance& prov) {
  io::CacheWriter w(path, prov);
  w.write_array("/features/heights", io::view(f.heights, {f.simulations, f.frames, f.grid.nx}));
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> dist = f.distance;
  w.write_array("/features/distance", io::view(dist));
  w.set_attribute("/features", "key", app::json_dump(key));
  w.commit();
}

/// The target curve as (z, h) points sorted by z.
std::vector<Eigen::Vector2d> target_curve(const EditParams& p) {
  std::vector<Eigen::Vector2d> pts;
  for (const auto& q : p.target_points) pts.emplace_back(q[0], q[1]);
  std::stable_sort(pts.begin(), pts.end(),
                   [](const auto& a, const auto& b) { return a.x() < b.x(); });
  return pts;
}

double curve_at(const std::vector<Eigen::Vector2d>& c, double z) {
  if (z <= c.front().x()) return c.front().y();
  if (z >= c.back().x()) return c.back().y();
  for (std::size_t k = 1; k < c.size(); ++k) {
    if (z <= c[k].x()) {
      const double w = (z - c[k - 1].x()) / std::max(c[k].x() - c[k - 1].x(), 1e-300);
      return (1 - w) * c[k - 1].y() + w * c[k].y();
    }
  }
  return c.back().y();
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  io::AtomicFile f(path);
  f.write(text);
  f.commit();
}

/// An SVG like the paper's fig. 7: the target curve and the heights the chosen simulations reach.
std::string selection_svg(const std::vector<double>& z, const Eigen::VectorXd& target,
                          const std::vector<double>& chosen, const std::vector<double>& greedy,
                          const std::string& title) {
  const double w = 640, h = 400, m = 50;
  double zmin = z.front(), zmax = z.back();
  if (zmax <= zmin) zmax = zmin + 1;
  double hmin = target.minCoeff(), hmax = target.maxCoeff();
  for (double v : chosen) hmin = std::min(hmin, v), hmax = std::max(hmax, v);
  for (double v : greedy) hmin = std::min(hmin, v), hmax = std::max(hmax, v);
  const double pad = 0.1 * std::max(hmax - hmin, 1e-3);
  hmin -= pad;
  hmax += pad;
  auto X = [&](double v) { return m + (w - 2 * m) * (v - zmin) / (zmax - zmin); };
  auto Y = [&](double v) { return h - m - (h - 2 * m) * (v - hmin) / (hmax - hmin); };
  std::ostringstream os;
  os.precision(5);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << m << "\" y=\"25\" font-family=\"sans-serif\" font-size=\"14\">" << title
     << "</text>\n"
     << "<line x1=\"" << m << "\" y1=\"" << h - m << "\" x2=\"" << w - m << "\" y2=\"" << h - m
     << "\" stroke=\"black\"/>\n"
     << "<line x1=\"" << m << "\" y1=\"" << m << "\" x2=\"" << m << "\" y2=\"" << h - m
     << "\" stroke=\"black\"/>\n"
     << "<text x=\"" << w / 2 << "\" y=\"" << h - 12
     << "\" font-family=\"sans-serif\" font-size=\"12\">slice position z (m)</text>\n"
     << "<text x=\"8\" y=\"" << m - 10
     << "\" font-family=\"sans-serif\" font-size=\"12\">height (m): "
     << std::to_string(hmin).substr(0, 5) << " to " << std::to_string(hmax).substr(0, 5)
     << "</text>\n";
  auto polyline = [&](const std::vector<double>& v, const char* colour, const char* extra) {
    os << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" " << extra
       << " points=\"";
    for (std::size_t i = 0; i < v.size(); ++i) os << X(z[i]) << "," << Y(v[i]) << " ";
    os << "\"/>\n";
  };
  polyline(std::vector<double>(target.data(), target.data() + target.size()), "red", "");
  polyline(greedy, "gray", "stroke-dasharray=\"6,4\"");
  polyline(chosen, "blue", "");
  for (std::size_t i = 0; i < z.size(); ++i)
    os << "<circle cx=\"" << X(z[i]) << "\" cy=\"" << Y(chosen[i])
       << "\" r=\"3\" fill=\"blue\"/>\n";
  os << "<text x=\"" << w - 220
     << "\" y=\"45\" font-family=\"sans-serif\" font-size=\"12\" fill=\"red\">target T</text>\n"
     << "<text x=\"" << w - 220
     << "\" y=\"60\" font-family=\"sans-serif\" font-size=\"12\" fill=\"blue\">chosen "
        "H_d(i)(s)</text>\n"
     << "<text x=\"" << w - 220
     << "\" y=\"75\" font-family=\"sans-serif\" font-size=\"12\" fill=\"gray\">greedy "
        "H_d(i)(s)</text>\n"
     << "</svg>\n";
  return os.str();
}

/// The checks of the edit against the database, before any work: the 3D grid's size, the cross
/// The 3D level set's layers along z, as a double (a config far out of range must not overflow
/// before it is refused): one per grid spacing from the first slice to the last, and with closed
/// ends `pad` more on each side, where the water goes on half a slice spacing beyond the outer
/// slices and the grid a band further, so that the surface closes inside the grid.
struct LevelSetLayers {
  double pad = 0, nz = 0;
};
LevelSetLayers level_set_layers(const EditParams& p, const Grid2Spec& grid) {
  LevelSetLayers l;
  if (p.close_ends)
    l.pad = std::ceil((0.5 * p.slice_spacing + p.band * grid.spacing) / grid.spacing);
  l.nz = std::round((p.slice_count - 1.0) * p.slice_spacing / grid.spacing) + 1 + 2 * l.pad;
  return l;
}

/// section within the feature grid, the fixed slices and simulations.
void check_edit(const EditParams& p, const Database& db, const Grid2Spec& grid,
                const EditRun& run) {
  // The 3D level set has one grid slice per spacing along z. A frame is one chunk of the cache:
  // at 5.5e8 voxels (2.2 GB as float32) its compression was skipped (a 2 GB chunk, stored raw)
  // and the run held 5.9 GB; at 1.9e8 it compressed to 15 MB with 3.4 GB held. At most 2.5e8
  // voxels (1 GB a frame).
  const double depth = level_set_layers(p, grid).nz;
  if (!(depth * static_cast<double>(grid.nx) * static_cast<double>(grid.ny) <= 2.5e8))
    throw ConfigError(
        run.origin({"slices", "grid", "close_ends", "band", "density.influence_radius"}),
        "/slices/spacing",
        "slices spanning at most 2.5e8 voxels of the 3D level set (" + std::to_string(grid.nx) +
            " x " + std::to_string(grid.ny) + " grid points a layer)",
        app::json_text(json(p.slice_spacing)));
  // Beyond the feature grid every height is its edge's: the range would be that of no water.
  const double x_first = grid.origin.x(),
               x_last = grid.origin.x() + grid.spacing * static_cast<double>(grid.nx - 1);
  if (!(p.cross_section >= x_first && p.cross_section <= x_last))
    throw ConfigError(
        run.origin({"cross_section", "grid", "density.influence_radius"}), "/cross_section",
        "a position within the feature grid, where the database's water is: [" +
            app::json_text(json(x_first)) + ", " + app::json_text(json(x_last)) + "] m",
        app::json_text(json(p.cross_section)));
  for (const FixedSlice& f : p.fixed) {
    if (f.slice >= static_cast<std::size_t>(p.slice_count))
      throw ConfigError(run.origin({"fixed", "slices.count"}), "/fixed",
                        "slices in [0, " + std::to_string(p.slice_count - 1) + "]",
                        std::to_string(f.slice));
    if (f.simulation >= static_cast<int>(db.names.size()))
      throw ConfigError(run.origin({"fixed"}), "/fixed",
                        "simulations in [-1, " + std::to_string(db.names.size() - 1) + "]",
                        std::to_string(f.simulation));
  }
}

/// The database frames (indices) this run writes: those of --frames, else all, then the shard's
/// part. Every shard selects the same slices (the selection does not depend on the frames); each
/// writes its part of the frames, so dd-cache merge gives the single run's cache.
std::vector<std::size_t> frames_to_edit(const Database& db, const EditRun& run) {
  std::vector<std::size_t> frame_index;
  if (run.frames) {
    for (std::int64_t f : *run.frames) {
      auto it = std::find(db.frame_numbers.begin(), db.frame_numbers.end(), f);
      if (it == db.frame_numbers.end())
        throw UsageError("--frames: frame " + std::to_string(f) +
                         " is not in the database (frames " +
                         std::to_string(db.frame_numbers.front()) + "-" +
                         std::to_string(db.frame_numbers.back()) + ")");
      frame_index.push_back(static_cast<std::size_t>(it - db.frame_numbers.begin()));
    }
  } else {
    for (std::size_t t = 0; t < db.frames; ++t) frame_index.push_back(t);
  }
  return shard_part(frame_index, run.shard);
}

/// The features from run.features when they match the database, else computed and stored there.
WaveFeatures obtain_features(const io::CacheReader& cache, const Database& db,
                             const Grid2Spec& grid, const DensityParams& density, double iso,
                             const EditRun& run) {
  const std::filesystem::path& features_path = run.features;
  const json key = features_key(db, cache, grid, density, iso);
  if (std::optional<WaveFeatures> loaded = load_features(features_path, key, grid, db, iso)) {
    spdlog::info("features from {}", features_path.string());
    return std::move(*loaded);
  }
  WaveFeatures features = compute_features(cache, db, grid, density, iso);
  // A dry run computes them (seconds) to check the target, and keeps nothing. They are only
  // a cache: where they cannot be written (a read-only database library) the edit goes on.
  try {
    if (run.dry_run) {
      io::check_writable_directory(features_path);
    } else {
      // What made them is the database and the feature parameters (the key), not the edit that
      // happened to compute them first: racing shards and later edits write the same bytes.
      io::Provenance provenance = run.provenance;
      provenance.command_line.clear();
      provenance.config_json = app::json_dump(key);
      store_features(features_path, features, key, provenance);
      io::commit_held_files();  // a cache of the database's, kept whatever the edit does
      spdlog::info("features stored in {}", features_path.string());
    }
  } catch (const IoError& e) {
    spdlog::warn(
        "features not stored ({}): every run computes them again; set features to a "
        "writable path to keep them",
        e.what());
  }
  return features;
}

/// Clamps the target heights into the database's range [min, max] of `heights`; a target
/// further outside than the tolerance is a ConfigError.
void clamp_target(Eigen::VectorXd& target, const Eigen::VectorXd& heights, const EditParams& p,
                  const EditRun& run, const Database& db) {
  const double hlo = heights.minCoeff(), hhi = heights.maxCoeff();
  for (Eigen::Index i = 0; i < target.size(); ++i) {
    double& t = target(i);
    const double excess = std::max(hlo - t, t - hhi);
    if (excess > p.target_tolerance) {
      throw ConfigError(
          run.origin({"target", "cross_section", "slices", "density", "grid"}), "/target",
          "heights within the database's range at s = " + std::to_string(p.cross_section) +
              " m: [" + std::to_string(hlo) + ", " + std::to_string(hhi) + "] m (± tolerance " +
              std::to_string(p.target_tolerance) + " m)" +
              (db.incomplete.empty()
                   ? std::string()
                   : " of the " + std::to_string(db.names.size()) + " simulation" +
                         (db.names.size() == 1 ? "" : "s") + " an incomplete database holds (" +
                         db.path.string() + ": " + db.incomplete + ")"),
          std::to_string(t) + " m at slice " + std::to_string(i) + ", " + std::to_string(excess) +
              " m outside");
    }
    if (excess > 0) {
      spdlog::warn(
          "target at slice {} ({:.4f} m) is {:.4f} m outside the database's range [{:.4f}, {:.4f}] "
          "m: clamped",
          i, t, excess, hlo, hhi);
      t = std::clamp(t, hlo, hhi);
    }
  }
}

/// Time alignment: each slice's frame offset, so its wave arrives at s when the reference
/// slice's does (all 0 without align_time).
std::vector<long> time_offsets(const EditParams& p, const WaveFeatures& features,
                               const Selection& chosen) {
  const auto S = static_cast<std::size_t>(p.slice_count);
  std::vector<long> offset(S, 0);
  if (!p.align_time) return offset;
  const auto arrival = [&](std::size_t slice) {
    return static_cast<long>(features.arrival_frame(
        static_cast<std::size_t>(chosen.simulation[slice]), p.cross_section, p.arrival_fraction));
  };
  const long ref = arrival(p.fixed.empty() ? S / 2 : p.fixed.front().slice);
  for (std::size_t i = 0; i < S; ++i) offset[i] = arrival(i) - ref;
  return offset;
}

/// The selections of an edit: the optimal one, the greedy one when slices are fixed, and the one
/// the config's method chose.
struct Selections {
  Selection optimal;
  std::optional<Selection> greedy;
  const Selection& chosen(SelectionMethod method) const {
    return method == SelectionMethod::Optimal ? optimal : *greedy;
  }
};

/// The report JSON: the problem, both selections' objectives and, per slice, the picks.
json edit_report(const EditParams& p, const EditRun& run, const Database& db,
                 const SelectionProblem& problem, const std::vector<double>& z,
                 const Selections& sel, const std::vector<long>& offset) {
  const Eigen::MatrixXd sh = shape_scores(problem.heights, problem.target);
  json report;
  report["provenance"] = app::provenance_json(run.provenance);
  report["database"] = run.database.string();
  report["simulations"] = db.names;
  report["cross_section"] = p.cross_section;
  report["alpha"] = p.alpha;
  report["method"] = p.method == SelectionMethod::Optimal ? "optimal" : "greedy";
  report["objective"] = {{"optimal", sel.optimal.objective},
                         {"greedy", sel.greedy ? json(sel.greedy->objective) : json(nullptr)}};
  report["database_height_range"] = {problem.heights.minCoeff(), problem.heights.maxCoeff()};
  report["heights_at_cross_section"] =
      std::vector<double>(problem.heights.data(), problem.heights.data() + problem.heights.size());
  for (std::size_t i = 0; i < z.size(); ++i) {
    json s;
    s["slice"] = i;
    s["z"] = z[i];
    s["target"] = problem.target(static_cast<Eigen::Index>(i));
    auto pick = [&](const Selection& chosen) {
      const int n = chosen.simulation[i];
      return json{{"simulation", db.names[static_cast<std::size_t>(n)]},
                  {"index", n},
                  {"height", problem.heights(n)},
                  {"S_h", sh(n, static_cast<Eigen::Index>(i))}};
    };
    s["optimal"] = pick(sel.optimal);
    if (sel.greedy) s["greedy"] = pick(*sel.greedy);
    s["time_offset_frames"] = offset[i];
    report["slices"].push_back(s);
  }
  return report;
}

/// The picture of target and achieved heights (the greedy curve is the chosen one's without
/// fixed slices).
std::string edit_plot(const EditParams& p, const SelectionProblem& problem,
                      const std::vector<double>& z, const Selections& sel) {
  const Selection& chosen = sel.chosen(p.method);
  std::vector<double> chosen_h(z.size()), greedy_h(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) {
    chosen_h[i] = problem.heights(chosen.simulation[i]);
    greedy_h[i] = sel.greedy ? problem.heights(sel.greedy->simulation[i]) : chosen_h[i];
  }
  return selection_svg(
      z, problem.target, chosen_h, greedy_h,
      "target and achieved heights at s = " + std::to_string(p.cross_section).substr(0, 6) +
          " m, alpha " + std::to_string(p.alpha).substr(0, 4));
}

/// Writes the 3D level-set sequence of the frames `frame_index`: each frame blends the chosen
/// simulations' 2D distance fields, shifted by `offset` frames, along z.
void write_surface(const EditParams& p, const EditRun& run, const io::CacheReader& cache,
                   const Database& db, const Grid2Spec& grid, const DensityParams& density,
                   double iso, const std::vector<double>& z, const Selection& chosen,
                   const std::vector<long>& offset, const std::vector<std::size_t>& frame_index) {
  const auto S = static_cast<std::size_t>(p.slice_count);
  // Layers from the first slice to the last; with closed ends, the water goes on half a slice
  // spacing beyond them, and the grid a band further, so the surface closes inside the grid.
  const double last_z = p.first_z + (static_cast<double>(S) - 1) * p.slice_spacing;
  const double band_m = p.band * grid.spacing;
  const double reach = p.close_ends ? 0.5 * p.slice_spacing : 0.0;
  const LevelSetLayers layers = level_set_layers(p, grid);
  const auto pad = static_cast<std::size_t>(layers.pad);
  io::GridSpec out_spec;
  out_spec.nx = grid.nx;
  out_spec.ny = grid.ny;
  out_spec.nz = static_cast<std::size_t>(layers.nz);
  const double origin_z = p.first_z - static_cast<double>(pad) * grid.spacing;
  out_spec.origin = {grid.origin.x(), grid.origin.y(), origin_z};
  out_spec.voxel_size = grid.spacing;
  out_spec.grid_class = io::GridClass::LevelSet;
  out_spec.background = p.band;
  SliceLayout layout{p.first_z, p.slice_spacing, origin_z, grid.spacing, out_spec.nz};

  io::CacheWriter writer(run.output, run.provenance);
  auto& seq = writer.add_sequence("surface", {db.frame_rate, 3});
  seq.set_attribute("cross_section", p.cross_section);
  seq.set_attribute("alpha", p.alpha);
  std::vector<std::int64_t> chosen_idx(chosen.simulation.begin(), chosen.simulation.end());
  seq.set_attribute("slice_simulations", chosen_idx);
  seq.set_attribute("slice_z", z);
  seq.declare_grid("surface", out_spec);
  std::vector<io::SequenceReader> seqs;
  for (const auto& n : db.names) seqs.push_back(cache.sequence(n));
  std::vector<float> volume(out_spec.nz * out_spec.ny * out_spec.nx);
  app::Progress progress("frame", frame_index.size());
  for (std::size_t t : frame_index) {
    // The distinct (simulation, frame) pairs this output frame needs.
    std::map<std::pair<int, std::size_t>, std::size_t> need;
    std::vector<std::pair<int, std::size_t>> keys;
    std::vector<std::pair<int, std::size_t>> slice_key(S);
    for (std::size_t i = 0; i < S; ++i) {
      const long shifted =
          std::clamp(static_cast<long>(t) + offset[i], 0L, static_cast<long>(db.frames) - 1);
      slice_key[i] = std::make_pair(chosen.simulation[i], static_cast<std::size_t>(shifted));
      if (need.emplace(slice_key[i], keys.size()).second) keys.push_back(slice_key[i]);
    }
    std::vector<Points2> positions;  // HDF5 on this thread only
    for (const auto& k : keys)
      positions.push_back(
          fluid_positions(cache, seqs[static_cast<std::size_t>(k.first)], k.second));
    std::vector<Grid2> fields(keys.size());
    parallel_for(keys.size(), 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k)
        fields[k] = signed_distance(density_grid(positions[k], grid, density), iso, p.band);
    });
    std::vector<const Grid2*> slices(S);
    for (std::size_t i = 0; i < S; ++i) slices[i] = &fields[need.at(slice_key[i])];
    blend_slices(slices, layout, p.blend, volume);
    if (p.close_ends) cap_ends(volume, out_spec, p.first_z - reach, last_z + reach, band_m);
    seq.append_frame(
        db.frame_numbers[t], db.times[t],
        {{"grids/surface", io::view(volume, {out_spec.nz, out_spec.ny, out_spec.nx})}});
    progress.tick();
  }
  progress.finish();
  writer.commit();
}

}  // namespace

void run_wave_edit(const EditParams& p, const EditRun& run) {
  const io::CacheReader cache(run.database);
  const Database db = open_database(cache);
  const Grid2Spec grid = feature_grid(p, db, cache, run.origin);
  check_edit(p, db, grid, run);
  const double l0 = db.l0 > 0 ? db.l0 : grid.spacing;
  DensityParams density{p.influence_radius * l0, 0.25};
  const double iso =
      p.iso_fraction * M_PI * density.influence_radius * density.influence_radius / (l0 * l0);
  spdlog::info("database {}: {} simulations, {} frames at {} fps; feature grid {} x {} at {} m",
               run.database.string(), db.names.size(), db.frames, db.frame_rate, grid.nx, grid.ny,
               grid.spacing);
  // The frames to write, checked before the features are computed (seconds to minutes).
  const std::vector<std::size_t> frame_index = frames_to_edit(db, run);

  // Target heights per slice, checked against the database's range at s.
  const auto curve = target_curve(p);
  const auto S = static_cast<std::size_t>(p.slice_count);
  std::vector<double> z(S);
  SelectionProblem problem;
  problem.target = Eigen::VectorXd(static_cast<Eigen::Index>(S));
  for (std::size_t i = 0; i < S; ++i) {
    z[i] = p.first_z + p.slice_spacing * static_cast<double>(i);
    problem.target(static_cast<Eigen::Index>(i)) = curve_at(curve, z[i]);
  }
  const WaveFeatures features = obtain_features(cache, db, grid, density, iso, run);
  problem.heights = Eigen::VectorXd(static_cast<Eigen::Index>(db.names.size()));
  for (std::size_t n = 0; n < db.names.size(); ++n)
    problem.heights(static_cast<Eigen::Index>(n)) = features.max_height(n, p.cross_section);
  clamp_target(problem.target, problem.heights, p, run, db);
  if (run.dry_run) {
    // What the run would write besides the cache: the report and the picture.
    io::check_writable_directory(run.report);
    io::check_writable_directory(run.plot);
    const auto nz = static_cast<std::size_t>(level_set_layers(p, grid).nz);
    const auto bytes =
        static_cast<std::uintmax_t>(grid.nx) * grid.ny * nz * frame_index.size() * sizeof(float);
    std::printf(
        "would edit %zu slices from %zu simulations of %s into %s (%zu x %zu x %zu voxels, %zu "
        "frames: %s of level sets before compression), with the report %s and the picture %s\n",
        S, db.names.size(), run.database.c_str(), run.output.c_str(), grid.nx, grid.ny, nz,
        frame_index.size(), app::byte_text(bytes).c_str(), run.report.c_str(), run.plot.c_str());
    return;
  }
  problem.distance = features.distance;
  problem.alpha = p.alpha;
  problem.fixed = p.fixed;
  Selections sel{select_optimal(problem), std::nullopt};
  if (!p.fixed.empty()) sel.greedy = select_greedy(problem);
  const Selection& chosen = sel.chosen(p.method);
  const std::vector<long> offset = time_offsets(p, features, chosen);

  // The report and the picture are written after the cache, so a run that fails (a full disk)
  // leaves neither beside a missing cache.
  const std::string report_text =
      app::json_dump(edit_report(p, run, db, problem, z, sel, offset), 2) + "\n";
  const std::string plot_text = edit_plot(p, problem, z, sel);
  io::check_writable_directory(run.report);
  io::check_writable_directory(run.plot);
  spdlog::info("objective (eq. 7): optimal {:.6f}, greedy {}", sel.optimal.objective,
               sel.greedy ? std::to_string(sel.greedy->objective) : "-");
  write_surface(p, run, cache, db, grid, density, iso, z, chosen, offset, frame_index);
  write_text(run.report, report_text);
  write_text(run.plot, plot_text);
}

}  // namespace datadyn::wave
