// wave-edit as a process, on a small synthetic database written here: columns of water of known
// heights that spread out over a few frames.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/config.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "support/file_bytes.hpp"
#include "support/h5_poke.hpp"
#include "support/process.hpp"

using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kTool = std::string(DATADYN_BIN_DIR) + "/wave-edit";

/// `count` particles: a block of water [0, width] x [0, height] on an l0 lattice, the rest far
/// outside the feature grid (x = -10 m), where they add no density (a cache keeps N fixed).
datadyn::Points2 water_block(int count, double width, double height, double l0) {
  const int cols = static_cast<int>(width / l0 + 0.5), rows = static_cast<int>(height / l0 + 0.5);
  datadyn::Points2 x(count, 2);
  for (int k = 0; k < count; ++k) {
    if (k < cols * rows)
      x.row(k) << (k % cols + 0.5) * l0, (k / cols + 0.5) * l0;
    else
      x.row(k) << -10.0, 0.0;
  }
  return x;
}

/// Simulation n: a block of water on an l0 = 0.02 lattice, x in [0, 0.3 + 0.05 t], height
/// (0.1 + 0.05 n)(1 − 0.1 t) at frame t, so H_n(s) = 0.1 + 0.05 n at every s inside the block.
/// `incomplete`: the root attribute a failed mps-gen run leaves (none when empty).
void write_database(const std::filesystem::path& path, int sims, int frames,
                    double rate_of_last = 30.0, const std::string& config = "{}",
                    const std::string& incomplete = "") {
  datadyn::io::CacheWriter w(path, {"test", "", config, ""});
  const double l0 = 0.02;
  for (int n = 0; n < sims; ++n) {
    char name[16];
    std::snprintf(name, sizeof name, "sim_%03d", n);
    auto& s = w.add_sequence(name, {n == sims - 1 ? rate_of_last : 30.0, 2});
    s.set_attribute("l0", l0);
    const int count = 600;
    for (int t = 0; t < frames; ++t) {
      const double width = 0.3 + 0.05 * t, height = (0.1 + 0.05 * n) * (1 - 0.1 * t);
      const datadyn::Points2 x = water_block(count, width, height, l0);
      s.append_frame(t + 1, t / 30.0, {{"points/position", datadyn::io::view(x)}});
    }
  }
  if (!incomplete.empty()) w.set_attribute("/", "incomplete", incomplete);
  w.commit();
}

/// Simulation n: water H_n = 0.1 + 0.05 n high, x in [0, 0.1 + v_n t] (at most 0.56 m), its front
/// moving at v_n = 0.3 (n + 1) m/s, so it reaches x = 0.4 after about 30 / (n + 1) frames.
void write_fronts(const std::filesystem::path& path, int sims, int frames) {
  datadyn::io::CacheWriter w(path, {"test", "", "{}", ""});
  const double l0 = 0.02;
  for (int n = 0; n < sims; ++n) {
    char name[16];
    std::snprintf(name, sizeof name, "sim_%03d", n);
    auto& s = w.add_sequence(name, {30.0, 2});
    s.set_attribute("l0", l0);
    const int count = 600;
    for (int t = 0; t < frames; ++t) {
      const double width = std::min(0.1 + 0.3 * (n + 1) * t / 30.0, 0.56), height = 0.1 + 0.05 * n;
      const datadyn::Points2 x = water_block(count, width, height, l0);
      s.append_frame(t + 1, t / 30.0, {{"points/position", datadyn::io::view(x)}});
    }
  }
  w.commit();
}

/// The test edit, with the top-level keys of `extra` (", \"key\": value, ...") replacing its own
/// (a key given twice in a file is refused).
std::string config(const std::string& extra = "") {
  nlohmann::json c =
      nlohmann::json::parse(R"({"cross_section": 0.1, "slices": {"count": 5, "spacing": 0.04},
             "target": {"points": [[0, 0.12], [0.08, 0.22], [0.16, 0.12]]},
             "grid": {"min": [-0.1, -0.1], "max": [0.6, 0.4]},
             "alpha": 1.0, "fixed": [{"slice": 2}]})");
  if (!extra.empty()) {
    const nlohmann::json more = nlohmann::json::parse("{" + extra.substr(1) + "}");
    for (const auto& [key, value] : more.items()) c[key] = value;
  }
  return c.dump();
}

}  // namespace

