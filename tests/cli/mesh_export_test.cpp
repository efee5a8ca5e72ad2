// mesh-export run as a process on caches written here: exit codes 0/1/2, messages that name the
// file, sequence, dataset and frame, no partial files, --dry-run, progress lines, provenance in
// the outputs, and memory bounded by one frame.

#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <limits>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/cache.hpp"
#include "support/export_caches.hpp"
#include "support/file_bytes.hpp"
#include "support/format_readers.hpp"
#include "support/h5_poke.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kTool = std::string(DATADYN_BIN_DIR) + "/mesh-export";

struct Setup {
  TempDir dir;
  std::string cache = (dir / "in.h5").string();
  std::filesystem::path out = dir / "out";
  Setup() {
    datadyn::test::write_export_cache(cache, 4);
    std::filesystem::create_directories(out);
  }
  datadyn::test::ProcessResult run(const std::string& args) const {
    return run_command(kTool + " -i " + cache + " " + args);
  }
  std::string o(const std::string& name) const { return " -o " + (out / name).string(); }
  bool out_empty() const { return std::filesystem::is_empty(out); }
};

}  // namespace

TEST_CASE("mesh-export: --help lists the tool flags, and --version") {
  auto r = run_command(kTool + " --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--format FORMAT") != std::string::npos);
  CHECK(r.out.find("--sequence NAME") != std::string::npos);
  r = run_command(kTool + " --version");
  CHECK(r.out.find("mesh-export 0.1.0") != std::string::npos);
}

TEST_CASE("mesh-export: an OBJ sequence round-trips, with progress lines and provenance") {
  Setup s;
  const auto progress_lines = [](const std::string& err) {
    std::vector<std::string> found;
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);) {
      const auto message = nlohmann::json::parse(line)["message"].get<std::string>();
      if (message.rfind("frame ", 0) == 0) found.push_back(message.substr(0, 9));
    }
    return found;
  };
  // At -v a flushed line per frame; without, the first, the last and one a second between.
  auto r = s.run("-v --sequence cloth --log-format json" + s.o("cloth.####.obj"));
  REQUIRE(r.exit_code == 0);
  CHECK(progress_lines(r.err) ==
        std::vector<std::string>{"frame 1/4", "frame 2/4", "frame 3/4", "frame 4/4"});
  r = s.run("--sequence cloth --log-format json" + s.o("cloth.####.obj"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = progress_lines(r.err);
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front() == "frame 1/4");
  CHECK(lines.back() == "frame 4/4");
  for (int f = 1; f <= 4; ++f) {
    const auto obj = datadyn::test::read_obj(s.out / ("cloth.000" + std::to_string(f) + ".obj"));
    for (std::size_t i = 0; i < obj.v.size(); ++i)
      CHECK((obj.v[i] - datadyn::test::cloth_position(static_cast<int>(i), f))
                .cwiseAbs()
                .maxCoeff() <= 1e-6);
  }
  const auto obj = datadyn::test::read_obj(s.out / "cloth.0001.obj");
  CHECK(obj.comments.at(0) == "generator: mesh-export 0.1.0");
  const auto config = nlohmann::json::parse(obj.comments.at(2).substr(8));
  CHECK(config["sequences"] == nlohmann::json::array({"cloth"}));  // the flag, recorded
  CHECK(config["level_set"]["half_width"] == 3.0);                 // defaults filled in
}

