// spring-fit as a process: simulate -> fit -> apply on a held-out motion, the caches and reports
// each step writes, clear errors on mismatched or broken inputs, and thread-count independence.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/config.hpp"
#include "core/types.hpp"
#include "flesh/skin_loader_io.hpp"
#include "flesh/spring_integrator.hpp"
#include "io/cache.hpp"
#include "support/cache_bytes.hpp"
#include "support/format_readers.hpp"
#include "support/h5_poke.hpp"
#include "support/process.hpp"

using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kSpringFit = std::string(DATADYN_BIN_DIR) + "/spring-fit";
// A coarse body and short motions: each simulate runs in well under a second.
const std::string kSmall =
    " -q --set body.layers=6 --set body.segments=8 --set body.rings=3 --set motion.frames=45"
    " --set solver.substeps=2 --set solver.quasistatic_iterations=15";

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

/// A cache with "quasistatic" and "dynamic" sequences of the given sizes and rates.
void write_pair(const std::filesystem::path& path, int n_target, int n_truth, int f_target,
                int f_truth, double rate_truth, int nan_frame = -1) {
  datadyn::io::CacheWriter w(path, {"test", "test", "{}", ""});
  const auto seq = [&](const std::string& name, int n, int frames, double rate) {
    auto& s = w.add_sequence(name, {rate, 3});
    for (int f = 0; f < frames; ++f) {
      datadyn::Points3 p = datadyn::Points3::Constant(n, 3, 0.01 * f);
      s.append_frame(f, f / rate, {{"points/position", datadyn::io::view(p)}});
    }
  };
  seq("quasistatic", n_target, f_target, 30.0);
  seq("dynamic", n_truth, f_truth, rate_truth);
  w.commit();
  // The writer refuses NaN, so the damage is done afterwards: point 1's z in frame nan_frame.
  if (nan_frame >= 0)
    datadyn::test::poke_float(path, "/sequences/dynamic/points/position",
                              (static_cast<std::size_t>(nan_frame) * n_truth + 1) * 3 + 2,
                              std::numeric_limits<double>::quiet_NaN());
}

/// A cache with one "quasistatic" sequence at 30 fps, frames numbered from 1: point i of frame
/// f (from 0) at position(f, i).
void write_targets(const std::filesystem::path& path, int frames, int points,
                   const std::function<Eigen::RowVector3d(int, int)>& position) {
  datadyn::io::CacheWriter w(path, {"test", "test", "{}", ""});
  auto& s = w.add_sequence("quasistatic", {30.0, 3});
  for (int f = 0; f < frames; ++f) {
    datadyn::Points3 p(points, 3);
    for (int i = 0; i < points; ++i) p.row(i) = position(f, i);
    s.append_frame(f + 1, f / 30.0, {{"points/position", datadyn::io::view(p)}});
  }
  w.commit();
}

/// A springs cache as `fit` writes it (/springs/ks, /springs/kd).
void write_springs(const std::filesystem::path& path, const Eigen::VectorXd& ks,
                   const Eigen::VectorXd& kd) {
  datadyn::io::CacheWriter c(path, {"test", "test", "{}", ""});
  c.write_array("/springs/ks", datadyn::io::view(ks));
  c.write_array("/springs/kd", datadyn::io::view(kd));
  c.commit();
}

}  // namespace