TEST_CASE("wave-edit: picks the simulations whose heights match the curve, writes the level set") {
  TempDir dir;
  write_database(dir / "db.h5", 4, 4);
  std::ofstream(dir / "edit.json") << config();
  const auto out = dir / "surface.h5";
  auto r = run_command(kTool + " -i " + (dir / "db.h5").string() + " -c " +
                       (dir / "edit.json").string() + " -o " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Targets 0.12, 0.17, 0.22, 0.17, 0.12 against heights 0.1, 0.15, 0.2, 0.25 (minus the surface
  // sitting between lattice rows: within a few mm): with alpha 1 each slice takes its nearest.
  const auto report = nlohmann::json::parse(std::ifstream(dir / "surface.report.json"));
  std::vector<int> picked;
  for (const auto& s : report["slices"]) picked.push_back(s["optimal"]["index"]);
  CHECK(picked == std::vector<int>{0, 1, 2, 1, 0});
  CHECK(report["provenance"]["config"]["alpha"] == 1.0);
  CHECK(report["provenance"]["command_line"].get<std::string>().find("edit.json") !=
        std::string::npos);
  CHECK(report["objective"]["optimal"].get<double>() >=
        report["objective"]["greedy"].get<double>() - 1e-12);
  CHECK(std::filesystem::file_size(dir / "surface.heights.svg") > 500);

  datadyn::io::CacheReader cache(out);
  const auto s = cache.sequence("surface");
  CHECK(s.frame_count() == 4);
  const auto spec = s.grid_spec("surface");
  CHECK(spec.grid_class == datadyn::io::GridClass::LevelSet);
  // 4 slice gaps of 0.04 m at 0.02 m voxels, and on each end the closed ends' half spacing and
  // the 3-voxel band: 2 + 4 layers more.
  CHECK(spec.nz == 9 + 2 * 4);
  CHECK(spec.origin.z() == doctest::Approx(-0.08));
  CHECK(report["database_height_range"][0].get<double>() == doctest::Approx(0.1).epsilon(0.1));
  CHECK(report["database_height_range"][1].get<double>() == doctest::Approx(0.25).epsilon(0.1));
  // Frame 1, slice 2 (z = 0.08) holds simulation 2: water 0.2 m high at x = 0.1. Below the
  // surface the field is negative, above it positive.
  const auto phi = s.read_frame<float>("grids/surface", 0);
  auto at = [&](double x, double y, double z) {
    const auto i = static_cast<std::size_t>(std::lround((x - spec.origin.x()) / spec.voxel_size));
    const auto j = static_cast<std::size_t>(std::lround((y - spec.origin.y()) / spec.voxel_size));
    const auto k = static_cast<std::size_t>(std::lround((z - spec.origin.z()) / spec.voxel_size));
    return phi.data[(k * spec.ny + j) * spec.nx + i];
  };
  CHECK(at(0.1, 0.10, 0.08) < 0);
  CHECK(at(0.1, 0.26, 0.08) > 0);
  CHECK(at(0.1, 0.16, 0.0) > 0);  // slice 0 holds simulation 0: only 0.1 m of water
  CHECK(at(0.1, 0.04, 0.0) < 0);
  // The water goes on half a spacing beyond the outer slices (z = -0.02 and 0.18), then ends:
  // 0.02 m outside that the field is one voxel (0.02 m) positive, in the water's depth too.
  CHECK(at(0.1, 0.04, -0.02) < 0.001);
  CHECK(at(0.1, 0.04, -0.04) == doctest::Approx(0.02).epsilon(1e-5));
  CHECK(at(0.1, 0.04, 0.20) == doctest::Approx(0.02).epsilon(1e-5));

  // A second edit reuses the stored features.
  r = run_command("SOURCE_DATE_EPOCH=1700000000 " + kTool + " -i " + (dir / "db.h5").string() +
                  " -c " + (dir / "edit.json").string() + " --set alpha=0.5 -o " +
                  (dir / "second.h5").string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("features from") != std::string::npos);
  // Damaged values in the stored features are named and the features computed again: a NaN
  // distance made an arbitrary selection with exit 0, a bad height failed the target as a config
  // error.
  const std::string second_surface = datadyn::test::file_bytes(dir / "second.h5");
  for (const char* dataset : {"/features/distance", "/features/heights"}) {
    CAPTURE(dataset);
    datadyn::test::poke_float(dir / "db.features.h5", dataset, 3, std::nan(""));
    r = run_command("SOURCE_DATE_EPOCH=1700000000 " + kTool + " -i " + (dir / "db.h5").string() +
                    " -c " + (dir / "edit.json").string() + " --set alpha=0.5 -o " +
                    (dir / "second.h5").string());
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("db.features.h5: " + std::string(dataset) + ": element 3 is nan") !=
          std::string::npos);
    CHECK(r.err.find("computing the features again") != std::string::npos);
    CHECK(datadyn::test::file_bytes(dir / "second.h5") == second_surface);
  }

  // Another database of the same size, names and time (SOURCE_DATE_EPOCH) but another config is
  // not matched by the stored features (it was, and the edit used the wrong heights).
  setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  write_database(dir / "a.h5", 4, 5, 30.0, R"({"sweep": 1})");
  write_database(dir / "b.h5", 4, 5, 30.0, R"({"sweep": 2})");
  unsetenv("SOURCE_DATE_EPOCH");
  REQUIRE(std::filesystem::file_size(dir / "a.h5") == std::filesystem::file_size(dir / "b.h5"));
  const std::string edit = " -c " + (dir / "edit.json").string() +
                           " --set features=" + (dir / "shared.features.h5").string();
  REQUIRE(run_command(kTool + edit + " -i " + (dir / "a.h5").string() + " -o " +
                      (dir / "a_out.h5").string())
              .exit_code == 0);
  r = run_command(kTool + edit + " -i " + (dir / "b.h5").string() + " -o " +
                  (dir / "b_out.h5").string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("made for another database or other parameters") != std::string::npos);
}

TEST_CASE("wave-edit: --dry-run gives the level set's size as the run writes it") {
  // The dry run printed the layers between the outer slices only, without the closed ends'
  // padding (73 instead of the 87 written, on the built-in edit); it now gives the grid the run
  // writes, with its size, for either kind of ends.
  TempDir dir;
  write_database(dir / "db.h5", 4, 4);
  std::ofstream(dir / "edit.json") << config();
  for (const char* ends : {"true", "false"}) {
    INFO("close_ends " << ends);
    const std::string args = " -i " + (dir / "db.h5").string() + " -c " +
                             (dir / "edit.json").string() + " --set close_ends=" + ends;
    const auto dry = run_command(kTool + args + " --dry-run -o " + (dir / "dry.h5").string());
    REQUIRE(dry.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "dry.h5"));
    REQUIRE(run_command(kTool + args + " -o " + (dir / "s.h5").string()).exit_code == 0);
    const auto shape = datadyn::io::CacheReader(dir / "s.h5")
                           .sequence("surface")
                           .shape("grids/surface");  // [F, nz, ny, nx]
    REQUIRE(shape.size() == 4);
    const std::string voxels = std::to_string(shape[3]) + " x " + std::to_string(shape[2]) + " x " +
                               std::to_string(shape[1]) + " voxels, " + std::to_string(shape[0]) +
                               " frames: " +
                               datadyn::app::byte_text(static_cast<std::uintmax_t>(shape[0]) *
                                                       shape[1] * shape[2] * shape[3] * 4) +
                               " of level sets before compression";
    INFO(dry.out);
    CHECK(dry.out.find(voxels) != std::string::npos);
    // And the files it writes beside the cache.
    CHECK(dry.out.find("with the report " + (dir / "dry.report.json").string() +
                       " and the picture " + (dir / "dry.heights.svg").string()) !=
          std::string::npos);
  }
}

