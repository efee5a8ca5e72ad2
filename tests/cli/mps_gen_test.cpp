// mps-gen as a process: the database layout, shards, config errors naming the key, particles
// outside the tank, a failing simulation that keeps the finished ones, determinism.

#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "app/config.hpp"
#include "io/cache.hpp"
#include "support/file_bytes.hpp"
#include "support/process.hpp"

using datadyn::test::file_bytes;
using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kMpsGen = std::string(DATADYN_BIN_DIR) + "/mps-gen";
// The built-in database, coarse and short so that its 15 simulations take seconds: l0 = 0.04 m,
// 0.3 s at 30 fps = 10 frames.
const std::string kSmall = " -q --set scene.l0=0.04 --set scene.duration=0.3 ";

}  // namespace

TEST_CASE("mps-gen: the default database writes 15 simulations with the documented layout") {
  TempDir dir;
  const auto out = dir / "db.h5";
  const auto r = run_command(kMpsGen + kSmall + "-o " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader cache(out);
  const auto names = cache.sequence_names();
  REQUIRE(names.size() == 15);
  CHECK(names.front() == "sim_000");
  CHECK(names.back() == "sim_014");
  const auto cfg = nlohmann::json::parse(cache.provenance().config_json);
  CHECK(cfg["scene"]["l0"] == 0.04);
  CHECK(cfg["sweep"]["height_range"]["count"] == 15);
  double last_height = 0;
  for (const auto& name : names) {
    INFO(name);
    const auto s = cache.sequence(name);
    CHECK(s.dimension() == 2);
    CHECK(s.frame_rate() == 30.0);
    CHECK(s.frame_count() == 10);
    CHECK(s.frames().front() == 1);
    CHECK(s.times()[3] == doctest::Approx(0.1));
    const auto attrs = s.attributes();
    const double h = std::get<double>(attrs.at("column_height"));
    CHECK(h > last_height);  // heights 0.2 .. 0.48 m in order
    last_height = h;
    CHECK(std::get<double>(attrs.at("l0")) == 0.04);
    CHECK(std::get<std::int64_t>(attrs.at("fluid_count")) ==
          static_cast<std::int64_t>(s.point_count()));
    CHECK(s.shape("points/position") == datadyn::io::Shape{10, s.point_count(), 2});
    CHECK(cache.shape("/sequences/" + name + "/tank/position")[1] == 2);
    const auto type = cache.read_array<std::int8_t>("/sequences/" + name + "/tank/type");
    CHECK(std::count(type.data.begin(), type.data.end(), 1) > 0);   // walls
    CHECK(std::count(type.data.begin(), type.data.end(), 2) > 0);   // dummies
    CHECK(std::count(type.data.begin(), type.data.end(), 0) == 0);  // water is in points/
    // The water falls: the highest particle is lower at the last frame than at the first.
    const auto first = s.positions(0), last = s.positions(9);
    CHECK(last.col(1).maxCoeff() < first.col(1).maxCoeff());
  }
  CHECK(last_height == doctest::Approx(0.48));
}

TEST_CASE("mps-gen: --shard 2/3 runs its five simulations, bit for bit as in the full run") {
  TempDir dir;
  const std::string env = "cd " + dir.path().string() + " && SOURCE_DATE_EPOCH=1700000000 ";
  REQUIRE(run_command(env + kMpsGen + kSmall + "--set output.velocity=true -o full.h5").exit_code ==
          0);
  const auto r =
      run_command(env + kMpsGen + kSmall + "--set output.velocity=true --shard 2/3 -o part.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader full(dir / "full.h5"), part(dir / "part.h5");
  CHECK(part.sequence_names() ==
        std::vector<std::string>{"sim_005", "sim_006", "sim_007", "sim_008", "sim_009"});
  for (const auto& name : part.sequence_names()) {
    const auto a = full.sequence(name), b = part.sequence(name);
    for (std::size_t f = 0; f < a.frame_count(); ++f) {
      CHECK(a.read_frame<float>("points/position", f).data ==
            b.read_frame<float>("points/position", f).data);
      CHECK(a.read_frame<float>("points/velocity", f).data ==
            b.read_frame<float>("points/velocity", f).data);
    }
  }
}

TEST_CASE("mps-gen: the same bytes for 1 and 2 threads") {
  TempDir dir;
  const std::string env = "cd " + dir.path().string() + " && SOURCE_DATE_EPOCH=1700000000 ";
  const std::string cfg = kSmall + "--set sweep.heights=[0.3,0.45] --set output.pressure=true ";
  REQUIRE(run_command(env + kMpsGen + cfg + "--threads 1 -o out.h5 && mv out.h5 t1.h5").exit_code ==
          0);
  REQUIRE(run_command(env + kMpsGen + cfg + "--threads 2 -o out.h5 && mv out.h5 t2.h5").exit_code ==
          0);
  const std::string a = file_bytes(dir / "t1.h5"), b = file_bytes(dir / "t2.h5");
  CHECK(a.size() > 10000);
  CHECK(a == b);
}

TEST_CASE("mps-gen: config errors exit 2 and name the key") {
  TempDir dir;
  const auto out = (dir / "x.h5").string();
  auto r = run_command(kMpsGen + " --set solver.dt=-0.1 -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/solver/dt: expected a number > 0, got -0.1") != std::string::npos);
  r = run_command(kMpsGen + " --set scene.l00=0.01 -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown key \"l00\" (did you mean \"l0\"?)") != std::string::npos);
  std::ofstream(dir / "tank.json") << R"({"scene": {"tank": {"vertices": [[0, 0], [1, 0]]}}})";
  r = run_command(kMpsGen + " -c " + (dir / "tank.json").string() + " -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(
      r.err.find("tank.json: /scene/tank/vertices: expected a list of at least 3 [x, y] points") !=
      std::string::npos);
  // A flat obstacle is named by its own key, with the value given (it named the tank's
  // vertices, "got nothing").
  r = run_command(kMpsGen + " --set scene.tank.obstacles=[[[1,0],[1.5,0.5],[1,0.5],[1.5,0]]] -o " +
                  out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set scene.tank.obstacles: /scene/tank/obstacles: expected a valid tank "
                   "(obstacle 0: the polygon has no area)") != std::string::npos);
  // A column the lattice gives no particle above the still water ran as a still tank, exit 0.
  for (const char* set : {" --set scene.column.width=0.005", " --set sweep.heights=0.08"}) {
    INFO(set);
    r = run_command(kMpsGen + " --dry-run" + set + " -o " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("holds no particle above the still water (water_level = 0.075 m)") !=
          std::string::npos);
  }
  // A floor on the Courant step above its ceiling failed every run as a divergence (exit 1).
  r = run_command(kMpsGen + " --dry-run --set solver.dt_min=0.002 -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/solver/dt_min: expected a step <= solver.dt (0.001 s)") != std::string::npos);
  r = run_command(kMpsGen + " --set scene.frame_rate=1e308 -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/scene/frame_rate: expected a number in (0, 10000]") != std::string::npos);
  // A fixed time step that breaks the Courant bound for the tallest column.
  r = run_command(kMpsGen + " --set solver.time_step=fixed --set solver.dt=0.01 -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set solver.time_step, --set solver.dt: /solver/dt: expected a step <= ") !=
        std::string::npos);
  CHECK(r.err.find("sim_014") != std::string::npos);
  // A sweep's value twice ran the same simulation twice; lists whose product is a billion
  // simulations, or 10,000 obstacles, took minutes before anything was said.
  for (const auto& [set, expected] : std::vector<std::pair<std::string, std::string>>{
           {"sweep.heights=0.3,0.2,0.3", "/sweep/heights: expected a list of distinct heights"},
           {"sweep.velocities=[[0,0],[1,0],[0,0]]",
            "/sweep/velocities: expected a list of distinct velocities"},
           {"sweep.height_range.count=2000000000",
            "/sweep/height_range/count: expected at most 100000 simulations (heights x widths x "
            "velocities), not 2e+09"}}) {
    CAPTURE(set);
    r = run_command(kMpsGen + " --dry-run --set " + set + " -o " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(expected) != std::string::npos);
  }
  {
    std::ofstream many(dir / "many.json");
    many << R"({"scene": {"tank": {"obstacles": [)";
    for (int k = 0; k < 1001; ++k) many << (k ? "," : "") << "[[0.9, 0], [2, 0], [2, 0.3]]";
    many << "]}}}";
  }
  r = run_command(kMpsGen + " --dry-run -c " + (dir / "many.json").string() + " -o " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/scene/tank/obstacles: expected at most 1000 obstacles, not 1001") !=
        std::string::npos);
  CHECK(r.err.size() < 1000);                             // the value in the message is cut
  CHECK(std::filesystem::is_empty(dir.path()) == false);  // only the configs
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("mps-gen: a water column outside the tank exits 2 naming the particle") {
  TempDir dir;
  std::ofstream(dir / "out.json") << R"({"scene": {"column": {"x": 1.85, "width": 0.3}},
                                         "sweep": {"heights": [0.2]}})";
  const auto r = run_command(kMpsGen + " -c " + (dir / "out.json").string() + " -o " +
                             (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("out.json: /sweep: sim_000 (column x 1.85 m, width 0.3 m, height 0.2 m") !=
        std::string::npos);
  CHECK(r.err.find("outside the tank") != std::string::npos);
  CHECK(r.err.find("particle at (") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.h5"));
}

TEST_CASE("mps-gen: sizes no scene has (spacing, water, duration) exit 2 at once") {
  // Each of these used to run for ever: building a lattice of 2e14 points, or walking a column
  // 1e308 m high.
  TempDir dir;
  const auto run = [&](const std::string& config) {
    std::ofstream(dir / "c.json") << config;
    return run_command(kMpsGen + " -c " + (dir / "c.json").string() + " -o " +
                       (dir / "x.h5").string());
  };
  auto r = run(R"({"scene": {"l0": 1e-7}})");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("c.json: /scene/l0: expected a spacing of at least 0.000141421 m (at most 1e8 "
                   "lattice points in the tank's 2 x 1 m bounding box), got 1e-07") !=
        std::string::npos);
  r = run(R"({"scene": {"duration": 1e9}})");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("c.json: /scene/duration: expected at most 1e6 frames of output (duration x "
                   "frame_rate = 3e+10), got 1000000000") != std::string::npos);
  // Beyond 1e15 any number is refused as read (1e308 passed to the checks after).
  r = run(R"({"scene": {"duration": 1e20}})");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("c.json: /scene/duration: expected a number of magnitude at most 1e15, got "
                   "1e+20") != std::string::npos);
  r = run(R"({"sweep": {"heights": [0.2, 1e9]}})");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("c.json: /sweep: sim_001 (column x 0 m, width 0.3 m, height 1e+09 m") !=
        std::string::npos);
  CHECK(r.err.find("is outside the tank's extent [0, 2] x [0, 2] m") != std::string::npos);
  // The same from the command line names the --set, not the config file (it said "c.json").
  r = run_command(kMpsGen + " -c " + (dir / "c.json").string() +
                  " --set sweep.heights=[0.2,1e9] -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set sweep.heights: /sweep: sim_001 (column x 0 m") != std::string::npos);
  r = run(R"({"scene": {"column": {"width": 1e9}}})");
  CHECK(r.exit_code == 2);
  // The first particle in the beach (it starts at x = 0.9 m) is named.
  CHECK(r.err.find("particle at (0.9") != std::string::npos);
  CHECK(r.err.find(") m outside the tank") != std::string::npos);
  // A column under the still water vanishes into it: every simulation of the sweep was the same
  // (a tank below y = 0 with water_level 0, documented as "none", filled its lower half).
  r = run(R"({"scene": {"water_level": 0.25}, "sweep": {"heights": [0.2, 0.3]}})");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("sim_000 (column x 0 m, width 0.3 m, height 0.2 m") != std::string::npos);
  CHECK(r.err.find("the water column's top (y = 0.2 m) is not above the still water level") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.h5"));
}