TEST_CASE("spring-fit: simulate, fit on two motions, apply on a held-out one") {
  TempDir dir;
  for (const char* motion : {"swing", "bounce", "shake"}) {
    const auto r = run_command(kSpringFit + " simulate" + kSmall + " --set motion.kind=" + motion +
                               " -o " + (dir / (std::string(motion) + ".h5")).string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  {
    datadyn::io::CacheReader c(dir / "swing.h5");
    for (const char* name : {"skinned", "quasistatic", "dynamic"}) {
      const auto s = c.sequence(name);
      CHECK(s.frame_count() == 45);
      // Frame 1 at t = 0, as in every tool (they started at 0: exported files and PC2 start
      // frames were one off from the other pipelines').
      CHECK(s.frames().front() == 1);
      CHECK(s.frames().back() == 45);
      CHECK(s.times().front() == 0.0);
      CHECK(s.has("topology/triangles"));
      CHECK(s.point_count() > 0);
    }
  }
  // A cache given twice (or under a second name) is refused: its frames counted twice.
  std::filesystem::create_symlink(dir / "swing.h5", dir / "swing_again.h5");
  for (const char* again : {"swing.h5", "swing_again.h5"}) {
    const auto twice = run_command(kSpringFit + " fit -q -i " + (dir / "swing.h5").string() +
                                   " -i " + (dir / "bounce.h5").string() + " -i " +
                                   (dir / again).string() + " -o " + (dir / "twice.h5").string());
    CHECK(twice.exit_code == 2);
    CHECK(twice.err.find("-i/--input: " + (dir / "swing.h5").string()) != std::string::npos);
    CHECK(twice.err.find("expected each training cache once") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "twice.h5"));
  }
  // The dry run names what the run writes: the cache and its report.
  const auto dry =
      run_command(kSpringFit + " fit -q --dry-run -i " + (dir / "swing.h5").string() + " -i " +
                  (dir / "bounce.h5").string() + " -o " + (dir / "springs.h5").string());
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.find("and write " + (dir / "springs.h5").string() + " and the report " +
                     (dir / "springs.report.json").string()) != std::string::npos);
  auto r = run_command(kSpringFit + " fit -q -i " + (dir / "swing.h5").string() + " -i " +
                       (dir / "bounce.h5").string() + " -o " + (dir / "springs.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  {
    datadyn::io::CacheReader c(dir / "springs.h5");
    const auto ks = c.read_array<double>("/springs/ks");
    const auto kd = c.read_array<double>("/springs/kd");
    REQUIRE(ks.size() == c.sequence("springs").point_count());
    const auto maps = c.sequence("springs");
    CHECK(maps.frames() == std::vector<std::int64_t>{1});
    CHECK(maps.has("points/kd2_minus_4ks"));
    const auto ind = maps.read_static<double>("points/kd2_minus_4ks");
    for (std::size_t i = 0; i < ks.size(); ++i) {
      CHECK(ks.data[i] >= 1.0);  // within the default bounds
      CHECK(ks.data[i] <= 1e4 * (1 + 1e-12));
      CHECK(ind.data[i] == doctest::Approx(kd.data[i] * kd.data[i] - 4 * ks.data[i]));
    }
  }
  const auto report = read_json(dir / "springs.report.json");
  REQUIRE(report["sequences"].size() == 2);
  for (const auto& s : report["sequences"])
    CHECK(s["loss_fitted_m2"].get<double>() < s["loss_target_m2"].get<double>());
  // Reports record what made them, as caches do.
  CHECK(report["provenance"]["generator"].get<std::string>().rfind("spring-fit fit ", 0) == 0);
  CHECK(report["provenance"]["command_line"].get<std::string>().find(" fit ") != std::string::npos);
  CHECK(report["provenance"]["config"].is_object());

  r = run_command(kSpringFit + " apply -q -i " + (dir / "shake.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " --set subframes=2 -o " +
                  (dir / "out.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader out(dir / "out.h5");
  CHECK(out.sequence("dynamic").frame_count() == 89);  // 44 intervals x 2 + 1
  CHECK(out.sequence("dynamic").frames().front() == 1);
  CHECK(out.sequence("dynamic").frames().back() == 89);
  // Springs fitted on other motions bring the held-out motion closer to its ground truth
  // (measured 1.44 mm -> 0.53 mm rms; deterministic, so the margin only guards against
  // regressions of the fit).
  const auto held_out = read_json(dir / "out.report.json");
  CHECK(held_out["rms_springs_m"].get<double>() < 0.8 * held_out["rms_target_m"].get<double>());
  CHECK(held_out["provenance"]["config"]["subframes"] == 2);
  // Two animations: the last one was used silently (a third cache beside them is refused before
  // any is read). The output named like an input: refused.
  r = run_command(kSpringFit + " apply -q -i " + (dir / "shake.h5").string() + " -i " +
                  (dir / "swing.h5").string() + " -o " + (dir / "two.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("are both animation caches") != std::string::npos);
  // A cache of neither kind (here a springs report's neighbour: a file another tool wrote) was
  // called an animation cache too.
  {
    datadyn::io::CacheWriter w(dir / "other.h5", {"cloth-train train 0.1.0", "", "{}", ""});
    w.write_array("/model/sizes", datadyn::io::view(std::vector<std::int64_t>{36, 12}));
    w.commit();
  }
  r = run_command(kSpringFit + " apply -q -i " + (dir / "other.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " -o " + (dir / "two.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("other.h5: neither an animation cache (no /sequences/quasistatic) nor a "
                   "springs cache (no /springs/ks); it was written by cloth-train train 0.1.0") !=
        std::string::npos);
  r = run_command(kSpringFit + " apply -q -i " + (dir / "shake.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " -o " + (dir / "shake.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is also an input, which it would overwrite") != std::string::npos);
  // An animation cache without the sequence the config names: the key is named, as fit does.
  r = run_command(kSpringFit + " apply -q -i " + (dir / "shake.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " --set target_sequence=abc -o " +
                  (dir / "abc.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("shake.h5: /sequences/abc: no such sequence (the cache has ") !=
        std::string::npos);
  CHECK(r.err.find("the config's /target_sequence names the sequence to read") !=
        std::string::npos);
  CHECK(datadyn::io::CacheReader(dir / "shake.h5").sequence_names().size() == 3);
}

TEST_CASE("spring-fit: mismatched or broken training data is an error naming file and frame") {
  TempDir dir;
  const auto fit = [&](const std::string& file) {
    return run_command(kSpringFit + " fit -q -i " + (dir / file).string() + " -o " +
                       (dir / "s.h5").string());
  };
  write_pair(dir / "count.h5", 5, 6, 10, 10, 30.0);
  auto r = fit("count.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("count.h5") != std::string::npos);
  CHECK(r.err.find("vertex counts differ (5 vs 6)") != std::string::npos);
  write_pair(dir / "frames.h5", 5, 5, 10, 12, 30.0);
  r = fit("frames.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("frame counts differ (10 vs 12)") != std::string::npos);
  write_pair(dir / "rate.h5", 5, 5, 10, 10, 24.0);
  r = fit("rate.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("frame rates differ") != std::string::npos);
  write_pair(dir / "nan.h5", 5, 5, 10, 10, 30.0, 7);
  r = fit("nan.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/sequences/dynamic/points/position: frame 7") != std::string::npos);
  CHECK(r.err.find("point 1 is not finite") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "s.h5"));
  // apply reads the ground truth before it writes: a broken one left the output behind.
  write_springs(dir / "springs.h5", Eigen::VectorXd::Constant(5, 50.0),
                Eigen::VectorXd::Constant(5, 1.0));
  for (const char* broken : {"nan.h5", "frames.h5"}) {
    r = run_command(kSpringFit + " apply -q -i " + (dir / broken).string() + " -i " +
                    (dir / "springs.h5").string() + " -o " + (dir / "a.h5").string());
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(broken) != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "a.h5"));
  }
  // Gravity of 1e308 m/s^2 is finite in the config but not in a float32 cache: it wrote inf
  // positions with exit 0, then stopped at the first frame it could not store; now no config
  // value beyond 1e15 is taken.
  r = run_command(kSpringFit + " simulate" + kSmall + " --set material.gravity=0,-1e308,0 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/material/gravity: expected a list of 3 numbers of magnitude at most 1e15, "
                   "got [0,-1e+308,0]") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "g.h5"));
  // A Young's modulus of 1e-300 Pa failed in the solve, naming the simulation.
  r = run_command(kSpringFit + " simulate" + kSmall + " --set material.youngs_modulus=1e-300 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/material/youngs_modulus: expected a number in [1, 2e+12]") !=
        std::string::npos);
  // Out of scale: named by key (config) or dataset (cache), not an internal check of the solver.
  r = run_command(kSpringFit + " simulate" + kSmall + " --set bones.lengths=1e308,1e308,1e308 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/bones/lengths: expected a list of numbers, each in [0.001, 100]") !=
        std::string::npos);
  // Bones of 1e-200 m left a system that could not be factorised, and a body radius of 1e-320 m
  // stopped in an internal check of a tet's volume; neither named the key.
  r = run_command(kSpringFit + " simulate" + kSmall + " --set bones.lengths=1e-200 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/bones/lengths: expected a list of numbers, each in [0.001, 100], got "
                   "[1e-200]") != std::string::npos);
  r = run_command(kSpringFit + " simulate" + kSmall + " --set body.radius=1e-320 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/body/radius: expected a number in [0.001, 100]") != std::string::npos);
  // 1e5 rings by mistake: 3e7 vertices, out of memory naming nothing (the dry run passed).
  r = run_command(kSpringFit + " simulate --dry-run --set body.rings=100000 -o " +
                  (dir / "g.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set body.rings: /body/rings: expected at most 1e6 vertices, (1 + rings "
                   "segments) (layers + 1) = (1 + 100000 x 16) x 19 = 3.04e+07, got 100000") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "g.h5"));
  write_pair(dir / "slow.h5", 5, 5, 10, 10, 1e-300);
  r = fit("slow.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("slow.h5: /sequences/dynamic@frame_rate: ") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  // A sequence name the cache does not have: what it has, and the key that chose the name.
  r = run_command(kSpringFit + " fit -q --set truth_sequence=dyn -i " + (dir / "rate.h5").string() +
                  " -o " + (dir / "s.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("rate.h5: /sequences/dyn: no such sequence (the cache has dynamic, "
                   "quasistatic); the config's /truth_sequence names the sequence to read") !=
        std::string::npos);
  r = run_command(kSpringFit + " fit -q -i " + (dir / "count.h5").string() +
                  " --set fit.ks_max=-1 -o " + (dir / "s.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/ks_max") != std::string::npos);
  r = run_command(kSpringFit + " fit -q --frames 1-5 -i " + (dir / "count.h5").string() + " -o " +
                  (dir / "s.h5").string());
  CHECK(r.exit_code == 2);  // whole sequences only: refused, not ignored
  CHECK(r.err.find("--frames") != std::string::npos);
  // Shared regions: malformed lists fail while reading the config, ids beyond the inputs' vertex
  // count once the inputs are read; both name the key and exit 2 before anything is written.
  write_pair(dir / "ok.h5", 5, 5, 10, 10, 30.0);
  const auto fit_with = [&](const std::string& set) {
    return run_command(kSpringFit + " fit -q -i " + (dir / "ok.h5").string() + " --set " + set +
                       " -o " + (dir / "s.h5").string());
  };
  r = fit_with("fit.shared_regions=[[0,1],[1,2]]");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/shared_regions") != std::string::npos);
  CHECK(r.err.find("1 is listed twice") != std::string::npos);
  r = fit_with("fit.shared_regions=[[0],[]]");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/shared_regions") != std::string::npos);
  r = fit_with("fit.shared_regions=[[0,-3]]");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/shared_regions") != std::string::npos);
  // The search's range: up to 1e12 fits (a spring rigid at any frame rate), beyond is refused
  // (1e308 overflowed the search to a non-finite spring and an internal error).
  r = run_command(kSpringFit + " fit -q -i " + (dir / "ok.h5").string() +
                  " --set fit.ks_max=1e12 --set fit.kd_max=1e12 -o " + (dir / "rigid.h5").string());
  CHECK(r.exit_code == 0);
  for (const char* key : {"ks_max", "kd_max"}) {
    r = fit_with("fit." + std::string(key) + "=1e308");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("/fit/" + std::string(key) +
                     ": expected a number in (0, 1e+12], got 1e+308") != std::string::npos);
  }
  r = fit_with("fit.shared_regions=[[0,99]]");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/shared_regions/0/1: expected a vertex id < 5") != std::string::npos);
  CHECK(r.err.find("got 99") != std::string::npos);
  r = fit_with("fit.generations=2000000000");  // ran for hours: past 60 the search is done
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/generations") != std::string::npos);
  CHECK(r.err.find("[0, 60]") != std::string::npos);
  r = fit_with("fit.population=2000000000");  // ran out of memory without naming the key
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/population") != std::string::npos);
  CHECK(r.err.find("[2, 1000]") != std::string::npos);
  r = fit_with("fit.rigid_tolerance=-1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/fit/rigid_tolerance") != std::string::npos);
  // A report path that is an input or the output would replace it (it used to, after the fit).
  r = fit_with("report=" + (dir / "ok.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/report: " + (dir / "ok.h5").string() + " is also an input") !=
        std::string::npos);
  r = fit_with("report=" + (dir / "s.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is also the output, which it would replace") != std::string::npos);
  CHECK(datadyn::io::CacheReader(dir / "ok.h5").sequence_names().size() == 2);
  CHECK(!std::filesystem::exists(dir / "s.h5"));
  // Pins on the centre line only (rings of 0.06 m, pin radius 0.05 m) would let the body spin
  // freely about it.
  r = run_command(kSpringFit + " simulate -q --set body.rings=2 -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/body/pin_radius") != std::string::npos);
  CHECK(r.err.find("innermost ring") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set material.model=rubber -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/material/model") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set motion.kind=dance -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/motion/kind") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set solver.substeps=2000000000 -o " +
                  (dir / "x.h5").string());  // ran for days instead of naming the key
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/solver/substeps: expected an integer in [1, 1000]") != std::string::npos);
}

TEST_CASE("spring-fit: shared regions, explicit and rigid, get one ks and kd each") {
  TempDir dir;
  auto r = run_command(kSpringFit + " simulate" + kSmall + " -o " + (dir / "a.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(kSpringFit + " fit -q -i " + (dir / "a.h5").string() +
                  " --set fit.shared_regions=[[3,4,5]] --set fit.rigid_tolerance=1e-9 -o " +
                  (dir / "s.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The rigid vertices counted independently: ground truth equal to the target in every frame
  // (the pinned vertices on the end caps; 1e-9 m is far below the free vertices' millimetres).
  datadyn::io::CacheReader in(dir / "a.h5");
  const auto qs = in.sequence("quasistatic"), dyn = in.sequence("dynamic");
  const Eigen::Index N = static_cast<Eigen::Index>(qs.point_count());
  std::vector<Eigen::Index> rigid;
  for (Eigen::Index v = 0; v < N; ++v) {
    double worst = 0.0;
    for (std::size_t f = 0; f < qs.frame_count(); ++f)
      worst = std::max(worst, (qs.positions(f).row(v) - dyn.positions(f).row(v)).norm());
    if (worst <= 1e-9 && (v < 3 || v > 5)) rigid.push_back(v);
  }
  REQUIRE(!rigid.empty());
  const auto report = read_json(dir / "s.report.json");
  REQUIRE(report["shared_regions"].size() == 2);
  CHECK(report["shared_regions"][0]["source"] == "explicit");
  CHECK(report["shared_regions"][0]["vertices"] == 3);
  CHECK(report["shared_regions"][1]["source"] == "rigid");
  CHECK(report["shared_regions"][1]["vertices"] == rigid.size());
  datadyn::io::CacheReader out(dir / "s.h5");
  const auto ks = out.read_array<double>("/springs/ks").data;
  const auto kd = out.read_array<double>("/springs/kd").data;
  for (const std::size_t v : {4, 5}) {
    CHECK(ks[v] == ks[3]);
    CHECK(kd[v] == kd[3]);
  }
  for (const Eigen::Index v : rigid) {
    CHECK(ks[static_cast<std::size_t>(v)] == ks[static_cast<std::size_t>(rigid[0])]);
    CHECK(kd[static_cast<std::size_t>(v)] == report["shared_regions"][1]["kd"].get<double>());
  }
  // The paper's fig. 7: what does not jiggle ends stiff and overdamped (kd² > 4 ks, unit mass:
  // no oscillation at all), at the box's corner; what does is mostly softer and underdamped (64
  // and 69 of the 72 free vertices here: a few next to the pins barely move and fit as stiff).
  const auto r0 = static_cast<std::size_t>(rigid[0]);
  CHECK(kd[r0] * kd[r0] > 4 * ks[r0]);
  CHECK(ks[r0] == doctest::Approx(1e4).epsilon(0.01));  // fit.ks_max, fit.kd_max
  CHECK(kd[r0] == doctest::Approx(1e3).epsilon(0.01));
  int free_count = 0, underdamped = 0, softer = 0;
  for (Eigen::Index v = 0; v < N; ++v) {
    if (std::find(rigid.begin(), rigid.end(), v) != rigid.end() || (v >= 3 && v <= 5)) continue;
    const auto i = static_cast<std::size_t>(v);
    ++free_count;
    underdamped += kd[i] * kd[i] < 4 * ks[i];
    softer += ks[i] < ks[r0];
  }
  INFO("free vertices ", free_count, ": underdamped ", underdamped, ", softer ", softer);
  CHECK(underdamped >= 0.8 * free_count);
  CHECK(softer >= 0.9 * free_count);
}

TEST_CASE("spring-fit: fitted springs are the same on 1 and 2 threads") {
  TempDir dir;
  auto r = run_command(kSpringFit + " simulate" + kSmall + " -o " + (dir / "a.h5").string());
  REQUIRE(r.exit_code == 0);
  for (const char* t : {"1", "2"}) {
    r = run_command(kSpringFit + " fit -q --threads " + t + " -i " + (dir / "a.h5").string() +
                    " -o " + (dir / (std::string("s") + t + ".h5")).string());
    REQUIRE(r.exit_code == 0);
  }
  datadyn::io::CacheReader a(dir / "s1.h5"), b(dir / "s2.h5");
  CHECK(a.read_array<double>("/springs/ks").data == b.read_array<double>("/springs/ks").data);
  CHECK(a.read_array<double>("/springs/kd").data == b.read_array<double>("/springs/kd").data);
}

TEST_CASE(
    "spring-fit: simulate follows a CMU motion capture, and a broken BVH names file and line") {
  const std::string bvh = "/usr/share/assimp/models/BVH/01_01.bvh";
  if (!std::filesystem::exists(bvh)) {
    MESSAGE("assimp-testmodels not installed: skipped");
    return;
  }
  TempDir dir;
  auto r = run_command(kSpringFit + " simulate" + kSmall +
                       " --set motion.kind=bvh --set motion.file=" + bvh + " -o " +
                       (dir / "bvh.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  {
    datadyn::io::CacheReader c(dir / "bvh.h5");
    const auto s = c.sequence("skinned");
    // The capture walks: the skinned body travels, unlike a body at rest.
    CHECK((s.positions(44) - s.positions(0)).cwiseAbs().maxCoeff() > 0.05);
  }
  // A start past the capture's end gave a frozen body with exit 0.
  r = run_command(kSpringFit + " simulate" + kSmall + " --set motion.kind=bvh --set motion.file=" +
                  bvh + " --set motion.start=60 -o " + (dir / "late.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("motion.start: 60.000000 s is at or past the end of " + bvh) !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "late.h5"));
  // A joint the skeleton does not have is the config's mistake: its key, and the names there
  // are (it was exit 1, as if the file were damaged).
  r = run_command(kSpringFit + " simulate" + kSmall +
                  " --set motion.kind=bvh --set motion.file=" + bvh +
                  " --set motion.joints=LowerBack,Spine,Spine2 -o " + (dir / "joint.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set motion.joints: /motion/joints/2: expected a joint of " + bvh +
                   "'s skeleton: Hips, LHipJoint, ") != std::string::npos);
  CHECK(r.err.find(", Spine1, Neck, ") != std::string::npos);
  CHECK(r.err.find("got \"Spine2\"") != std::string::npos);
  r = run_command(kSpringFit + " simulate" + kSmall + " --set motion.kind=bvh --set motion.file=" +
                  bvh + " --set motion.root=hips -o " + (dir / "joint.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set motion.root: /motion/root: expected a joint of ") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "joint.h5"));
  std::ofstream(dir / "broken.bvh") << "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 "
                                       "Xposition Yposition Zposition Zrotation Yrotation "
                                       "Xrotation\n End Site\n {\n OFFSET 0 1 0\n }\n}\nMOTION\n"
                                       "Frames: 2\nFrame Time: 0.1\n0 0 0 0 0 0\n0 0 0\n";
  r = run_command(kSpringFit + " simulate -q --set motion.kind=bvh --set bones.lengths=0.9" +
                  " --set motion.joints=Hips --set motion.file=" + (dir / "broken.bvh").string() +
                  " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("broken.bvh:") != std::string::npos);  // assimp names the line
  CHECK(!std::filesystem::exists(dir / "x.h5"));
  r = run_command(kSpringFit + " simulate -q --set motion.kind=bvh -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);  // kind bvh without a file
  CHECK(r.err.find("/motion/file") != std::string::npos);
  // A capture the config names that is not there is a config error, found beside the config;
  // a capture with another motion kind would be ignored, so it is refused.
  std::ofstream(dir / "walk.json")
      << R"({"bones": {"lengths": [0.9]}, "motion": {"kind": "bvh", "file": "walk.bvh",
            "joints": ["Hips"]}})";
  r = run_command(kSpringFit + " simulate -q -c " + (dir / "walk.json").string() + " -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("walk.json: /motion/file: expected an existing file, got \"walk.bvh\" (" +
                   (dir / "walk.bvh").string() + ": no such file)") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set motion.file=" + bvh + " -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/motion/kind: expected \"bvh\" with motion.file") != std::string::npos);
  // The joints are counted only for a capture: a --set of the kind that asks for one is named.
  std::ofstream(dir / "two.json") << R"({"bones": {"lengths": [0.5, 0.4]}})";
  r = run_command(kSpringFit + " simulate -q -c " + (dir / "two.json").string() +
                  " --set motion.kind=bvh --set motion.file=" + bvh + " -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set motion.kind: /motion/joints: expected one joint name per bone (2, as "
                   "bones.lengths)") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.h5"));
}

TEST_CASE("spring-fit: a Blender rig stands upright in metres whatever its export's axes") {
  // data/rigs: one rig exported as FBX with Blender's default axes (Z-up data under a rotation,
  // 1 unit = 1 cm), as FBX with Z up declared, and as glTF. Each is simulated upright: 0.64 m
  // tall along y (0.8 m scaled 0.8 by the armature), its skin within 1e-5 m of the others' (the
  // files' float32 rounding), and gravity (-y) sags the quasistatic target down the body more
  // than across it. The glTF once failed: TetGen left a point in no tet.
  TempDir dir;
  const std::string data = std::string(DATADYN_DATA_DIR) + "/rigs/";
  std::vector<datadyn::Points3> skins;
  for (const char* file : {"bend_rig.fbx", "bend_rig_zup.fbx", "bend_rig.glb"}) {
    INFO(file);
    const auto out = dir / (std::string(file) + ".h5");
    const auto r =
        run_command(kSpringFit + " simulate --set motion.kind=skin --set body.mesh=" + data + file +
                    " --set motion.frames=9 --set solver.dynamic=false" + " -o " + out.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The log says how long the file's animation is (frames 1-16 at 24 fps) and what is sampled.
    CHECK(r.err.find("its animation lasts 0.625 s; 9 frames at 30 fps from 0 s") !=
          std::string::npos);
    // The log says what the file declared.
    CHECK(r.err.find(std::string(file).ends_with(".glb")
                         ? "no declared axes or unit"
                         : "1 unit = 1.000000 cm") != std::string::npos);
    datadyn::io::CacheReader c(out);
    const auto skinned = c.sequence("skinned"), qs = c.sequence("quasistatic");
    const datadyn::Points3 rest = skinned.read_static<double>("rest/position").matrix();
    const Eigen::Vector3d extent = rest.colwise().maxCoeff() - rest.colwise().minCoeff();
    CHECK(extent.y() == doctest::Approx(0.64).epsilon(1e-4));
    CHECK(extent.x() < 0.2);
    CHECK(extent.z() < 0.2);
    const datadyn::Points3 sag = qs.positions(0) - skinned.positions(0);
    MESSAGE(file << ": mean sag " << sag.colwise().mean());
    CHECK(sag.col(1).mean() < 0);
    // Down more than across: the few pins near the axis let the body lean a little (lateral
    // means up to 0.44 of the downward one measured).
    CHECK(-sag.col(1).mean() > std::max(std::abs(sag.col(0).mean()), std::abs(sag.col(2).mean())));
    skins.push_back(skinned.positions(8));
  }
  // Exported without its animation, it used to run with exit 0 as a still "animation".
  const auto still =
      run_command(kSpringFit + " simulate --set motion.kind=skin --set body.mesh=" + data +
                  "bend_rig_still.fbx -o " + (dir / "still.h5").string());
  CHECK(still.exit_code == 1);
  CHECK(still.err.find("bend_rig_still.fbx: no animation in the file") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "still.h5"));
  // The same rig: the welded vertices may come in another order, so compare each with its
  // nearest.
  for (std::size_t k = 1; k < skins.size(); ++k) {
    REQUIRE(skins[k].rows() == skins[0].rows());
    double worst = 0;
    for (Eigen::Index v = 0; v < skins[k].rows(); ++v)
      worst = std::max(worst, (skins[0].rowwise() - skins[k].row(v)).rowwise().norm().minCoeff());
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("spring-fit: a rig's point cache plays on Blender's own mesh through match.file") {
  // The simulated vertices are assimp's, welded and in another order than Blender's. mesh-export
  // with match.file set to the mesh as Blender holds it (bend_rig_blender.json's rest pose, in
  // Blender's vertex order, Y up) writes a PC2 that Blender's vertex j follows: at frames 1, 8
  // and 16 it holds Blender's own evaluation of the rig (linear blend skinning, as Blender's
  // armature deforms), vertex for vertex. 2e-5 m: the files'
  // float32 and baked keys, as in tests/flesh/skinning_test.cpp.
  TempDir dir;
  const std::filesystem::path rigs = std::filesystem::path(DATADYN_DATA_DIR) / "rigs";
  std::ifstream in(rigs / "bend_rig_blender.json");
  REQUIRE(in);
  const auto blender = nlohmann::json::parse(in);
  {
    std::ofstream obj(dir / "blender_rest.obj");
    obj.precision(9);
    for (const auto& v : blender["rest"]) obj << "v " << v[0] << ' ' << v[1] << ' ' << v[2] << '\n';
  }
  auto r = run_command(kSpringFit + " simulate -q --set motion.kind=skin --set body.mesh=" +
                       (rigs / "bend_rig.fbx").string() +
                       " --set motion.frame_rate=24 --set motion.frames=16 --set "
                       "bones.skinning=linear --set "
                       "solver.dynamic=false -o " +
                       (dir / "rig.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(std::string(DATADYN_BIN_DIR) + "/mesh-export -i " + (dir / "rig.h5").string() +
                  " --sequence skinned --set match.file=" + (dir / "blender_rest.obj").string() +
                  " -o " + (dir / "rig.pc2").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto pc2 = datadyn::test::read_pc2(dir / "rig.pc2");
  REQUIRE(pc2.points == static_cast<int>(blender["rest"].size()));
  double worst = 0;
  std::size_t unordered = 0;  // vertices whose place the plain export would have got wrong
  datadyn::io::CacheReader cache(dir / "rig.h5");
  const datadyn::Points3 own = cache.sequence("skinned").positions(0);
  for (std::size_t k = 0; k < blender["frames"].size(); ++k) {
    const int frame = blender["frames"][k];
    for (std::size_t j = 0; j < blender["posed"][k].size(); ++j) {
      const auto& v = blender["posed"][k][j];
      const Eigen::Vector3d x(v[0].get<double>(), v[1].get<double>(), v[2].get<double>());
      worst = std::max(worst, (pc2.x[static_cast<std::size_t>(frame - 1)][j] - x).norm());
      if (k == 0 && j < static_cast<std::size_t>(own.rows()) &&
          (own.row(static_cast<Eigen::Index>(j)).transpose() - x).norm() > 1e-3)
        ++unordered;
    }
  }
  MESSAGE("Blender's vertices against the matched PC2: " << worst << " m; " << unordered
                                                         << " in another place unmatched");
  CHECK(worst < 2e-5);
  CHECK(unordered > 0);  // the match is needed: assimp's order is not Blender's
}

TEST_CASE("spring-fit: the rig exported again, its faces in another order, takes the springs") {
  // data/rigs/belly_hop_again.fbx is belly_hop.fbx exported by a second run of Blender: the same
  // scene, its faces listed in another order. The simulated vertices were numbered in the order
  // the faces reach them, so the two gave two vertex orders and apply refused springs fitted on
  // one for the other ("fitted on a mesh with other faces"). Now both give one body.
  const std::filesystem::path rigs = std::filesystem::path(DATADYN_DATA_DIR) / "rigs";
  const auto first = datadyn::flesh::load_skin(rigs / "belly_hop.fbx", 0.0);
  const auto again = datadyn::flesh::load_skin(rigs / "belly_hop_again.fbx", 0.0);
  REQUIRE(first.triangles.rows() == again.triangles.rows());
  // The files do list their faces in another order (the first face's corners differ).
  CHECK((first.rest.row(first.triangles(0, 0)) - again.rest.row(again.triangles(0, 0))).norm() >
        1e-3);
  TempDir dir;
  for (const char* name : {"belly_hop", "belly_hop_again"}) {
    const auto r = run_command(kSpringFit + " simulate -q --set motion.kind=skin --set body.mesh=" +
                               (rigs / (std::string(name) + ".fbx")).string() +
                               " --set motion.frames=8 -o " + (dir / name).string() + ".h5");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  datadyn::io::CacheReader a(dir / "belly_hop.h5"), b(dir / "belly_hop_again.h5");
  const auto sa = a.sequence("skinned"), sb = b.sequence("skinned");
  CHECK(sa.topology("triangles") == sb.topology("triangles"));
  CHECK(sa.read_static<double>("rest/position").matrix() ==
        sb.read_static<double>("rest/position").matrix());
  const datadyn::FaceVaryingUv ua = datadyn::io::read_face_uv(sa),
                               ub = datadyn::io::read_face_uv(sb);
  CHECK(ua.corners == ub.corners);
  CHECK(ua.coordinates == ub.coordinates);
  // The motion is the same to float32's last bit or so (the files' baked keys round alike but
  // for a few): 1e-6 m.
  CHECK((sa.positions(7) - sb.positions(7)).cwiseAbs().maxCoeff() < 1e-6);
  auto r = run_command(kSpringFit + " fit -q -i " + (dir / "belly_hop.h5").string() + " -o " +
                       (dir / "springs.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(kSpringFit + " apply -q -i " + (dir / "belly_hop_again.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " -o " + (dir / "applied.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("spring-fit: simulate a rigged mesh from a file, tetrahedralised, with its animation") {
  const std::string fbx = "/usr/share/assimp/models/FBX/huesitos.fbx";
  const std::string gltf = "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf";
  if (!std::filesystem::exists(fbx) || !std::filesystem::exists(gltf)) {
    MESSAGE("assimp-testmodels not installed: skipped");
    return;
  }
  TempDir dir;
  const std::string mesh = " -q --set motion.kind=skin --set body.scale=0.1 --set body.mesh=";
  auto r = run_command(kSpringFit + " simulate" + mesh + fbx + " --set motion.frames=20 -o " +
                       (dir / "m.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader c(dir / "m.h5");
  const auto skinned = c.sequence("skinned"), qs = c.sequence("quasistatic"),
             dyn = c.sequence("dynamic");
  const auto tris = skinned.topology("triangles");
  const Eigen::Index V = static_cast<Eigen::Index>(skinned.point_count());
  // The file's split vertices are welded into one closed genus-0 surface, kept as TetGen's
  // boundary: Euler's V - E + F = 2 with E = 3F/2.
  CHECK(V - 3 * tris.rows() / 2 + tris.rows() == 2);
  CHECK(tris.rows() == 120);
  // The animation moves the mesh (0.1 m per file unit: decimetres of motion) and the body
  // follows it with a lag of millimetres, not a blow-up.
  double moved = 0.0, lag = 0.0;
  for (std::size_t f = 0; f < skinned.frame_count(); ++f) {
    moved = std::max(moved, (skinned.positions(f) - skinned.positions(0)).cwiseAbs().maxCoeff());
    lag = std::max(lag, (dyn.positions(f) - qs.positions(f)).cwiseAbs().maxCoeff());
  }
  MESSAGE("moved " << moved << " m, lag " << lag << " m");
  CHECK(moved > 0.05);
  CHECK(lag > 1e-4);
  CHECK(lag < 0.1);
  {
    // The surface is the file's faces, welded, in an order of the surface's own (by position,
    // each triangle turned to start at its lowest vertex): cache triangle t is one of the file's
    // faces, each of its corners at that face's vertex (0.1 m per unit, welded to 1e-6 of the
    // mesh size) with the file's texture coordinates (float32 in the cache: 1e-7 on values of
    // order 1), so the seams of its UV map stay where they were.
    const datadyn::flesh::LoadedSkin file = datadyn::flesh::load_skin(fbx, 0.0);
    REQUIRE(file.uv.rows() == file.rest.rows());
    REQUIRE(tris.rows() == file.triangles.rows());
    const auto rest = skinned.read_static<double>("rest/position").matrix();
    const datadyn::FaceVaryingUv uv = datadyn::io::read_face_uv(skinned);
    REQUIRE(uv.corners.rows() == tris.rows());
    const double size =
        0.1 * (file.rest.colwise().maxCoeff() - file.rest.colwise().minCoeff()).norm();
    // The file's vertex at corner k of cache triangle t, found among the faces not yet taken.
    std::vector<std::array<int, 3>> corner(static_cast<std::size_t>(tris.rows()));
    std::vector<char> taken(static_cast<std::size_t>(tris.rows()), 0);
    for (Eigen::Index t = 0; t < tris.rows(); ++t) {
      bool found = false;
      for (Eigen::Index f = 0; f < tris.rows() && !found; ++f)
        for (int turn = 0; turn < 3 && !found && !taken[static_cast<std::size_t>(f)]; ++turn) {
          bool same = true;
          for (int k = 0; k < 3; ++k)
            same = same &&
                   (rest.row(tris(t, k)) - 0.1 * file.rest.row(file.triangles(f, (k + turn) % 3)))
                           .norm() < 1e-5 * size;
          if (!same) continue;
          found = true;
          taken[static_cast<std::size_t>(f)] = 1;
          for (int k = 0; k < 3; ++k)
            corner[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)] =
                file.triangles(f, (k + turn) % 3);
        }
      INFO("cache triangle " << t);
      REQUIRE(found);
    }
    int seam_corners = 0;
    for (Eigen::Index t = 0; t < tris.rows(); ++t)
      for (int k = 0; k < 3; ++k) {
        const int v = corner[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)];
        CHECK((uv.coordinates.row(uv.corners(t, k)) - file.uv.row(v)).cwiseAbs().maxCoeff() < 1e-7);
        for (Eigen::Index s = 0; s < t; ++s)  // the same welded vertex, another value: a seam
          for (int d = 0; d < 3; ++d)
            if (tris(s, d) == tris(t, k) &&
                uv.coordinates.row(uv.corners(s, d)) != uv.coordinates.row(uv.corners(t, k)))
              ++seam_corners;
      }
    MESSAGE("corners meeting another value at their vertex: " << seam_corners);
    CHECK(seam_corners > 0);  // the file has seams, and they survive the welding
    // mesh-export writes them per corner.
    r = run_command(std::string(DATADYN_BIN_DIR) + "/mesh-export -q -i " + (dir / "m.h5").string() +
                    " --sequence dynamic --frames 1 -o " + (dir / "m.####.obj").string());
    REQUIRE(r.exit_code == 0);
    const auto obj = datadyn::test::read_obj(dir / "m.0001.obj");
    REQUIRE(obj.ft.size() == static_cast<std::size_t>(tris.rows()));
    for (Eigen::Index t = 0; t < tris.rows(); ++t)
      for (int k = 0; k < 3; ++k)
        CHECK((obj.vt.at(obj.ft[t][k]) -
               file.uv.row(corner[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)])
                   .transpose())
                  .cwiseAbs()
                  .maxCoeff() < 1e-7);
  }
  // fit and apply pass them on: the springs' maps and the applied animation carry them too.
  r = run_command(kSpringFit + " fit -q -i " + (dir / "m.h5").string() + " -o " +
                  (dir / "springs.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(kSpringFit + " apply -q -i " + (dir / "m.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " -o " + (dir / "applied.h5").string());
  REQUIRE(r.exit_code == 0);
  {
    const datadyn::FaceVaryingUv uv = datadyn::io::read_face_uv(skinned);
    for (const auto& [file, name] :
         {std::pair{"springs.h5", "springs"}, {"applied.h5", "dynamic"}}) {
      INFO(file);
      const datadyn::FaceVaryingUv passed =
          datadyn::io::read_face_uv(datadyn::io::CacheReader(dir / file).sequence(name));
      CHECK(passed.corners == uv.corners);
      CHECK(passed.coordinates == uv.coordinates);
    }
  }
  // The neo-Hookean Newton solver on the same body gives the same bits on 1 and 2 threads.
  for (const char* t : {"1", "2"}) {
    r = run_command(kSpringFit + " simulate --threads " + t + mesh + fbx +
                    " --set motion.frames=6 --set material.model=neo_hookean -o " +
                    (dir / (std::string("n") + t + ".h5")).string());
    REQUIRE(r.exit_code == 0);
  }
  {
    datadyn::io::CacheReader n1(dir / "n1.h5"), n2(dir / "n2.h5");
    for (std::size_t f = 0; f < 6; ++f)
      CHECK(n1.sequence("dynamic").positions(f) == n2.sequence("dynamic").positions(f));
  }
  // An open surface (Khronos' simple_skin strip) cannot be meshed: the file is named, exit 1.
  r = run_command(kSpringFit + " simulate" + mesh + gltf + " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("simple_skin.gltf: ") != std::string::npos);
  CHECK(r.err.find("not closed") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.h5"));
  r = run_command(kSpringFit + " simulate -q --set motion.kind=skin -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);  // kind skin without a mesh
  CHECK(r.err.find("/body/mesh") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set body.mesh=" + fbx + " -o " +
                  (dir / "x.h5").string());
  CHECK(r.exit_code == 2);  // a mesh moves by its own animation only
  CHECK(r.err.find("/motion/kind") != std::string::npos);
  r = run_command(kSpringFit + " simulate -q --set motion.kind=skin --set body.mesh=" +
                  (dir / "none.fbx").string() + " -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set body.mesh: /body/mesh: expected an existing file") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.h5"));
}

TEST_CASE("spring-fit: apply refuses springs fitted on a mesh with other faces") {
  // The same character exported again with its vertices in another order has the same count:
  // apply gave every vertex another vertex's spring, with exit 0. The faces tell them apart.
  TempDir dir;
  datadyn::Triangles fitted(2, 3), reordered(2, 3);
  fitted << 0, 1, 2, 1, 3, 2;
  reordered << 1, 0, 2, 0, 3, 2;  // vertices 0 and 1 swapped
  const auto write = [&](const std::filesystem::path& path, const datadyn::Triangles& faces,
                         bool springs) {
    datadyn::io::CacheWriter w(path, {"test", "test", "{}", ""});
    datadyn::Points3 p(4, 3);
    p << 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0;
    if (springs) {
      w.write_array("/springs/ks", datadyn::io::view(Eigen::VectorXd::Constant(4, 50.0).eval()));
      w.write_array("/springs/kd", datadyn::io::view(Eigen::VectorXd::Constant(4, 1.0).eval()));
    }
    auto& s = w.add_sequence(springs ? "springs" : "quasistatic", {30.0, 3});
    s.write_static("topology/triangles", datadyn::io::view(faces));
    for (int f = 0; f < (springs ? 1 : 5); ++f)
      s.append_frame(f + 1, f / 30.0, {{"points/position", datadyn::io::view(p)}});
    w.commit();
  };
  write(dir / "springs.h5", fitted, true);
  write(dir / "same.h5", fitted, false);
  write(dir / "other.h5", reordered, false);
  write(dir / "fewer.h5", fitted.topRows(1).eval(), false);  // another face count too
  const std::string apply = kSpringFit + " apply -q -i " + (dir / "springs.h5").string() + " -i ";
  auto r = run_command(apply + (dir / "same.h5").string() + " -o " + (dir / "a.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  for (const char* other : {"other.h5", "fewer.h5"}) {
    INFO(other);
    r = run_command(apply + (dir / other).string() + " -o " + (dir / "b.h5").string());
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("springs.h5: /sequences/springs/topology/triangles: the springs were fitted "
                     "on a mesh with other faces than") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "b.h5"));
  }
}

TEST_CASE("spring-fit: apply refuses a damaged springs cache, naming the file and dataset") {
  // Each of these ran: a [N, 2] ks took its first column (exit 0), 1e300 diverged and named the
  // output, NaN named only /springs, and a file without /springs/ks was read as an animation.
  TempDir dir;
  const int N = 4;
  write_targets(dir / "anim.h5", 5, N,
                [](int f, int i) { return Eigen::RowVector3d(0.01 * f * f, i, 0.0); });
  const Eigen::VectorXd ks = Eigen::VectorXd::Constant(N, 50.0),
                        kd = Eigen::VectorXd::Constant(N, 1.0);
  const auto apply = [&](const std::string& springs) {
    return run_command(kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
                       (dir / springs).string() + " -o " + (dir / "out.h5").string());
  };
  const auto refused = [&](const std::string& springs, const std::string& message) {
    CAPTURE(springs);
    const auto r = apply(springs);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find((dir / springs).string() + ": " + message) != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out.h5"));
  };
  write_springs(dir / "good.h5", ks, kd);
  REQUIRE(apply("good.h5").exit_code == 0);
  std::filesystem::remove(dir / "out.h5");
  {
    datadyn::io::CacheWriter w(dir / "wide.h5", {"test", "test", "{}", ""});
    const Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> wide =
        Eigen::MatrixXd::Constant(N, 2, 50.0);
    w.write_array("/springs/ks", datadyn::io::view(wide));
    w.write_array("/springs/kd", datadyn::io::view(kd));
    w.commit();
  }
  refused("wide.h5", "/springs/ks: expected float64 [N], one spring per vertex, got [4, 2]");
  {
    datadyn::io::CacheWriter w(dir / "group.h5", {"test", "test", "{}", ""});
    w.write_array("/springs/ks/values", datadyn::io::view(ks));
    w.write_array("/springs/kd", datadyn::io::view(kd));
    w.commit();
  }
  refused("group.h5", "/springs/ks: expected a dataset");
  write_springs(dir / "nan.h5", ks, kd);
  datadyn::test::poke_float(dir / "nan.h5", "/springs/ks", 2, std::nan(""));
  refused("nan.h5",
          "/springs/ks: vertex 2 has nan, expected a number in [0, 1e12] 1/s^2 (what `spring-fit "
          "fit` writes)");
  write_springs(dir / "huge.h5", Eigen::VectorXd::Constant(N, 1e300), kd);
  refused("huge.h5", "/springs/ks: vertex 0 has 1e+300, expected a number in [0, 1e12] 1/s^2");
  write_springs(dir / "negative.h5", ks, Eigen::VectorXd::Constant(N, -1.0));
  refused("negative.h5", "/springs/kd: vertex 0 has -1, expected a number in [0, 1e12] 1/s");
  write_springs(dir / "short.h5", Eigen::VectorXd::Constant(N - 1, 50.0), kd);
  refused("short.h5", "/springs/ks: 3 springs, but " + (dir / "anim.h5").string() +
                          ": /sequences/quasistatic has 4 vertices");
  // Without one of the datasets, as `fit` writes it otherwise (with its sequence "springs").
  for (const std::string name : {"ks", "kd"}) {
    const std::string file = "no_" + name + ".h5";
    {
      datadyn::io::CacheWriter w(dir / file, {"test", "test", "{}", ""});
      w.write_array("/springs/" + std::string(name == "ks" ? "kd" : "ks"), datadyn::io::view(kd));
      auto& s = w.add_sequence("springs", {30.0, 3});
      const datadyn::Points3 rest = datadyn::Points3::Zero(N, 3);
      s.append_frame(1, 0.0, {{"points/position", datadyn::io::view(rest)}});
      w.commit();
    }
    refused(file, "/springs/" + name +
                      ": no such dataset; a springs cache from `spring-fit fit` holds /springs/ks "
                      "and /springs/kd, float64 [N] with one spring per vertex");
  }
  // apply reads two caches; a third was opened and refused only as a second of its kind.
  const auto r = run_command(kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
                             (dir / "good.h5").string() + " -i " + (dir / "missing.h5").string() +
                             " -o " + (dir / "out.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-i/--input: apply reads two caches, an animation and a springs cache (from "
                   "`spring-fit fit`), got 3 files") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out.h5"));
}

TEST_CASE("spring-fit: a BVH with a frame time of 0 or a negative frame count exits 1 naming it") {
  // Frame Time 0 was simulated with exit 0; Frames -4 gave "cannot read the motion:
  // std::bad_alloc". The checks themselves: tests/flesh/skinning_test.cpp.
  TempDir dir;
  for (const auto& [frames, time, line] :
       {std::tuple{"4", "0", "Frame Time is 0"}, std::tuple{"-4", "0.0333333", "Frames is -4"}}) {
    CAPTURE(line);
    const auto bvh = dir / "motion.bvh";
    std::ofstream(bvh) << "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition "
                          "Yposition Zposition Zrotation Yrotation Xrotation\n End Site\n {\n"
                          " OFFSET 0 1 0\n }\n}\nMOTION\nFrames: "
                       << frames << "\nFrame Time: " << time
                       << "\n0 0 0 0 0 0\n0 0 0 5 0 0\n0 0 0 10 0 0\n0 0 0 15 0 0\n";
    const auto r = run_command(kSpringFit +
                               " simulate -q --set motion.kind=bvh --set "
                               "bones.lengths=0.9 --set motion.joints=Hips --set motion.frames=3"
                               " --set motion.file=" +
                               bvh.string() + " -o " + (dir / "x.h5").string());
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(bvh.string() + ": cannot read the motion: " + bvh.string() + ":" +
                     (std::string(line).starts_with("Frames") ? "12" : "13") + " - " + line +
                     ", expected ") != std::string::npos);
    CHECK(r.err.find("bad_alloc") == std::string::npos);
    CHECK(!std::filesystem::exists(dir / "x.h5"));
  }
}

TEST_CASE("spring-fit: apply restarts the springs at a teleport or a listed frame") {
  TempDir dir;
  // Five points swaying along x at 30 fps (frames 1-30), teleported 10 m along x at frame 16.
  write_targets(dir / "anim.h5", 30, 5, [](int f, int i) {
    return Eigen::RowVector3d(0.1 * std::sin(0.2 * f + i) + (f >= 15 ? 10 : 0), i, 0);
  });
  write_springs(dir / "springs.h5", Eigen::VectorXd::Constant(5, 50.0),
                Eigen::VectorXd::Constant(5, 1.0));
  const std::string apply = kSpringFit + " apply -i " + (dir / "anim.h5").string() + " -i " +
                            (dir / "springs.h5").string();
  const auto frame = [&](const std::string& file, std::size_t index) {
    return datadyn::io::CacheReader(dir / file).sequence("dynamic").positions(index);
  };
  const auto target = datadyn::io::CacheReader(dir / "anim.h5").sequence("quasistatic");

  auto r = run_command(apply + " -o " + (dir / "free.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Unaware of the teleport, the spring is thrown metres off its target after the jump.
  CHECK((frame("free.h5", 16) - target.positions(16)).rowwise().norm().maxCoeff() > 1.0);

  r = run_command(apply + " --set teleport_distance=1 -o " + (dir / "tele.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("the springs restarted at rest at frame(s) 16") != std::string::npos);
  CHECK(frame("tele.h5", 15) == target.positions(15));  // frame 16: at rest on the target
  CHECK((frame("tele.h5", 16) - target.positions(16)).rowwise().norm().maxCoeff() < 0.05);
  const auto attrs = datadyn::io::CacheReader(dir / "tele.h5").sequence("dynamic").attributes();
  CHECK(std::get<std::vector<std::int64_t>>(attrs.at("reset_frames")) ==
        std::vector<std::int64_t>{16});
  // Up to frame 14 the run is the free one; frame 15 ends on a one-sided tangent, which no
  // longer sees the jump.
  for (std::size_t f = 0; f < 14; ++f) CHECK(frame("tele.h5", f) == frame("free.h5", f));
  CHECK(frame("tele.h5", 14) != frame("free.h5", 14));

  // The same cut listed by frame number gives the same bytes of positions.
  r = run_command(apply + " -q --set reset_frames=[16] -o " + (dir / "listed.h5").string());
  REQUIRE(r.exit_code == 0);
  for (std::size_t f = 0; f < 30; ++f) CHECK(frame("listed.h5", f) == frame("tele.h5", f));

  r = run_command(apply + " --dry-run --set teleport_distance=1 -o " + (dir / "d.h5").string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("restarting at frame(s) 16 and write") != std::string::npos);
  // 30 frames of 5 float32 points: 1,800 bytes of positions.
  CHECK(r.out.find("d.h5 (about 1.8 kB of positions)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "d.h5"));

  // A frame the sequence does not have: a config error naming key, value and the frames there.
  r = run_command(apply + " -q --set reset_frames=[16,31] -o " + (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set reset_frames: /reset_frames: expected frame numbers of") !=
        std::string::npos);
  CHECK(r.err.find("/sequences/quasistatic (1 to 30), got 31") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.h5"));
  r = run_command(apply + " -q --set teleport_distance=-1 -o " + (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/teleport_distance") != std::string::npos);
}

TEST_CASE("spring-fit: apply reads frame by frame and gives the in-memory integration's states") {
  // apply holds four target frames at a time and finds teleports as it reads. Its states must be
  // those of spring_apply over the whole animation held in memory (the same arithmetic, so the
  // same float32 bits), with sub-frames, a teleport, a listed reset and an amount: a wrong
  // neighbour frame in the window changes a tangent and so every later state.
  TempDir dir;
  write_targets(dir / "anim.h5", 40, 7, [](int f, int i) {
    return Eigen::RowVector3d(0.1 * std::sin(0.3 * f + i) + (f >= 19 ? 5 : 0),
                              0.05 * std::cos(0.17 * f * (i + 1)), 0.01 * i * f);
  });
  Eigen::VectorXd ks(7), kd(7);
  ks << 5, 40, 120, 400, 1000, 0, 2500;
  kd << 0.5, 2, 8, 1, 30, 3, 100;
  write_springs(dir / "springs.h5", ks, kd);
  const auto r = run_command(kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
                             (dir / "springs.h5").string() +
                             " --set subframes=3 --set amount=1.5 --set teleport_distance=1"
                             " --set reset_frames=[31] -o " +
                             (dir / "out.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto anim = datadyn::io::CacheReader(dir / "anim.h5").sequence("quasistatic");
  std::vector<datadyn::Points3> targets;
  for (std::size_t f = 0; f < anim.frame_count(); ++f) targets.push_back(anim.positions(f));
  datadyn::flesh::SpringApplyOptions opt;
  opt.subframes = 3;
  opt.amount = 1.5;
  opt.resets = {19, 30};  // the jump into frame 20 and frame 31, as indices
  const auto expected = datadyn::flesh::spring_apply(targets, 1.0 / 30.0, {ks, kd}, opt);
  const auto out = datadyn::io::CacheReader(dir / "out.h5").sequence("dynamic");
  REQUIRE(out.frame_count() == expected.positions.size());
  for (std::size_t k = 0; k < out.frame_count(); ++k) {
    INFO("output frame index " << k);
    CHECK(out.positions(k) == expected.positions[k].cast<float>().cast<double>());
  }
  CHECK(std::get<std::vector<std::int64_t>>(out.attributes().at("reset_frames")) ==
        std::vector<std::int64_t>{19 * 3 + 1, 30 * 3 + 1});
  // The shortest animation, two frames, cut between them by a teleport; and a cut at the last
  // interval with one listed at the first frame (which starts at rest anyway).
  write_targets(dir / "two.h5", 2, 7, [](int f, int i) { return Eigen::RowVector3d(f * 5, i, 0); });
  for (const auto& [file, sets, resets] :
       {std::tuple<std::string, std::string, std::vector<std::size_t>>{
            "two.h5", " --set teleport_distance=1", {1}},
        {"anim.h5", " --set reset_frames=[1,40]", {39}}}) {
    INFO(file << sets);
    const auto r2 = run_command(kSpringFit + " apply -q -i " + (dir / file).string() + " -i " +
                                (dir / "springs.h5").string() + " --set subframes=3" + sets +
                                " -o " + (dir / "edge.h5").string());
    INFO(r2.err);
    REQUIRE(r2.exit_code == 0);
    const auto in = datadyn::io::CacheReader(dir / file).sequence("quasistatic");
    std::vector<datadyn::Points3> x;
    for (std::size_t f = 0; f < in.frame_count(); ++f) x.push_back(in.positions(f));
    datadyn::flesh::SpringApplyOptions o;
    o.subframes = 3;
    o.resets = resets;
    const auto want = datadyn::flesh::spring_apply(x, 1.0 / 30.0, {ks, kd}, o);
    const auto got = datadyn::io::CacheReader(dir / "edge.h5").sequence("dynamic");
    REQUIRE(got.frame_count() == want.positions.size());
    for (std::size_t k = 0; k < got.frame_count(); ++k)
      CHECK(got.positions(k) == want.positions[k].cast<float>().cast<double>());
  }
}

TEST_CASE("spring-fit: apply checks every frame of the truth, at frame 0 and in a dry run too") {
  // The truth is read frame by frame as apply compares it; frame 0 is never compared, and a dry
  // run compares nothing, but a NaN there is still a damaged input (exit 1, naming the frame).
  TempDir dir;
  write_springs(dir / "springs.h5", Eigen::VectorXd::Constant(4, 50.0),
                Eigen::VectorXd::Constant(4, 1.0));
  for (const int bad : {0, 3}) {
    const auto anim = dir / ("anim" + std::to_string(bad) + ".h5");
    write_pair(anim, 4, 4, 6, 6, 30.0, bad);  // frames numbered from 0
    for (const std::string flag : {"", " --dry-run"}) {
      INFO("frame index " << bad << flag);
      const auto r =
          run_command(kSpringFit + " apply -q" + flag + " -i " + anim.string() + " -i " +
                      (dir / "springs.h5").string() + " -o " + (dir / "out.h5").string());
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("/sequences/dynamic/points/position: frame " + std::to_string(bad) +
                       " (index " + std::to_string(bad) + "): point 1 is not finite") !=
            std::string::npos);
      CHECK_FALSE(std::filesystem::exists(dir / "out.h5"));
    }
  }
}

TEST_CASE("spring-fit: apply's memory does not grow with the animation's length") {
  // 1,500 frames of 4,000 points: 144 MB of targets as doubles, and as much again of output. The
  // process starts at about 20 MB and holds four target frames, the output frames of one
  // interval and the writer's chunk cache (a few MB); an apply that held the animation and its
  // result would pass 290 MB.
  TempDir dir;
  write_targets(dir / "anim.h5", 1500, 4000, [](int f, int i) {
    return Eigen::RowVector3d(0.01 * i, 0.1 * std::sin(0.1 * f + 0.001 * i), 0);
  });
  write_springs(dir / "springs.h5", Eigen::VectorXd::Constant(4000, 200.0),
                Eigen::VectorXd::Constant(4000, 4.0));
  const auto r = datadyn::test::run_measured(
      kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
      (dir / "springs.h5").string() + " -o " + (dir / "out.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.peak_mb >= 0.0);
  const double mb = r.peak_mb;
  MESSAGE("spring-fit apply peak RSS: " << mb << " MB for 1,500 frames of 4,000 points");
  CHECK(mb < 100.0);
  CHECK(datadyn::io::CacheReader(dir / "out.h5").sequence("dynamic").frame_count() == 1500);
}

TEST_CASE("spring-fit: apply's stiffness and damping scales equal scaled springs, amount scales") {
  TempDir dir;
  write_targets(dir / "anim.h5", 20, 3, [](int f, int i) {
    return Eigen::RowVector3d(0.2 * std::sin(0.3 * f * (i + 1)), 0.01 * f, i);
  });
  const Eigen::VectorXd ks = Eigen::Vector3d(20.0, 150.0, 900.0);
  const Eigen::VectorXd kd = Eigen::Vector3d(0.5, 3.0, 40.0);
  write_springs(dir / "springs.h5", ks, kd);
  write_springs(dir / "scaled.h5", ks * 0.25, kd * 3.0);
  const auto apply = [&](const std::string& springs, const std::string& sets,
                         const std::string& out) {
    const auto r = run_command(kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
                               (dir / springs).string() + sets + " --set subframes=2 -o " +
                               (dir / out).string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    datadyn::io::CacheReader c(dir / out);
    std::vector<datadyn::Points3> frames;
    for (std::size_t f = 0; f < c.sequence("dynamic").frame_count(); ++f)
      frames.push_back(c.sequence("dynamic").positions(f));
    return frames;
  };
  // The scales are those of a springs cache scaled beforehand: the same bytes.
  const auto scaled = apply("springs.h5", " --set stiffness_scale=0.25 --set damping_scale=3", "a");
  CHECK(scaled == apply("scaled.h5", "", "b"));
  const auto plain = apply("springs.h5", "", "c");
  CHECK(scaled != plain);
  // amount 0 is the target's cubic (the target at frames), 3 triples the deviation.
  const auto none = apply("springs.h5", " --set amount=0", "d");
  const auto triple = apply("springs.h5", " --set amount=3", "e");
  const auto target = datadyn::io::CacheReader(dir / "anim.h5").sequence("quasistatic");
  REQUIRE(none.size() == 39);
  double largest = 0.0;
  for (std::size_t k = 0; k < none.size(); ++k) {
    if (k % 2 == 0) CHECK(none[k] == target.positions(k / 2));
    largest = std::max(largest, (plain[k] - none[k]).cwiseAbs().maxCoeff());
    // 1e-6 m: the cache keeps float32 positions (half an ulp 1.2e-7 m up to 2 m), and the check
    // adds eight such roundings.
    CHECK((triple[k] - none[k] - 3.0 * (plain[k] - none[k])).cwiseAbs().maxCoeff() < 1e-6);
  }
  CHECK(largest > 1e-2);
  const auto r = run_command(kSpringFit + " apply -q -i " + (dir / "anim.h5").string() + " -i " +
                             (dir / "springs.h5").string() + " --set stiffness_scale=0 -o " +
                             (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set stiffness_scale: /stiffness_scale: expected") != std::string::npos);
}

TEST_CASE("spring-fit: simulate without the ground truth gives the same targets for apply") {
  TempDir dir;
  const auto sim = [&](const std::string& sets, const std::string& out) {
    const auto r = run_command(kSpringFit + " simulate" + kSmall + " --set motion.kind=shake" +
                               sets + " -o " + (dir / out).string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return datadyn::io::CacheReader(dir / out);
  };
  const auto full = sim("", "full.h5");
  const auto targets = sim(" --set solver.dynamic=false", "targets.h5");
  CHECK(targets.sequence_names() == std::vector<std::string>{"quasistatic", "skinned"});
  for (const char* name : {"skinned", "quasistatic"}) {
    REQUIRE(targets.sequence(name).frame_count() == 45);
    for (std::size_t f = 0; f < 45; f += 11)
      CHECK(targets.sequence(name).positions(f) == full.sequence(name).positions(f));
  }
  auto r = run_command(kSpringFit + " fit -q -i " + (dir / "full.h5").string() + " -o " +
                       (dir / "springs.h5").string());
  REQUIRE(r.exit_code == 0);
  // apply needs no truth: without one it writes the springs' motion and no report.
  r = run_command(kSpringFit + " apply -q -i " + (dir / "targets.h5").string() + " -i " +
                  (dir / "springs.h5").string() + " -o " + (dir / "out.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(datadyn::io::CacheReader(dir / "out.h5").sequence("dynamic").frame_count() == 45);
  CHECK_FALSE(std::filesystem::exists(dir / "out.report.json"));
  // fit does need one, and says which.
  r = run_command(kSpringFit + " fit -q -i " + (dir / "targets.h5").string() + " -o " +
                  (dir / "s2.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("targets.h5: /sequences/dynamic: no such sequence") != std::string::npos);
  CHECK(r.err.find("/truth_sequence") != std::string::npos);
  // A report named like the cache by another spelling of its path: refused, not written over it.
  r = run_command("cd " + dir.path().string() + " && " + kSpringFit +
                  " fit -q -i full.h5 -o y.h5 --set report=./y.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/report: ./y.h5 is also the output") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "y.h5"));
  r = run_command(kSpringFit + " simulate --dry-run --set solver.dynamic=false -o " +
                  (dir / "d.h5").string());
  CHECK(r.out.find("(targets only)") != std::string::npos);
}

TEST_CASE("spring-fit: an output directory that does not exist fails before the simulation") {
  TempDir dir;
  // simulate and fit open their cache after the work: the directory was found missing then.
  const auto r = run_command(kSpringFit + " simulate" + kSmall.substr(3) + " -o " +
                             (dir / "no" / "s.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("does not exist") != std::string::npos);
  CHECK(r.err.find("frame solve 1/") == std::string::npos);  // the work never started
}

TEST_CASE("spring-fit: simulate reports both passes over the frames") {
  // The quasistatic pass over every frame printed nothing (half a minute on a large body), and
  // the first estimate counted it into one frame: "eta 2:55:31" for a 72 s run.
  TempDir dir;
  const auto r = run_command(kSpringFit + " simulate" + kSmall.substr(3) + " -v -o " +
                             (dir / "s.h5").string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("45 frames: the quasistatic targets first, then the dynamic state") !=
        std::string::npos);
  for (const char* line :
       {"frame solve 1/90 ", "frame solve 45/90 ", "frame solve 46/90 ", "frame solve 90/90 "}) {
    CAPTURE(line);
    CHECK(r.err.find(line) != std::string::npos);
  }
}

TEST_CASE("spring-fit: fit cuts a training sequence at a teleport and fits each side on its own") {
  TempDir dir;
  for (const char* motion : {"swing", "bounce"}) {
    const auto r = run_command(kSpringFit + " simulate" + kSmall + " --set motion.kind=" + motion +
                               " -o " + (dir / (std::string(motion) + ".h5")).string());
    REQUIRE(r.exit_code == 0);
  }
  // The bounce moved 2 m along x, alone ("moved.h5") and after the swing in one sequence
  // ("cut.h5"), as a concatenated capture would have it.
  const auto write = [&](const std::filesystem::path& path, bool with_swing) {
    datadyn::io::CacheReader swing(dir / "swing.h5"), bounce(dir / "bounce.h5");
    datadyn::io::CacheWriter w(path, {"test", "test", "{}", ""});
    for (const char* name : {"quasistatic", "dynamic"}) {
      auto& s = w.add_sequence(name, {30.0, 3});
      std::int64_t frame = 1;
      if (with_swing)
        for (std::size_t f = 0; f < swing.sequence(name).frame_count(); ++f, ++frame)
          s.append_frame(
              frame, (frame - 1) / 30.0,
              {{"points/position",
                datadyn::io::view(datadyn::Points3(swing.sequence(name).positions(f)))}});
      for (std::size_t f = 0; f < bounce.sequence(name).frame_count(); ++f, ++frame) {
        datadyn::Points3 x = bounce.sequence(name).positions(f);
        x.col(0).array() += 2.0;
        s.append_frame(frame, (frame - 1) / 30.0, {{"points/position", datadyn::io::view(x)}});
      }
    }
    w.commit();
  };
  write(dir / "moved.h5", false);
  write(dir / "cut.h5", true);
  auto r = run_command(kSpringFit + " fit -q -i " + (dir / "swing.h5").string() + " -i " +
                       (dir / "moved.h5").string() + " -o " + (dir / "apart.h5").string());
  REQUIRE(r.exit_code == 0);
  r = run_command(kSpringFit + " fit -i " + (dir / "cut.h5").string() +
                  " --set teleport_distance=1 -o " + (dir / "split.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("cut.h5: cut at frame 46 (a target point moved over teleport_distance 1 m)") !=
        std::string::npos);
  // The two sides are the two sequences of the separate fit, the same float32 frames in the
  // same order: the same springs to the bit.
  datadyn::io::CacheReader apart(dir / "apart.h5"), split(dir / "split.h5");
  CHECK(apart.read_array<double>("/springs/ks").data ==
        split.read_array<double>("/springs/ks").data);
  CHECK(apart.read_array<double>("/springs/kd").data ==
        split.read_array<double>("/springs/kd").data);
  const auto report = read_json(dir / "split.report.json");
  REQUIRE(report["sequences"].size() == 2);
  CHECK(report["sequences"][0]["name"] == "cut.h5 frames 1-45");
  CHECK(report["sequences"][1]["name"] == "cut.h5 frames 46-90");
  CHECK(report["sequences"][1]["frames"] == nlohmann::json::array({46, 90}));
  // A frame alone between two cuts has no velocity to fit: left out, the frames named in one
  // warning. Frames 3 and 6 (of 0-9) moved 2 m away and back.
  {
    datadyn::io::CacheWriter w(dir / "alone.h5", {"test", "test", "{}", ""});
    for (const char* name : {"quasistatic", "dynamic"}) {
      auto& s = w.add_sequence(name, {30.0, 3});
      for (int f = 0; f < 10; ++f) {
        const datadyn::Points3 x =
            datadyn::Points3::Constant(4, 3, 0.01 * f + (f == 3 || f == 6 ? 2.0 : 0.0));
        s.append_frame(f, f / 30.0, {{"points/position", datadyn::io::view(x)}});
      }
    }
    w.commit();
  }
  r = run_command(kSpringFit + " fit -i " + (dir / "alone.h5").string() +
                  " --set teleport_distance=1 -o " + (dir / "alone_springs.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("alone.h5: 2 frames alone between cuts, left out of the fit: 3,6") !=
        std::string::npos);
  CHECK(read_json(dir / "alone_springs.report.json")["sequences"].size() == 3);
  // Without the key the jump throws every spring 2 m off its target: the fit is far worse.
  r = run_command(kSpringFit + " fit -q -i " + (dir / "cut.h5").string() + " -o " +
                  (dir / "whole.h5").string());
  REQUIRE(r.exit_code == 0);
  const auto whole = read_json(dir / "whole.report.json");
  REQUIRE(whole["sequences"].size() == 1);
  CHECK(whole["sequences"][0]["frames"] == nlohmann::json::array({1, 90}));
  // The frames the fit rejects are given as the cache's frame numbers: here from frame 45,
  // whose tangent already reaches across the jump to frame 46 (measured: 45-51 and 77; as
  // 0-based indices they would start at 44).
  const auto& rejected = whole["sequences"][0]["rejected_frames"];
  MESSAGE("rejected without cutting: " << rejected.dump());
  REQUIRE_FALSE(rejected.empty());
  CHECK(rejected[0] == 45);
  CHECK(std::find(rejected.begin(), rejected.end(), 46) != rejected.end());
  double split_loss = 0.0;
  for (const auto& s : report["sequences"]) split_loss += s["loss_fitted_m2"].get<double>();
  MESSAGE("fitted loss: split " << split_loss << " m^2, whole "
                                << whole["sequences"][0]["loss_fitted_m2"].get<double>() << " m^2");
  CHECK(whole["sequences"][0]["loss_fitted_m2"].get<double>() > 10 * split_loss);
  // A distance below every frame's motion leaves no part of two frames: a config error.
  r = run_command(kSpringFit + " fit -q -i " + (dir / "moved.h5").string() +
                  " --set teleport_distance=1e-12 -o " + (dir / "none.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/teleport_distance: expected a distance that leaves two frames") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "none.h5"));
}

TEST_CASE("spring-fit: file names that are not UTF-8 are kept, not a failure after the work") {
  // A Latin-1 directory name (legal on Linux) in the command line made the report's JSON throw
  // "invalid UTF-8 byte" after the springs had replaced the old file: exit 1, no file named.
  TempDir dir;
  const auto shot = dir / "shot_caf\xe9";
  std::filesystem::create_directories(shot);
  auto r =
      run_command(kSpringFit + " simulate" + kSmall + " -o '" + (shot / "m.h5").string() + "'");
  REQUIRE(r.exit_code == 0);
  r = run_command(kSpringFit + " fit -q --set fit.generations=2 --set fit.iterations=5 -i '" +
                  (shot / "m.h5").string() + "' -o '" + (shot / "springs.h5").string() + "'");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const nlohmann::json report = read_json(shot / "springs.report.json");
  // The byte that is not UTF-8 is replaced (U+FFFD) in the JSON; the rest of the path is there.
  CHECK(report["provenance"]["command_line"].get<std::string>().find("shot_caf\xef\xbf\xbd") !=
        std::string::npos);
}

TEST_CASE("spring-fit: a check across keys names the --set that broke it") {
  // motion.kind skin without body.mesh was blamed on "<defaults>: /body/mesh".
  TempDir dir;
  const auto r =
      run_command(kSpringFit + " simulate -q --set motion.kind=skin -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set motion.kind: /body/mesh: expected a rigged mesh file") !=
        std::string::npos);
}

TEST_CASE("spring-fit: simulate's dry run states the size of the frames it would write") {
  // For a farm job's disk request: the skinned, quasistatic and dynamic sequences' float32
  // surface positions, every frame, as the run then writes them; targets only, two of them.
  TempDir dir;
  for (const std::string dynamic : {"true", "false"}) {
    INFO("solver.dynamic=" << dynamic);
    const std::string command = kSpringFit + " simulate" + kSmall +
                                " --set solver.dynamic=" + dynamic + " -o " +
                                (dir / (dynamic + ".h5")).string();
    const auto dry = run_command(command + " --dry-run");
    REQUIRE(dry.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(dir / (dynamic + ".h5")));
    REQUIRE(run_command(command).exit_code == 0);
    const datadyn::io::CacheReader cache(dir / (dynamic + ".h5"));
    const std::uintmax_t bytes = datadyn::test::position_bytes(cache);
    CHECK(cache.sequence_names().size() == (dynamic == "true" ? 3u : 2u));
    INFO(dry.out);
    CHECK(dry.out.find("(" + datadyn::app::byte_text(bytes) +
                       " of frame arrays before compression)") != std::string::npos);
  }
}