TEST_CASE("wave-edit: a drawn SVG gives the targets, and drawings it cannot read are refused") {
  TempDir dir;
  write_database(dir / "db.h5", 4, 2);
  const auto edit = [&](const std::string& svg) {
    std::ofstream(dir / "curve.svg") << svg;
    std::ofstream(dir / "edit.json") << R"({"cross_section": 0.1, "slices": {"count": 5,
        "spacing": 0.04}, "target": {"file": "curve.svg"}, "grid": {"min": [-0.1, -0.1],
        "max": [0.6, 0.4]}, "alpha": 1.0, "fixed": [{"slice": 2}]})";
    return run_command(kTool + " -q -i " + (dir / "db.h5").string() + " -c " +
                       (dir / "edit.json").string() + " -o " + (dir / "s.h5").string());
  };
  // SVG's y points down: the heights 0.12, 0.22, 0.12 are drawn at y = -0.12, -0.22, -0.12.
  for (const std::string& svg :
       {std::string(R"(<svg><polyline points="0,-0.12 0.08,-0.22 0.16,-0.12"/></svg>)"),
        std::string(R"(<svg><path d="M0,-0.12 L0.08,-0.22 L0.16,-0.12"/></svg>)"),
        // Inkscape's form: relative commands, and a layer's offset on its group (ignored, it
        // gave targets 0.05 m off with exit 0).
        std::string("<svg><g transform='translate(0,-0.05)'><path d='m 0,-0.07 0.08,-0.1 "
                    "0.08,0.1'/></g></svg>")}) {
    const auto r = edit(svg);
    INFO(svg, r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(std::ifstream(dir / "s.report.json"));
    std::vector<int> picked;
    for (const auto& sl : report["slices"]) picked.push_back(sl["optimal"]["index"]);
    CHECK(picked == std::vector<int>{0, 1, 2, 1, 0});
  }
  // Points beside a file would be ignored: refused.
  const auto both = run_command(kTool + " -q -i " + (dir / "db.h5").string() + " -c " +
                                (dir / "edit.json").string() +
                                " --set target.points=[[0,0.1]] -o " + (dir / "p.h5").string());
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("/target/points: expected no points with target.file") != std::string::npos);
  // A curve command was dropped silently (only the points before it were used).
  for (const char* d : {"M0,-0.12 C0.05,-0.3 0.1,-0.3 0.16,-0.12", "m0,-0.12 q0.1,0 0.16,0"}) {
    const auto r = edit(std::string(R"(<svg><path d=")") + d + R"("/></svg>)");
    INFO(d);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("curve.svg: path d: command ") != std::string::npos);
    CHECK(r.err.find(" draws a curve, which the target cannot follow") != std::string::npos);
  }
}