TEST_CASE("mesh-export: --format and --set choose formats and options") {
  Setup s;
  auto r = s.run("--sequence cloth --format pc2" + s.o("anim"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::exists(s.out / "anim.pc2"));
  CHECK(std::filesystem::exists(s.out / "anim.obj"));
  r = s.run(
      "--sequence drops --frames 2 --set level_set.voxel_size=0.02 --set "
      "level_set.radius=0.05" +
      s.o("drops.####.vdb"));
  CHECK(r.exit_code == 0);
  const auto p = run_command("vdb_print -l " + (s.out / "drops.0002.vdb").string());
  CHECK(p.out.find("voxel size: 0.02") != std::string::npos);
  r = s.run("--sequence cloth --set attributes=stiffness,velocity" + s.o("c.####.ply"));
  CHECK(r.exit_code == 0);
  CHECK(datadyn::test::read_ply(s.out / "c.0001.ply").vertex.count("velocity_2") == 1);
}

TEST_CASE("mesh-export: --dry-run prints the files it would write and writes none") {
  Setup s;
  const auto r = s.run("--dry-run --frames 2-3 --sequence cloth" + s.o("c.####.obj"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("would write 2 files (2 frames)") != std::string::npos);
  CHECK(r.out.find((s.out / "c.0003.obj").string()) != std::string::npos);
  CHECK(s.out_empty());
  // {sequence} may name directories: the dry run checks the expanded ones, not the template (it
  // refused "out/{sequence}" as a missing directory).
  std::filesystem::create_directory(s.out / "cloth");
  const auto t = s.run("--dry-run --frames 2-3 --sequence cloth" + s.o("{sequence}/c.####.obj"));
  INFO(t.err);
  CHECK(t.exit_code == 0);
  CHECK(t.out.find((s.out / "cloth/c.0002.obj").string()) != std::string::npos);
  const auto u = s.run("--dry-run --sequence water" + s.o("{sequence}/w.####.obj"));
  CHECK(u.exit_code == 1);
  CHECK(u.err.find("cannot write: directory " + (s.out / "water").string() + " does not exist") !=
        std::string::npos);
}

TEST_CASE("mesh-export: bad input exits 1, names what is wrong and leaves no file") {
  Setup s;
  // A cache without topology asked for a mesh format.
  auto r = s.run("--sequence drops" + s.o("d.####.obj"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(s.cache + ": /sequences/drops/topology: the sequence has no topology") !=
        std::string::npos);
  // An unknown sequence: the message lists the ones there are.
  r = s.run("--sequence clothes" + s.o("c.obj"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("clothes") != std::string::npos);
  CHECK(r.err.find("cloth") != std::string::npos);
  // A frame outside the cache.
  r = s.run("--sequence cloth --frames 3-7" + s.o("c.####.obj"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--frames: ") != std::string::npos);
  CHECK(r.err.find("/sequences/cloth/frame: frame 5 is not in the cache (it has 1-4)") !=
        std::string::npos);
  // An output directory that cannot be written: missing, a file, or /proc.
  r = s.run("--sequence cloth" + s.o("missing/c.####.obj"));
  CHECK(r.exit_code == 1);
  // Named by its first frame's file (it named "missing/x", a file no one asked for).
  CHECK(r.err.find("missing/c.0001.obj: cannot write: directory ") != std::string::npos);
  CHECK(r.err.find("missing does not exist") != std::string::npos);
  r = s.run("--sequence cloth -o /proc/c.####.obj");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/proc") != std::string::npos);
  // A missing cache.
  r = run_command(kTool + " -i " + (s.dir / "nope.h5").string() + s.o("c.obj"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("nope.h5: no such file") != std::string::npos);
  // An output path that is a directory is not replaced by the file.
  std::filesystem::create_directory(s.out / "c.pc2");
  r = s.run("--sequence cloth" + s.o("c.pc2"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("c.pc2: cannot write: it exists and is not a regular file") !=
        std::string::npos);
  CHECK(std::filesystem::is_directory(s.out / "c.pc2"));
  std::filesystem::remove(s.out / "c.pc2");
  // The same for the point cache's companion mesh: refused before the .pc2 is written (the .pc2
  // used to be left behind).
  std::filesystem::create_directory(s.out / "c.obj");
  r = s.run("--sequence cloth" + s.o("c.pc2"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("c.obj: cannot write: it exists and is not a regular file") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(s.out / "c.pc2"));
  std::filesystem::remove(s.out / "c.obj");
  // A planned file that is the input cache (here the .pc2's companion .obj) is refused.
  std::filesystem::copy_file(s.cache, s.out / "in.obj");
  r = run_command(kTool + " -i " + (s.out / "in.obj").string() + " --sequence cloth" +
                  s.o("in.pc2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("in.obj is the input cache, which it would overwrite") != std::string::npos);
  CHECK(datadyn::io::CacheReader(s.out / "in.obj").sequence_names().size() == 5);
  std::filesystem::remove(s.out / "in.obj");
  CHECK(s.out_empty());
  // A non-finite position (a damaged cache, or one from another writer): the frame and point are
  // named for every format, instead of NaN in the file or a bare OpenVDB exception.
  datadyn::test::poke_float(s.cache, "/sequences/drops/points/position", 2 * 216 * 3 + 5 * 3 + 1,
                            std::numeric_limits<double>::quiet_NaN());
  datadyn::test::poke_float(s.cache, "/sequences/cloth/points/position", 2 * 20 * 3 + 5 * 3 + 1,
                            std::numeric_limits<double>::quiet_NaN());
  for (const auto& [sequence, name] :
       std::vector<std::pair<std::string, std::string>>{{"drops", "d.####.vdb"},
                                                        {"drops", "d.####.ply"},
                                                        {"cloth", "c.pc2"},
                                                        {"cloth", "c.usda"},
                                                        {"cloth", "c.####.obj"}}) {
    r = s.run("--sequence " + sequence + " --frames 3" + s.o(name));
    INFO(name, ": ", r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(s.cache + ": /sequences/" + sequence +
                     "/points/position: frame 3: point 5 is not finite") != std::string::npos);
  }
  // The same for a point attribute and for a frame's time (they went into PLY, USDA, MDD, XDMF).
  datadyn::test::poke_float(s.cache, "/sequences/cloth/points/stiffness", 7,
                            std::numeric_limits<double>::infinity());
  r = s.run("--sequence cloth --frames 1-2 --set attributes=stiffness" + s.o("c.####.ply"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/sequences/cloth/points/stiffness: point 7 is not finite") !=
        std::string::npos);
  // A level-set grid value: named by file, dataset and frame (it named only the voxel).
  datadyn::test::poke_float(s.cache, "/sequences/water/grids/surface", 24 * 24 * 24 + 100,
                            std::numeric_limits<double>::quiet_NaN());
  r = s.run("--sequence water --frames 2" + s.o("w.####.obj"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(s.cache + ": /sequences/water/grids/surface: frame 2: grid value at (i, j, k) "
                             "= (4, 4, 0) is not finite") != std::string::npos);
  datadyn::test::poke_float(s.cache, "/sequences/body/time", 1,
                            std::numeric_limits<double>::quiet_NaN());
  r = s.run("--sequence body" + s.o("b.mdd"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/sequences/body/time: element 1 (frame 2) is nan, expected a finite number") !=
        std::string::npos);
  CHECK(s.out_empty());
}

TEST_CASE("mesh-export: a full disk fails every format with exit 1 and no file") {
  // A file-size limit of 1 kB, its signal ignored: writes fail with EFBIG as with ENOSPC.
  // OpenVDB's own writer never checked its stream and left truncated .vdb files with exit 0.
  Setup s;
  for (const std::string out : {"c.####.obj", "c.####.ply", "c.pc2", "c.mdd", "c.usda", "d.vdb"}) {
    CAPTURE(out);
    const std::string seq = out[0] == 'd' ? "drops --set level_set.voxel_size=0.01" : "cloth";
    const auto r = run_command("ulimit -f 2; trap '' XFSZ; exec " + kTool + " -q -i " + s.cache +
                               " --sequence " + seq + s.o(out));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("File too large") != std::string::npos);
    // USDA fails in a spool, a scratch file per attribute: the message names the output it
    // serves, not the spool's path, which never appears on disk.
    if (out == "c.usda")
      CHECK(r.err.find("c.usda (spooling its point3f[] points)") != std::string::npos);
    CHECK(r.err.find(".spool0:") == std::string::npos);
    // Frames finished before the failure stay (complete, as after any failed run); no file is
    // half written and no temporary file or spool is left.
    for (const auto& e : std::filesystem::directory_iterator(s.out)) {
      const std::string name = e.path().filename().string();
      CAPTURE(name);
      CHECK(name.find(".tmp-") == std::string::npos);
      CHECK(name.find("spool") == std::string::npos);
      if (e.path().extension() == ".vdb")
        CHECK(run_command("vdb_print " + e.path().string()).exit_code == 0);
      if (e.path().extension() == ".obj") CHECK(!datadyn::test::read_obj(e.path()).f.empty());
      std::filesystem::remove(e.path());
    }
  }
}

TEST_CASE("mesh-export: a failed export leaves an earlier export's files as they were") {
  Setup s;
  REQUIRE(s.run("-q --sequence cloth" + s.o("c.####.obj")).exit_code == 0);
  REQUIRE(s.run("-q --sequence cloth" + s.o("c.pc2")).exit_code == 0);
  std::map<std::string, std::string> before;
  for (const auto& e : std::filesystem::directory_iterator(s.out))
    before[e.path().filename().string()] = datadyn::test::file_bytes(e.path());
  REQUIRE(before.size() == 6);  // four frames, the point cache and its mesh
  const auto unchanged = [&] {
    std::map<std::string, std::string> now;
    for (const auto& e : std::filesystem::directory_iterator(s.out))
      now[e.path().filename().string()] = datadyn::test::file_bytes(e.path());
    return now == before;
  };
  // Frame 3 not finite: frames 1 and 2 were replaced before the failure, a mix of two exports.
  const std::string damaged = (s.dir / "damaged.h5").string();
  std::filesystem::copy_file(s.cache, damaged);
  datadyn::test::poke_float(damaged, "/sequences/cloth/points/position", 2 * 20 * 3 + 5 * 3 + 1,
                            std::numeric_limits<double>::quiet_NaN());
  auto r = run_command(kTool + " -q -i " + damaged + " --sequence cloth" + s.o("c.####.obj"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("frame 3: point 5 is not finite") != std::string::npos);
  CHECK(unchanged());
  // The point cache's mesh fails (a file-size limit of 2 kB, which the point cache of three
  // frames is within): the new point cache took the old one's place, then was removed with it.
  r = run_command("ulimit -f 2; trap '' XFSZ; exec " + kTool + " -q -i " + s.cache +
                  " --sequence cloth --frames 1-3 --set uv_projection=box" + s.o("c.pc2"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("c.obj") != std::string::npos);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK(unchanged());
}

TEST_CASE("mesh-export: usage and config errors exit 2 and leave no file") {
  Setup s;
  auto r = s.run("--format fbx" + s.o("c.fbx"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--format 'fbx'") != std::string::npos);
  r = s.run("--sequence cloth" + s.o("c.txt"));  // no format to be had
  CHECK(r.exit_code == 2);
  r = s.run("--sequence cloth --format ply" + s.o("c.obj"));  // they disagree
  CHECK(r.exit_code == 2);
  // A name twice: it was blamed on -o ("two outputs would be c_cloth.0001.obj").
  r = s.run("--sequence cloth --sequence cloth" + s.o("c.####.obj"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--sequence: \"cloth\" is given twice") != std::string::npos);
  r = s.run("--set 'sequences=[\"cloth\",\"water\",\"cloth\"]'" + s.o("c.####.obj"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/sequences: expected each name once (\"cloth\" is listed twice)") !=
        std::string::npos);
  r = s.run("--sequence cloth --shard 1/2" + s.o("c.usda"));  // one file cannot be sharded
  CHECK(r.exit_code == 2);
  r = s.run("--set meshing.adaptivity=2" + s.o("c.obj"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/meshing/adaptivity: expected a number in [0, 1], got 2") != std::string::npos);
  r = s.run("--set level_set.voxel_size=0.01 --set level_set.radius=0.01" + s.o("d.vdb"));
  CHECK(r.exit_code == 2);
  // Named by where the value came from (it said "config" for a --set).
  CHECK(r.err.find("--set level_set.radius: /level_set/radius") != std::string::npos);
  // Widths in voxels that would run for ever (a dilation of 1e6 voxels did).
  r = s.run("--sequence drops --set level_set.dilate=1e6" + s.o("d.vdb"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/level_set/dilate: expected a number in [0, 100], got 1000000") !=
        std::string::npos);
  r = s.run("--sequence drops --set level_set.voxel_size=0.001 --set level_set.radius=1" +
            s.o("d.vdb"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/level_set/radius: expected a radius of at most 100 voxels") !=
        std::string::npos);
  // An iso value outside the narrow band meshes nothing: empty files were written with exit 0.
  for (const std::string& args :
       {std::string("--sequence drops --set source=particles "
                    "--set meshing.iso_value=-1") +
            s.o("d.####.obj"),
        std::string("--sequence water --set meshing.iso_value=1") + s.o("w.####.ply")}) {
    r = s.run(args);
    INFO(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--set meshing.iso_value: /meshing/iso_value: expected a value inside the "
                     "level set's narrow band") != std::string::npos);
  }
  r = s.run("--sequence water --set meshing.iso_value=1e308" + s.o("w.####.ply"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(", got 1e+308") != std::string::npos);  // not 309 digits
  // Below OpenVDB's smallest voxel its transform throws an ArithmeticError naming nothing.
  r = s.run("--sequence drops --set level_set.voxel_size=1e-5" + s.o("d.vdb"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/level_set/voxel_size: expected 0 (from the particle spacing) or a size >= "
                   "2e-5 m") != std::string::npos);
  r = s.run("--set level_set.radiu=1" + s.o("d.vdb"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean \"radius\"") != std::string::npos);
  r = s.run("");  // no -o
  CHECK(r.exit_code == 2);
  CHECK(s.out_empty());
}

TEST_CASE("mesh-export: --print-config shows every key with its default") {
  const auto r = run_command(kTool + " --print-config");
  REQUIRE(r.exit_code == 0);
  const auto c = nlohmann::json::parse(r.out);
  CHECK(c["format"] == "auto");
  CHECK(c["source"] == "auto");
  CHECK(c["level_set"]["half_width"] == 3.0);
  CHECK(c["level_set"]["rasterizer"] == "leaf");
  CHECK(c["meshing"]["adaptivity"] == 0.0);
  CHECK(c["up_axis"] == "Y");
  CHECK(c["match"]["file"] == "");
  CHECK(c["match"]["tolerance"] == 1e-4);
}

TEST_CASE("mesh-export: shards write disjoint frames that together cover the sequence") {
  Setup s;
  for (int k = 1; k <= 3; ++k)
    REQUIRE(s.run("-q --sequence cloth --shard " + std::to_string(k) + "/3" + s.o("c.####.ply"))
                .exit_code == 0);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(s.out))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"c.0001.ply", "c.0002.ply", "c.0003.ply", "c.0004.ply"});
  // Each frame's file is the single run's, bytes and all: the files recorded "--shard K/N" in
  // their command line, so a farm's frames never matched one machine's.
  std::map<std::string, std::string> sharded;
  for (const auto& name : names) sharded[name] = datadyn::test::file_bytes(s.out / name);
  std::filesystem::remove_all(s.out);
  std::filesystem::create_directories(s.out);
  REQUIRE(s.run("-q --sequence cloth" + s.o("c.####.ply")).exit_code == 0);
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK(datadyn::test::file_bytes(s.out / name) == sharded[name]);
  }
  // Without a frame token the whole export's frames decide the numbering, as in a single run:
  // a shard of one frame wrote the bare name, and every such shard replaced the last one's file.
  std::filesystem::remove_all(s.out);
  std::filesystem::create_directories(s.out);
  for (int k = 1; k <= 4; ++k)
    REQUIRE(
        s.run("-q --sequence cloth --shard " + std::to_string(k) + "/4" + s.o("d.ply")).exit_code ==
        0);
  names.clear();
  for (const auto& e : std::filesystem::directory_iterator(s.out))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"d.0001.ply", "d.0002.ply", "d.0003.ply", "d.0004.ply"});
}

TEST_CASE("mesh-export: memory is bounded by one frame, not by the sequence length") {
  // 60 frames of 100,000 points: 144 MB of positions as doubles. The process starts at ~40 MB
  // (OpenVDB, TBB, HDF5 loaded) and streaming adds a few frames' worth (~10 MB); a reader that
  // loaded the sequence would pass 180 MB.
  TempDir dir;
  const auto cache = dir / "big.h5";
  {
    datadyn::io::CacheWriter w(cache, {"test", "", "{}", ""});
    auto& seq = w.add_sequence("big", {24.0, 3});
    datadyn::Points3 x(100000, 3);
    for (int i = 0; i < x.rows(); ++i) x.row(i) << 0.001 * i, 0, 0;
    datadyn::Triangles t(1, 3);
    t << 0, 1, 2;
    for (int f = 1; f <= 60; ++f) {
      x.col(1).setConstant(0.01 * f);
      seq.append_frame(f, f / 24.0, {{"points/position", datadyn::io::view(x)}});
      if (f == 1) seq.write_static("topology/triangles", datadyn::io::view(t));
    }
    w.commit();
  }
  const auto r = datadyn::test::run_measured(kTool + " -q -i " + cache.string() + " -o " +
                                             (dir / "big.pc2").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.peak_mb >= 0.0);
  const double mb = r.peak_mb;
  MESSAGE("mesh-export peak RSS: " << mb << " MB for 60 frames of 100,000 points");
  CHECK(mb < 100.0);
  CHECK(datadyn::test::read_pc2(dir / "big.pc2").frames == 60);
}

TEST_CASE("mesh-export: SIGTERM mid-run exits 1 and leaves no partial file or spool") {
  // A USDA export of 80 frames of a 40,000-vertex mesh (~20 ms a frame): it spools every
  // time-sampled attribute beside the output while it runs.
  TempDir dir;
  const auto cache = dir / "big.h5";
  {
    datadyn::io::CacheWriter w(cache, {"test", "", "{}", ""});
    auto& seq = w.add_sequence("sheet", {24.0, 3});
    datadyn::Points3 x(40000, 3);
    for (int i = 0; i < x.rows(); ++i) x.row(i) << 0.01 * (i % 200), 0, 0.01 * (i / 200);
    datadyn::Triangles t(1, 3);
    t << 0, 1, 200;
    for (int f = 1; f <= 80; ++f) {
      x.col(1).setConstant(0.01 * f);
      seq.append_frame(f, f / 24.0, {{"points/position", datadyn::io::view(x)}});
      if (f == 1) seq.write_static("topology/triangles", datadyn::io::view(t));
    }
    w.commit();
  }
  const auto out = dir / "out";
  std::filesystem::create_directories(out);
  const pid_t pid =
      datadyn::test::spawn({kTool, "-q", "-i", cache.string(), "-o", (out / "s.usda").string()});
  REQUIRE(pid > 0);
  bool started = false;
  for (int i = 0; i < 2000 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    started = !std::filesystem::is_empty(out);  // the spools exist from the first frame on
  }
  CHECK(started);
  CHECK(datadyn::test::terminate_and_wait(pid) == 1);
  CHECK(std::filesystem::is_empty(out));
}

TEST_CASE("mesh-export: a mesh level set too fine for level_set.max_voxels is refused up front") {
  // OpenVDB's mesh conversion aborted the process (std::bad_alloc in a worker thread) when a
  // small voxel size asked for more memory than there was: the band is now estimated first.
  Setup s;
  auto r = s.run("--sequence body --set level_set.voxel_size=0.01 --set level_set.max_voxels=1000" +
                 s.o("c.####.vdb"));
  CHECK(r.exit_code == 2);
  // Both --sets take part in the bound.
  CHECK(r.err.find("--set level_set.voxel_size, --set level_set.max_voxels: "
                   "/level_set/voxel_size: ") != std::string::npos);
  CHECK(r.err.find("/sequences/body: frame 1: ") != std::string::npos);
  CHECK(r.err.find("more than level_set.max_voxels (1e+03") != std::string::npos);
  CHECK(s.out_empty());
  // The size the message suggests (rounded up) is accepted.
  const std::string key = "use a voxel size of at least ";
  const auto at = r.err.find(key);
  REQUIRE(at != std::string::npos);
  const double suggested = std::stod(r.err.substr(at + key.size()));
  CHECK(suggested > 0.01);
  r = s.run("--sequence body --set level_set.max_voxels=1000 --set level_set.voxel_size=" +
            std::to_string(suggested * 1.01) + s.o("c.####.vdb"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("mesh-export: match.file from a config, beside it, and its errors by exit code") {
  Setup s;
  std::filesystem::create_directories(s.dir / "shot");
  datadyn::test::write_cloth_reference(s.dir / "shot" / "cloth_rest.obj");
  // The file is found beside the config, wherever the tool runs.
  std::ofstream(s.dir / "shot" / "match.json")
      << R"({"match": {"file": "cloth_rest.obj", "scale": 100, "up_axis": "Z"}})";
  const std::string config = " -c " + (s.dir / "shot" / "match.json").string();
  auto r = s.run("--sequence cloth" + config + s.o("cloth.pc2"));
  CHECK(r.exit_code == 0);
  CHECK(datadyn::test::read_pc2(s.out / "cloth.pc2").points == datadyn::test::kReferenceVertices);
  CHECK(r.err.find("the files take the 24 vertices and 12 quads of ") != std::string::npos);
  // The file read as metres: exit 1 naming the file, with the scale that fits; the dry run finds
  // it too, and nothing is written.
  std::filesystem::remove_all(s.out);
  std::filesystem::create_directories(s.out);
  for (const char* dry : {"", " --dry-run"}) {
    r = s.run("--sequence cloth" + config + " --set match.scale=1" + dry + s.o("cloth.pc2"));
    INFO(std::string(dry));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("cloth_rest.obj: vertex 1 at (40, -30, 5.6602) lies on no vertex of ") !=
          std::string::npos);
    CHECK(r.err.find("every vertex lies on one with match.scale = 100 and match.up_axis = Z") !=
          std::string::npos);
    CHECK(s.out_empty());
  }
  // A file that is not there, a tolerance that would let a wrong match pass, and several
  // sequences for one mesh.
  r = s.run("--sequence cloth --set match.file=nowhere.obj" + s.o("cloth.pc2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/match/file: expected an existing file, got \"nowhere.obj\"") !=
        std::string::npos);
  r = s.run("--sequence cloth" + config + " --set match.tolerance=0.5" + s.o("cloth.pc2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/match/tolerance: expected a number in [1e-09, 0.01], got 0.5") !=
        std::string::npos);
  r = s.run(config + s.o("cloth.pc2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("choose its sequence with --sequence") != std::string::npos);
  CHECK(s.out_empty());
}

TEST_CASE("mesh-export: the level set's voxel bound names the --set of level_set that broke it") {
  Setup s;
  // The particles' band voxels against the bound, checked before any frame is read; the voxel
  // size the message reports is the automatic one, which no --set gave.
  const auto r = s.run(
      "--dry-run --sequence drops --set source=particles "
      "--set level_set.max_voxels=1000" +
      s.o("d.####.obj"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set level_set.max_voxels: /level_set/voxel_size: ") != std::string::npos);
  CHECK(r.err.find("more than level_set.max_voxels (1e+03)") != std::string::npos);
  CHECK(s.out_empty());
}