TEST_CASE("mps-gen: a failing simulation exits 1 naming it, the finished ones stay readable") {
  TempDir dir;
  const auto out = dir / "db.h5";
  // sim_001 starts with the water racing at 30 m/s into the far wall: it splashes out of the
  // tank (or blows up); sim_000 is an ordinary collapse.
  const auto r = run_command(kMpsGen + kSmall +
                             "--set sweep.heights=[0.3] --set sweep.velocities=[[0,0],[30,0]] -o " +
                             out.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("sim_001 (column x 0 m, width 0.3 m, height 0.3 m, velocity [30, 0] m/s): "
                   "frame ") != std::string::npos);
  CHECK(r.err.find("particle ") != std::string::npos);
  CHECK(r.err.find("keeps the 1 simulation before it (sim_000)") != std::string::npos);
  // The closing line names what the failed run left, not "wrote", and -q shows it.
  CHECK(r.err.find("kept " + out.string() + " (") != std::string::npos);
  CHECK(r.err.find("wrote ") == std::string::npos);
  datadyn::io::CacheReader cache(out);
  CHECK(cache.sequence_names() == std::vector<std::string>{"sim_000"});
  CHECK(cache.sequence("sim_000").frame_count() == 10);
}

TEST_CASE("mps-gen: a shard cut short says so in its file, and dd-cache merge warns of it") {
  // Shard 2/2 failed in its second simulation and kept the first; merged with shard 1/2 it gave a
  // database without sim_002 that looked whole, with exit 0 and no word.
  TempDir dir;
  const std::string sweep =
      "--set sweep.heights=[0.3] --set sweep.velocities=[[0,0],[0.1,0],[30,0]] ";
  const std::string merge = std::string(DATADYN_BIN_DIR) + "/dd-cache merge -q";
  auto r = run_command(kMpsGen + kSmall + sweep + "--shard 1/2 -o " + (dir / "a.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(kMpsGen + kSmall + sweep + "--shard 2/2 -o " + (dir / "b.h5").string());
  REQUIRE(r.exit_code == 1);
  const auto root = datadyn::io::CacheReader(dir / "b.h5").attributes("/");
  REQUIRE(root.count("incomplete") == 1);
  CHECK(std::get<std::string>(root.at("incomplete")) ==
        "sim_002 failed, and the simulations after it were not run; it keeps the 1 simulation "
        "before it (sim_001)");
  r = run_command(merge + " -i " + (dir / "a.h5").string() + " -i " + (dir / "b.h5").string() +
                  " -o " + (dir / "m.h5").string());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("b.h5: /@incomplete: \"sim_002 failed") != std::string::npos);
  CHECK(r.err.find("m.h5 lacks what that run did not finish") != std::string::npos);
  // The merged database carries the attribute on.
  CHECK(datadyn::io::CacheReader(dir / "m.h5").attributes("/").count("incomplete") == 1);

  // Shards of two splits of one run (1/3 with 2/2) cover it by chance: sim_001 is in neither.
  r = run_command(kMpsGen + kSmall + sweep + "--shard 1/3 -o " + (dir / "c.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(merge + " -i " + (dir / "c.h5").string() + " -i " + (dir / "b.h5").string() +
                  " -o " + (dir / "n.h5").string());
  CHECK(r.err.find("n.h5: the inputs are shards of different splits (1/3, 2/2)") !=
        std::string::npos);

  // Two shards cut short: each says what it lacks, and the merge says both (it refused them as
  // shards that disagree).
  const std::string twice =
      "--set sweep.heights=[0.3] --set sweep.velocities=[[0,0],[30,0],[0.1,0],[31,0]] ";
  for (const char* k : {"1", "2"}) {
    r = run_command(kMpsGen + kSmall + twice + "--shard " + k + "/2 -o " +
                    (dir / ("t" + std::string(k) + ".h5")).string());
    REQUIRE(r.exit_code == 1);
  }
  r = run_command(merge + " -i " + (dir / "t1.h5").string() + " -i " + (dir / "t2.h5").string() +
                  " -o " + (dir / "t.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::get<std::string>(
            datadyn::io::CacheReader(dir / "t.h5").attributes("/").at("incomplete")) ==
        "sim_001 failed, and the simulations after it were not run; it keeps the 1 simulation "
        "before it (sim_000); sim_003 failed, and the simulations after it were not run; it "
        "keeps the 1 simulation before it (sim_002)");
}

TEST_CASE("mps-gen: --dry-run lists the simulations and writes nothing") {
  TempDir dir;
  const auto r =
      run_command("cd " + dir.path().string() + " && " + kMpsGen + " --dry-run --shard 3/3");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("would write 5 of 15 simulations to db.h5") != std::string::npos);
  CHECK(r.out.find("sim_010 (column x 0 m, width 0.3 m, height 0.4 m") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("mps-gen: --dry-run says how much the per-frame arrays take, as the run writes them") {
  // The sizes a farm job needs before it runs: the figure equals the float32 per-frame arrays the
  // run then writes (positions, and here velocities and pressures), summed from their shapes.
  TempDir dir;
  const std::string cfg = kSmall +
                          "--set sweep.heights=[0.3,0.45] --set output.velocity=true "
                          "--set output.pressure=true -o " +
                          (dir / "db.h5").string();
  const auto dry = run_command(kMpsGen + " --dry-run" + cfg);
  REQUIRE(dry.exit_code == 0);
  REQUIRE(std::filesystem::is_empty(dir.path()));
  REQUIRE(run_command(kMpsGen + cfg).exit_code == 0);
  datadyn::io::CacheReader cache(dir / "db.h5");
  std::uintmax_t total = 0, largest = 0;
  for (const auto& name : cache.sequence_names()) {
    const auto seq = cache.sequence(name);
    std::uintmax_t bytes = 0;
    for (const char* array : {"points/position", "points/velocity", "points/pressure"}) {
      std::uintmax_t n = sizeof(float);
      for (const auto d : seq.shape(array)) n *= d;
      bytes += n;
    }
    total += bytes;
    largest = std::max(largest, bytes);
  }
  INFO(dry.out);
  CHECK(dry.out.find("per-frame arrays: " + datadyn::app::byte_text(total) +
                     " before compression; a running simulation holds its frames, up to " +
                     datadyn::app::byte_text(largest) + " for the largest") != std::string::npos);
}

TEST_CASE("mps-gen: a frame past the duration exits 2 naming it, and writes nothing") {
  TempDir dir;
  const auto r = run_command(kMpsGen + " --frames 1-5000 --set scene.duration=1 -o " +
                             (dir / "db.h5").string());
  CHECK(r.exit_code == 2);
  // 1 s at the default 30 fps: frames 1-31, frame 1 at t = 0.
  CHECK(
      r.err.find("--frames: frame 32 is outside 1-31 (duration 1 s at 30 fps; frame 1 is t = 0)") !=
      std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("mps-gen: the same bytes with the baseline vector code as with the CPU's widest") {
  // The pair loops and parts of the PPE run as AVX2 or AVX-512 lanes where the CPU has them; the
  // baseline adds the same terms in the same order (core/simd.hpp). DATADYN_SIMD caps the level.
  TempDir dir;
  const std::string env = "cd " + dir.path().string() + " && SOURCE_DATE_EPOCH=1700000000 ";
  const std::string cfg = kSmall + "--set sweep.heights=[0.3,0.45] --set output.pressure=true ";
  REQUIRE(run_command(env + kMpsGen + cfg + "-o out.h5 && mv out.h5 wide.h5").exit_code == 0);
  REQUIRE(
      run_command(env + "DATADYN_SIMD=baseline " + kMpsGen + cfg + "-o out.h5 && mv out.h5 base.h5")
          .exit_code == 0);
  const std::string a = file_bytes(dir / "wide.h5"), b = file_bytes(dir / "base.h5");
  CHECK(a.size() > 10000);
  CHECK(a == b);
  const auto r = run_command(env + "DATADYN_SIMD=sse9 " + kMpsGen + cfg + "-o bad.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("DATADYN_SIMD") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad.h5"));
}

TEST_CASE("mps-gen: a check across keys names the --set that broke it, not the config file") {
  // The config alone passes both checks; the --set of another key than the one reported is
  // what fails them, so the message must start with it.
  TempDir dir;
  const auto config = dir / "db.json";
  const std::string out = " -o " + (dir / "db.h5").string();
  std::ofstream(config) << R"({"solver": {"time_step": "fixed", "dt": 0.0001, "dt_min": 0.0005}})";
  auto r = run_command(kMpsGen + " --dry-run -c " + config.string() +
                       " --set solver.time_step=courant" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set solver.time_step: /solver/dt_min: expected a step <= solver.dt") !=
        std::string::npos);
  // A deeper tank (its floor 1 m lower) makes every column fall faster than a fixed step allows.
  std::ofstream(config) << R"({"solver": {"time_step": "fixed", "dt": 0.0005}})";
  r = run_command(kMpsGen + " --dry-run -c " + config.string() +
                  " --set scene.tank.vertices.0.1=-1 --set scene.tank.vertices.1.1=-1" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set scene.tank.vertices.0.1, --set scene.tank.vertices.1.1: /solver/dt: "
                   "expected a step <= ") != std::string::npos);
}