TEST_CASE("wave-edit: a target file's curve is the resolved config's points, in the provenance") {
  TempDir dir;
  write_database(dir / "db.h5", 4, 2);
  std::ofstream(dir / "curve.csv") << "z,h\n0,0.12\n0.08,0.22\n0.16,0.12\n";
  std::ofstream(dir / "edit.json") << config(R"(, "target": {"file": "curve.csv"})");
  const std::string db = " -q -i " + (dir / "db.h5").string();
  auto r = run_command(kTool + db + " -c " + (dir / "edit.json").string() + " -o " +
                       (dir / "s.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The cache and the report showed the default points, which the file had replaced.
  const nlohmann::json drawn = {{0.0, 0.12}, {0.08, 0.22}, {0.16, 0.12}};
  const auto stored =
      nlohmann::json::parse(datadyn::io::CacheReader(dir / "s.h5").provenance().config_json);
  CHECK(stored["target"]["points"] == drawn);
  CHECK(stored["target"]["file"] == "curve.csv");
  const auto report = nlohmann::json::parse(std::ifstream(dir / "s.report.json"));
  CHECK(report["provenance"]["config"]["target"]["points"] == drawn);
  // --print-config too.
  r = run_command(kTool + " -c " + (dir / "edit.json").string() + " --print-config");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["target"]["points"] == drawn);
  // The stored config, file and points both given, reproduces the run...
  std::ofstream(dir / "stored.json") << stored.dump();
  r = run_command(kTool + db + " -c " + (dir / "stored.json").string() + " -o " +
                  (dir / "again.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(std::ifstream(dir / "again.report.json"))["slices"] ==
        report["slices"]);
  // ...and refuses a file that has been drawn again since, naming both keys.
  std::ofstream(dir / "curve.csv") << "z,h\n0,0.15\n0.16,0.15\n";
  r = run_command(kTool + db + " -c " + (dir / "stored.json").string() + " -o " +
                  (dir / "changed.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("stored.json: /target/points: expected no points with target.file, or the "
                   "points read from it ([[0.0,0.15],[0.16,0.15]]") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "changed.h5"));
}

TEST_CASE("wave-edit: shards of the frames merge into the single run's cache") {
  TempDir dir;
  write_database(dir / "db.h5", 4, 6);
  std::ofstream(dir / "edit.json") << config();
  std::filesystem::create_directories(dir / "single");
  std::filesystem::create_directories(dir / "merged");
  const std::string env =
      "cd " + dir.path().string() + " && export SOURCE_DATE_EPOCH=1700000000 && ";
  const std::string args = " -q -i ../db.h5 -c ../edit.json";
  // The database's features are computed once (by the single run) and reused by the shards.
  REQUIRE(run_command(env + "cd single && " + kTool + args + " -o surface.h5").exit_code == 0);
  // A shard that computes them writes the same bytes as the single run did: they recorded the
  // command line and config of whichever edit came first.
  const std::string features = datadyn::test::file_bytes(dir / "db.features.h5");
  std::filesystem::remove(dir / "db.features.h5");
  REQUIRE(
      run_command(env + "cd merged && " + kTool + args + " --set alpha=0.5 --shard 1/3 -o part1.h5")
          .exit_code == 0);
  CHECK(datadyn::test::file_bytes(dir / "db.features.h5") == features);
  for (int k = 1; k <= 3; ++k) {
    const auto r = run_command(env + "cd merged && " + kTool + args + " --shard " +
                               std::to_string(k) + "/3 -o part" + std::to_string(k) + ".h5");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(datadyn::io::CacheReader(dir / "merged" / ("part" + std::to_string(k) + ".h5"))
              .sequence("surface")
              .frames() == std::vector<std::int64_t>{2 * k - 1, 2 * k});
  }
  const auto r =
      run_command(env + "cd merged && " + std::string(DATADYN_BIN_DIR) +
                  "/dd-cache merge -q -i part1.h5 -i part2.h5 -i part3.h5 -o surface.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(datadyn::test::file_bytes(dir / "single" / "surface.h5") ==
        datadyn::test::file_bytes(dir / "merged" / "surface.h5"));
}

TEST_CASE("wave-edit: bad databases and bad edits are clear errors that write nothing") {
  TempDir dir;
  write_database(dir / "mixed.h5", 3, 3, 24.0);
  std::ofstream(dir / "edit.json") << config();
  auto r = run_command(kTool + " -i " + (dir / "mixed.h5").string() + " -c " +
                       (dir / "edit.json").string() + " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/sequences/sim_002: expected 3 frames at 30") != std::string::npos);
  // A time that is not finite is the database's fault: it was reported on the output's time.
  write_database(dir / "nan_time.h5", 3, 3);
  datadyn::test::poke_float(dir / "nan_time.h5", "/sequences/sim_000/time", 1, std::nan(""));
  r = run_command(kTool + " -i " + (dir / "nan_time.h5").string() + " -c " +
                  (dir / "edit.json").string() + " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("nan_time.h5: /sequences/sim_000/time: element 1 (frame 2) is nan, expected "
                   "a finite number") != std::string::npos);

  // l0, where a database has it, is one value > 0 for all: a simulation without it was taken
  // silently, a negative one "differed" from itself, and 4e-9 apart printed as the same number.
  const auto l0_error = [&](const std::function<void(const std::filesystem::path&)>& damage) {
    write_database(dir / "l0.h5", 3, 3);
    damage(dir / "l0.h5");
    const auto result =
        run_command(kTool + " -i " + (dir / "l0.h5").string() + " -c " +
                    (dir / "edit.json").string() + " -o " + (dir / "x.h5").string());
    CHECK(result.exit_code == 1);
    CHECK_FALSE(std::filesystem::exists(dir / "x.h5"));
    return result.err;
  };
  using datadyn::test::delete_attribute;
  using datadyn::test::poke_double_attribute;
  CHECK(l0_error([](const auto& f) { delete_attribute(f, "/sequences/sim_002", "l0"); })
            .find("l0.h5: /sequences/sim_002: no attribute l0, while /sequences/sim_000 has one: "
                  "simulations must share a resolution") != std::string::npos);
  CHECK(l0_error([](const auto& f) {
          delete_attribute(f, "/sequences/sim_000", "l0");
        }).find("l0.h5: /sequences/sim_001/@l0: present, while /sequences/sim_000 has none") !=
        std::string::npos);
  CHECK(l0_error([](const auto& f) {
          for (const char* s : {"/sequences/sim_000", "/sequences/sim_001", "/sequences/sim_002"})
            poke_double_attribute(f, s, "l0", -0.02);
        })
            .find("l0.h5: /sequences/sim_000/@l0: expected the particle spacing, a number > 0 "
                  "(metres), got -0.02") != std::string::npos);
  CHECK(l0_error([](const auto& f) {
          poke_double_attribute(f, "/sequences/sim_001", "l0", 0.020000004);
        }).find("/sequences/sim_001/@l0: 0.020000004 differs from /sequences/sim_000's 0.02") !=
        std::string::npos);

  // A database a failed run kept: said at the start, and in the message its narrow range gives.
  write_database(dir / "cut.h5", 1, 3, 30.0, "{}",
                 "sim_001 failed, and the simulations after it were not run; it keeps the 1 "
                 "simulation before it (sim_000)");
  r = run_command(kTool + " -i " + (dir / "cut.h5").string() + " -c " +
                  (dir / "edit.json").string() + " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cut.h5: /@incomplete: sim_001 failed, and the simulations after it were not "
                   "run; it keeps the 1 simulation before it (sim_000); the edit picks from the 1 "
                   "simulation it holds") != std::string::npos);
  CHECK(r.err.find("m) of the 1 simulation an incomplete database holds (") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "x.h5"));

  write_database(dir / "db.h5", 3, 3);
  // wave-edit on db.h5 with a config of `dir`, extra flags and an output in `dir`.
  const auto edit = [&](const std::string& config_file, const std::string& flags,
                        const std::string& out) {
    return run_command(kTool + " -i " + (dir / "db.h5").string() + " -c " +
                       (dir / config_file).string() + flags + " -o " + (dir / out).string());
  };
  std::ofstream(dir / "far.json") << config(R"(, "target": {"points": [[0, 0.9]]})");
  // A dry run checks the target against the database too (it passed, and the run then failed),
  // and keeps nothing of the features it computed for that.
  r = edit("far.json", " --dry-run", "y.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("far.json: /target: expected heights within the database's range") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "db.features.h5"));
  r = edit("far.json", "", "y.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("outside") != std::string::npos);

  r = edit("edit.json", " --set fixed.0.slice=7", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set fixed.0.slice: /fixed/0/slice: expected a slice index in [0, 4] "
                   "(slices.count = 5), got 7") != std::string::npos);
  // The bound is slices.count's: a --set of it that leaves the config's slice 2 behind is named.
  r = edit("edit.json", " --set slices.count=2", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set slices.count: /fixed/0/slice: expected a slice index in [0, 1] "
                   "(slices.count = 2), got 2") != std::string::npos);
  // A slice fixed twice: the later entry won silently.
  std::ofstream(dir / "twice.json") << config(R"(, "fixed": [{"slice": 2}, {"slice": 2}])");
  r = edit("twice.json", "", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fixed/1/slice: expected a slice no other entry of /fixed names, got") !=
        std::string::npos);
  // More entries than slices: refused before any entry is read (10^5 took 3 s first).
  std::ofstream(dir / "six.json") << config(
      R"(, "fixed": [{"slice": 0}, {"slice": 1}, {"slice": 2}, {"slice": 3}, {"slice": 4},
                    {"slice": -1}])");
  r = edit("six.json", "", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(
      r.err.find("/fixed: expected a list of at most 5 objects (one per slice: slices.count = 5), "
                 "got [") != std::string::npos);
  r = edit("twice.json", " --set slices.count=1", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set slices.count: /fixed: expected a list of at most 1 objects") !=
        std::string::npos);
  r = edit("edit.json", " --set slices.count=9000", "z.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/slices/count: expected an integer in [1, 4096]") != std::string::npos);
  // A grid finer than any wave needs (it ran for hours at 1e-4 m).
  r = edit("edit.json", " --set grid.spacing=1e-6", "w.h5");
  CHECK(r.exit_code == 2);
  // A check made while running names the --set that gave the value, not the config file.
  CHECK(r.err.find("--set grid.spacing: /grid/spacing: expected a spacing giving at most 1e8 grid "
                   "points") != std::string::npos);
  // About 5e8 voxels of level set a frame (2 GB): one chunk of the cache, stored uncompressed,
  // with 5.9 GB held while running. Refused before any work.
  r = edit("edit.json", " --set grid.spacing=0.00052", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set grid.spacing: /slices/spacing: expected slices spanning at most 2.5e8 "
                   "voxels of the 3D level set") != std::string::npos);
  r = edit("edit.json", " --set target.points=[[0,0.9]]", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set target.points: /target: expected heights within") != std::string::npos);
  // The heights range is the database's surface at density.iso_fraction: a --set of it is what
  // puts the config's target outside.
  r = edit("edit.json", " --set density.iso_fraction=0.99", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set density.iso_fraction: /target: expected heights within") !=
        std::string::npos);
  // A cross-section beyond the database's water: every height there was the grid edge's, and the
  // error blamed /target with a range of no water.
  r = edit("edit.json", " --set cross_section=50", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set cross_section: /cross_section: expected a position within the feature "
                   "grid, where the database's water is: [") != std::string::npos);
  // One corner of the grid alone was ignored (the particles' bounds were used).
  std::ofstream(dir / "corner.json") << config(R"(, "grid": {"min": [0.5, 0]})");
  r = edit("corner.json", "", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("corner.json: /grid/min: expected grid.max given too (both corners, or neither "
                   "for the particles' bounds), got [0.5,0]") != std::string::npos);
  r = edit("edit.json", " --set band=1e308", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/band: expected a number in [1, 100], got 1e+308") != std::string::npos);
  r = edit("edit.json", " --set slices.first_z=1e308", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/slices/first_z: expected a number in [-1e+06, 1e+06]") != std::string::npos);
  // The features cache is rewritten when it does not match: named like the database it
  // destroyed it, even on a run that then failed.
  r = edit("edit.json", " --set features=" + (dir / "db.h5").string(), "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set features: /features: " + (dir / "db.h5").string() +
                   " is also an input, which it would overwrite") != std::string::npos);
  r = edit("edit.json", " --report " + (dir / "db.features.h5").string(), "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is also the features cache") != std::string::npos);
  // A drawn curve the config names that is not there: a config error, before the database is read.
  std::ofstream(dir / "drawn.json") << config(R"(, "target": {"file": "curve.svg"})");
  r = edit("drawn.json", "", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("drawn.json: /target/file: expected an existing file, got \"curve.svg\"") !=
        std::string::npos);
  // A frame not in the database: no cache, and no report or picture beside it either (they used
  // to be written before the frames were checked).
  r = edit("edit.json", " --frames 99", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--frames: frame 99 is not in the database") != std::string::npos);
  // A dry run checks the frames and where the run would write (it passed both), and keeps no
  // features cache.
  r = edit("edit.json", " --dry-run --frames 99", "w.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--frames: frame 99 is not in the database") != std::string::npos);
  r = edit("edit.json", " --dry-run --report " + (dir / "none" / "r.json").string(), "w.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find((dir / "none").string()) != std::string::npos);
  // A report or picture path that is an input or the output would replace it: refused.
  for (const std::string flag : {"--report ", "--plot "}) {
    r = edit("edit.json", " " + flag + (dir / "db.h5").string(), "v.h5");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("db.h5 is also an input, which it would overwrite") != std::string::npos);
  }
  r = edit("edit.json", " --report " + (dir / "v.h5").string(), "v.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("v.h5 is also the output, which it would replace") != std::string::npos);
  for (const char* name : {"x.h5", "y.h5", "z.h5", "w.h5", "w.report.json", "w.heights.svg", "v.h5",
                           "v.report.json", "v.heights.svg"})
    CHECK_FALSE(std::filesystem::exists(dir / name));
  // The features are a cache: where they cannot be written (a read-only database library) the
  // edit goes on with a warning; it failed after computing them.
  for (const std::string flags : {" --dry-run", " --frames 1"}) {
    r = edit("edit.json", flags + " --set features=" + (dir / "none" / "f.h5").string(), "u.h5");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("features not stored (" + (dir / "none" / "f.h5").string()) !=
          std::string::npos);
  }
  CHECK(std::filesystem::exists(dir / "u.h5"));
  CHECK_FALSE(std::filesystem::exists(dir / "none"));
  CHECK(datadyn::io::CacheReader(dir / "db.h5").sequence_names().size() == 3);
}

TEST_CASE("wave-edit on an mps-gen dam-break database: H_n grows with the column height") {
  TempDir dir;
  const std::string bin = DATADYN_BIN_DIR;
  // A coarse database (l0 = 2.5 cm, 1.5 s) of three columns.
  auto r = run_command(bin + "/mps-gen -q -c " + std::string(DATADYN_SOURCE_DIR) +
                       "/configs/water/db.json --set scene.l0=0.025 --set scene.duration=1.5 "
                       "--set sweep.heights=0.25,0.36,0.48 -o " +
                       (dir / "db.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"0.4", "0.6", "1.0"}) {
    r = run_command(kTool + " -q -i " + (dir / "db.h5").string() + " --set cross_section=" + s +
                    " --set target.tolerance=1 --frames 1 -o " + (dir / "s.h5").string());
    INFO("s = " << s << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(std::ifstream((dir / "s.report.json").string()));
    const std::vector<double> h = report["heights_at_cross_section"];
    REQUIRE(h.size() == 3);
    CHECK(h[0] < h[1]);
    CHECK(h[1] < h[2]);
  }
}

TEST_CASE("wave-edit's built-in edit runs on mps-gen's built-in database") {
  // The pipeline on nothing but defaults: the default target asked for up to 0.4 m where the
  // default database reaches 0.14-0.24 m (at the old cross-section), so it stopped with exit 2.
  // The full default database: 15 simulations, about 30 s on two cores.
  TempDir dir;
  auto r = run_command(std::string(DATADYN_BIN_DIR) + "/mps-gen -q -o " + (dir / "db.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_command(kTool + " -i " + (dir / "db.h5").string() + " --frames 30 -o " +
                  (dir / "surface.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("clamped") == std::string::npos);  // the whole curve within the range
  const auto report = nlohmann::json::parse(std::ifstream((dir / "surface.report.json").string()));
  const std::vector<double> range = report["database_height_range"];
  for (const auto& slice : report["slices"]) {
    CHECK(slice["target"].get<double>() >= range[0]);
    CHECK(slice["target"].get<double>() <= range[1]);
  }
  CHECK(report["cross_section"] == 1.0);
}

TEST_CASE("wave-edit: the water's mesh is closed at both ends, or open with close_ends false") {
  // A renderer's refraction and a boolean need a closed body: the level set used to stop at the
  // outer slices with water in them, and the mesh had holes there. Every edge of a closed mesh
  // is shared by exactly two triangles.
  TempDir dir;
  write_database(dir / "db.h5", 4, 2);
  { std::ofstream(dir / "edit.json") << config(); }
  const std::string export_tool = std::string(DATADYN_BIN_DIR) + "/mesh-export";
  auto open_edges = [&](const std::string& extra, const std::string& name) {
    const auto out = dir / (name + ".h5");
    auto r = run_command(kTool + " -q -i " + (dir / "db.h5").string() + " -c " +
                         (dir / "edit.json").string() + extra + " -o " + out.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    r = run_command(export_tool + " -q -i " + out.string() + " --frames 1 -o " +
                    (dir / (name + ".####.obj")).string());
    REQUIRE(r.exit_code == 0);
    std::ifstream in(dir / (name + ".0001.obj"));
    std::map<std::pair<int, int>, int> edges;
    std::size_t faces = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("f ", 0) != 0) continue;
      std::istringstream ls(line.substr(2));
      std::vector<int> f;
      for (std::string corner; ls >> corner;) f.push_back(std::stoi(corner));
      for (std::size_t c = 0; c < f.size(); ++c) {
        const int a = f[c], b = f[(c + 1) % f.size()];
        ++edges[{std::min(a, b), std::max(a, b)}];
      }
      ++faces;
    }
    REQUIRE(faces > 100);
    return std::count_if(edges.begin(), edges.end(), [](const auto& e) { return e.second != 2; });
  };
  CHECK(open_edges("", "closed") == 0);
  CHECK(open_edges(" --set close_ends=false", "open") > 0);
}

TEST_CASE("wave-edit: a particle position that is not finite is named, not dropped") {
  // The density grid skipped a NaN particle silently and only the objective changed; mesh-export
  // and dd-cache check name the same file's point.
  TempDir dir;
  write_database(dir / "db.h5", 4, 2);
  datadyn::test::poke_float(dir / "db.h5", "/sequences/sim_001/points/position", 600 * 2 + 7 * 2,
                            std::numeric_limits<double>::quiet_NaN());
  { std::ofstream(dir / "edit.json") << config(); }
  const auto r = run_command(kTool + " -q -i " + (dir / "db.h5").string() + " -c " +
                             (dir / "edit.json").string() + " -o " + (dir / "s.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("db.h5: /sequences/sim_001/points/position: frame 2: point 7 is not finite") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "s.h5"));
}

TEST_CASE("wave-edit: time alignment brings every slice's wave to the cross-section together") {
  // Slices 0-4 take simulations 0, 1, 2, 1, 0, whose fronts reach x = 0.4 around frames 30, 15
  // and 10. The water's arrival at the cross-section, read off the level set at 5 cm above the
  // floor, is then frames apart from slice to slice; aligned to slice 2 (the fixed one), within a
  // frame (the level set's front and the height's rise are not the same point of the front).
  TempDir dir;
  write_fronts(dir / "db.h5", 3, 40);
  const auto first_wet = [&](const std::string& out) {
    const auto report = nlohmann::json::parse(
        std::ifstream(dir / (out.substr(0, out.size() - 3) + ".report.json")));
    std::vector<int> picked;
    for (const auto& sl : report["slices"]) picked.push_back(sl["optimal"]["index"]);
    CHECK(picked == std::vector<int>{0, 1, 2, 1, 0});
    datadyn::io::CacheReader cache(dir / out);
    const auto s = cache.sequence("surface");
    const auto spec = s.grid_spec("surface");
    std::vector<int> first(5, -1);
    for (std::size_t f = 0; f < s.frame_count(); ++f) {
      const auto phi = s.read_frame<float>("grids/surface", f);
      for (int slice = 0; slice < 5; ++slice) {
        const auto index = [&](double v, double o) {
          return static_cast<std::size_t>(std::lround((v - o) / spec.voxel_size));
        };
        const std::size_t i = index(0.4, spec.origin.x()), j = index(0.05, spec.origin.y()),
                          k = index(0.04 * slice, spec.origin.z());
        if (first[static_cast<std::size_t>(slice)] < 0 &&
            phi.data[(k * spec.ny + j) * spec.nx + i] < 0)
          first[static_cast<std::size_t>(slice)] = static_cast<int>(f);
      }
    }
    return first;
  };
  const auto spread = [](const std::vector<int>& v) {
    return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end());
  };
  std::ofstream(dir / "edit.json")
      << config(R"(, "cross_section": 0.4, "grid": {"min": [-0.1, -0.1], "max": [0.7, 0.4]})");
  for (const bool align : {false, true}) {
    const std::string out = align ? "aligned.h5" : "plain.h5";
    const auto r = run_command(
        kTool + " -q -i " + (dir / "db.h5").string() + " -c " + (dir / "edit.json").string() +
        " --set align_time.enabled=" + (align ? "true" : "false") + " -o " + (dir / out).string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto first = first_wet(out);
    INFO("first wet frame per slice, align ", align, ": ", first[0], " ", first[1], " ", first[2],
         " ", first[3], " ", first[4]);
    CHECK(std::find(first.begin(), first.end(), -1) == first.end());
    if (align)
      CHECK(spread(first) <= 1);
    else
      CHECK(spread(first) >= 15);
  }
}
