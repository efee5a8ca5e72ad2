// cloth-train as a process: the pipeline's files, reproducible model bytes for any thread count,
// and config errors that name the key.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <thread>
#include <variant>
#include <vector>

#include <hdf5.h>
#include <nlohmann/json.hpp>

#include "core/types.hpp"
#include "io/cache.hpp"
#include "support/cache_bytes.hpp"
#include "support/file_bytes.hpp"
#include "support/h5_poke.hpp"
#include "support/process.hpp"

using datadyn::test::file_bytes;
using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kTool = std::string(DATADYN_BIN_DIR) + "/cloth-train";
// A small curtain: 9 x 9 particles, 3 runs of 20 frames, a few epochs; batches of 300 pairs span
// two gradient chunks of 256, so two threads do share the work.
const std::string kSmall =
    " -q --set cloth.nx=9 --set cloth.ny=9 --set cloth.spacing=0.1 --set cloth.frames=20"
    " --set runs.mass=0.008,0.01,0.012 --set train.max_epochs=4 --set train.batch_size=300";

/// Damage to an HDF5 object of an existing file, through the HDF5 C API (the cache writer writes
/// only sound files): attribute `name` of `object` set to `value` (replacing it), or removed.
void set_attribute(const std::filesystem::path& file, const std::string& object,
                   const std::string& name, const datadyn::io::AttributeValue& value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t o = H5Oopen(f, object.c_str(), H5P_DEFAULT);
  REQUIRE(o >= 0);
  if (H5Aexists(o, name.c_str()) > 0) H5Adelete(o, name.c_str());
  if (const auto* text = std::get_if<std::string>(&value)) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(o, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    const char* c = text->c_str();
    CHECK(H5Awrite(a, type, &c) >= 0);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
  } else {
    std::vector<long long> numbers;
    if (const auto* one = std::get_if<std::int64_t>(&value)) numbers.push_back(*one);
    for (const std::int64_t n : std::get_if<std::vector<std::int64_t>>(&value)
                                    ? std::get<std::vector<std::int64_t>>(value)
                                    : std::vector<std::int64_t>{})
      numbers.push_back(n);
    REQUIRE(!numbers.empty());
    const hsize_t n = numbers.size();
    const hid_t space = std::holds_alternative<std::int64_t>(value)
                            ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(1, &n, nullptr);
    const hid_t a = H5Acreate2(o, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_LLONG, numbers.data()) >= 0);
    H5Aclose(a);
    H5Sclose(space);
  }
  H5Oclose(o);
  H5Fclose(f);
}
void remove_attribute(const std::filesystem::path& file, const std::string& object,
                      const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(H5Adelete_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT) >= 0);
  H5Fclose(f);
}
void remove_object(const std::filesystem::path& file, const std::string& path) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0);
  H5Fclose(f);
}

}  // namespace

TEST_CASE("cloth-train: the same seed gives the same model bytes at --threads 1 and 2") {
  TempDir dir;
  const std::string env = "SOURCE_DATE_EPOCH=1700000000 ";
  auto r = run_command(env + kTool + " simulate" + kSmall + " -o " + (dir / "t.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Same relative paths from two directories: the command line (provenance) is the same too.
  for (int threads : {1, 2}) {
    const auto sub = dir / ("run" + std::to_string(threads));
    std::filesystem::create_directories(sub);
    r = run_command("cd " + sub.string() + " && " + env + kTool + " train" + kSmall +
                    " --threads " + std::to_string(threads) + " -i ../t.h5 -o m.h5");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  const auto a = file_bytes(dir / "run1/m.h5"), b = file_bytes(dir / "run2/m.h5");
  CHECK(!a.empty());
  CHECK(a == b);
  datadyn::io::CacheReader model(dir / "run1/m.h5");
  CHECK(model.shape("/model/layer_0/weight") == datadyn::io::Shape{64, 36});
  CHECK(model.shape("/model/layer_3/weight") == datadyn::io::Shape{27, 64});
  CHECK(model.shape("/model/history/test_loss") == datadyn::io::Shape{4});
}

TEST_CASE("cloth-train: upscale's memory grows little with the number of runs") {
  // 10 and 160 runs of a 33 x 33 curtain, 30 frames, upscaled bilinearly from miniatures it
  // simulates or reads from a cache. Growth from 10 to 160 runs:
  // - simulated: +63 MB with each run's miniature frames kept to the end, +32 MB with them
  //   released after the run, +15 MB with HDF5's metadata cache also held at 1 MB a file;
  // - from a cache: +49 MB with every run's miniature read up front, +24 MB read run by run
  //   (with the 1 MB metadata cache).
  // Each bound lies between the last two figures of its line, with room for the allocator.
  TempDir dir;
  const std::string cloth = " --set cloth.nx=33 --set cloth.ny=33 --set cloth.frames=30";
  const auto peak_mb = [&](int runs, bool from_cache) {
    std::string masses;
    for (int i = 0; i < runs; ++i) masses += (i ? "," : "") + std::to_string(0.008 + 1e-4 * i);
    const std::string mini = (dir / "mini.h5").string();
    if (from_cache)
      REQUIRE(run_command(kTool + " simulate -q" + cloth + " --set simulate_miniature=true " +
                          "--set runs.mass=" + masses + " -o " + mini)
                  .exit_code == 0);
    const auto r = datadyn::test::run_measured(
        kTool + " upscale -q" + cloth + " --set upscale.method=bilinear --set runs.mass=" + masses +
        (from_cache ? " -i " + mini : std::string()) + " -o " + (dir / "u.h5").string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.peak_mb >= 0.0);
    return r.peak_mb;
  };
  const double few = peak_mb(10, false), many = peak_mb(160, false);
  MESSAGE("cloth-train upscale peak RSS: " << few << " MB for 10 runs, " << many << " MB for 160");
  CHECK(many - few < 25.0);
  const double few_read = peak_mb(10, true), many_read = peak_mb(160, true);
  MESSAGE("from a miniature cache: " << few_read << " MB for 10 runs, " << many_read
                                     << " MB for 160");
  CHECK(many_read - few_read < 37.0);
}

TEST_CASE("cloth-train: train holds each training pair once") {
  // 10 and 40 runs of a 33 x 33 curtain, 60 frames: 15,360 pairs of 63 floats a run (3.9 MB),
  // and its frames (1.6 MB). Growth from 10 to 40 runs: +398 MB (13.3 MB a run) with the runs'
  // frames, each run's pairs, the joined pairs and their standardised copy held through
  // training; +256 MB (8.5 MB a run) with the frames and parts released and the standardisation
  // in place, the join holding two copies at once; +170 MB (5.7 MB a run) with the pairs written
  // into room reserved for them. The bound lies between the last two.
  TempDir dir;
  const std::string cloth = " --set cloth.nx=33 --set cloth.ny=33 --set cloth.frames=60";
  // The dry run's figure for the data, in MB, by runs.
  std::map<int, double> stated;
  const auto peak_mb = [&](int runs) {
    std::string masses;
    for (int i = 0; i < runs; ++i) masses += (i ? "," : "") + std::to_string(0.008 + 1e-4 * i);
    const std::string targets = (dir / "t.h5").string();
    REQUIRE(run_command(kTool + " simulate -q" + cloth + " --set runs.mass=" + masses + " -o " +
                        targets)
                .exit_code == 0);
    const auto dry = run_command(kTool + " train -q --dry-run" + cloth + " -i " + targets + " -o " +
                                 (dir / "m.h5").string());
    REQUIRE(dry.exit_code == 0);
    const auto at = dry.out.find("memory for the data: ");
    REQUIRE(at != std::string::npos);
    stated[runs] = std::stod(dry.out.substr(at + 21));
    const auto r =
        datadyn::test::run_measured(kTool + " train -q" + cloth + " --set train.max_epochs=1 -i " +
                                    targets + " -o " + (dir / "m.h5").string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.peak_mb >= 0.0);
    return r.peak_mb;
  };
  const double few = peak_mb(10), many = peak_mb(40);
  MESSAGE("cloth-train train peak RSS: " << few << " MB for 10 runs, " << many << " MB for 40");
  CHECK(many - few < 215.0);
  // The dry run's figure grows as the peak does (3.9 MB of pairs and 1.6 MB of frames a run
  // against 5.7 MB measured): within 15 %, the allocator's and HDF5's share.
  const double growth = stated[40] - stated[10];
  MESSAGE("the dry run's figure for the data: " << stated[10] << " MB and " << stated[40] << " MB");
  CHECK(growth == doctest::Approx(many - few).epsilon(0.15));
}

TEST_CASE("cloth-train: simulate's memory stays flat over a thousand runs") {
  // 100 and 1,600 runs of a 5 x 5 cloth, 10 frames: HDF5's metadata cache grew to 32 MB for the
  // output and as much for its canonical copy, keeping the headers of sequences long written
  // (+197 MB from 100 to 1,600 runs). Held at 1 MB, the growth is 4 MB; the bound leaves room
  // for the allocator and stays far below the old growth.
  TempDir dir;
  const auto peak_mb = [&](int runs) {
    std::string masses;
    for (int i = 0; i < runs; ++i) masses += (i ? "," : "") + std::to_string(0.008 + 1e-6 * i);
    const auto r = datadyn::test::run_measured(
        kTool + " simulate -q --set cloth.nx=5 --set cloth.ny=5 --set cloth.frames=10 --set " +
        "runs.mass=" + masses + " -o " + (dir / "s.h5").string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.peak_mb >= 0.0);
    return r.peak_mb;
  };
  const double few = peak_mb(100), many = peak_mb(1600);
  MESSAGE("cloth-train simulate peak RSS: " << few << " MB for 100 runs, " << many
                                            << " MB for 1,600");
  CHECK(many - few < 40.0);
}

TEST_CASE("cloth-train: train reports the runs it reads and pairs before the first epoch") {
  // Reading and pairing hundreds of runs took half a minute without a line.
  TempDir dir;
  const auto t = (dir / "t.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  const std::string loud = kSmall.substr(std::string(" -q").size());
  auto r = run_command(kTool + " train" + loud + " -i " + t + " -o " + (dir / "m.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto reading = r.err.find("reading 3 runs"), read = r.err.find("run 3/3 (100%)");
  const auto pairing = r.err.find("pairing 3 runs into training pairs");
  const auto paired = r.err.find("run 3/3 (100%)", pairing);
  const auto epoch = r.err.find("epoch 1/4");
  for (const auto at : {reading, read, pairing, paired, epoch}) CHECK(at != std::string::npos);
  CHECK(reading < read);
  CHECK(read < pairing);
  CHECK(paired < epoch);
}

TEST_CASE(
    "cloth-train: simulate and upscale write the same bytes at --threads 1 and 2 and any SIMD") {
  // 65 x 65 particles (33 x 33 miniature): large enough that the solver's two substitution groups,
  // the right-hand side's row chunks and the patch assembly's row chunks all run in parallel.
  TempDir dir;
  const std::string env = "SOURCE_DATE_EPOCH=1700000000 ";
  const std::string big =
      " -q --set cloth.nx=65 --set cloth.ny=65 --set cloth.spacing=0.015625 --set cloth.frames=6"
      " --set train.max_epochs=1 --set features.local=true --set features.residual=true";
  for (int threads : {1, 2}) {
    const auto sub = dir / ("run" + std::to_string(threads));
    std::filesystem::create_directories(sub);
    const std::string cd = "cd " + sub.string() + " && " + env + kTool;
    const std::string th = " --threads " + std::to_string(threads);
    auto r = run_command(cd + " simulate" + big + th + " -o t.h5");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    if (threads == 1) {
      r = run_command(cd + " train" + big + th + " -i t.h5 -o ../m.h5");
      REQUIRE(r.exit_code == 0);
    }
    r = run_command(cd + " upscale" + big + th + " --method network -i ../m.h5 -o up.h5");
    REQUIRE(r.exit_code == 0);
  }
  for (const char* file : {"t.h5", "up.h5"}) {
    INFO(file);
    const auto a = file_bytes(dir / "run1" / file), b = file_bytes(dir / "run2" / file);
    CHECK(!a.empty());
    CHECK(a == b);
  }
  // The network's lane forward pass at the baseline vector width (core/simd.hpp) from the same
  // relative paths: the same bytes as at the CPU's widest.
  std::filesystem::create_directories(dir / "run3");
  auto r =
      run_command("cd " + (dir / "run3").string() + " && " + env + "DATADYN_SIMD=baseline " +
                  kTool + " upscale" + big + " --threads 2 --method network -i ../m.h5 -o up.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(file_bytes(dir / "run3/up.h5") == file_bytes(dir / "run2/up.h5"));
  // upscale streams (frame t - 1 upscaled while the miniature steps to t); from a stored
  // miniature it upscales one frame after the other. The stored miniature is float32, so the two
  // differ by float rounding (2e-7 m here); 1e-5 m is far below a frame's motion (3e-3 to
  // 1e-2 m), so a frame upscaled from the wrong window would show.
  const std::string cd = "cd " + (dir / "run2").string() + " && " + kTool;
  r = run_command(cd + " simulate" + big + " --set simulate_miniature=true -o mini.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " upscale" + big + " --method network -i ../m.h5 -i mini.h5 -o seq.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader streamed(dir / "run2/up.h5"), sequential(dir / "run2/seq.h5");
  const auto a = streamed.sequence("curtain_000"), b = sequential.sequence("curtain_000");
  REQUIRE(a.frame_count() == 6);
  REQUIRE(b.frame_count() == 6);
  for (std::size_t t = 0; t < 6; ++t) {
    const auto pa = a.read_frame<float>("points/position", t).data;
    const auto pb = b.read_frame<float>("points/position", t).data;
    REQUIRE(pa.size() == pb.size());
    double worst = 0.0, moved = 0.0;
    const auto p0 = a.read_frame<float>("points/position", t > 0 ? t - 1 : 0).data;
    for (std::size_t i = 0; i < pa.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(pa[i] - pb[i])));
      moved = std::max(moved, static_cast<double>(std::abs(pa[i] - p0[i])));
    }
    INFO("frame " << t << ": streamed vs sequential " << worst << " m, motion " << moved << " m");
    CHECK(worst < 1e-5);
    if (t >= 2) CHECK(moved > 1e-3);
  }
  // A target where the miniature belongs, a miniature where targets belong, and a third -i: each
  // ran with exit 0 on the wrong grid (or ignored the file).
  r = run_command(cd + " upscale" + big + " -i ../m.h5 -i t.h5 -o x.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("t.h5: /sequences/curtain_000@miniature_factor: a target run, expected a "
                   "miniature of factor 2") != std::string::npos);
  r = run_command(cd + " train" + big + " -i t.h5 -i mini.h5 -o x.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("mini.h5: /sequences/curtain_000@miniature_factor: a miniature of factor 2, "
                   "expected a target run") != std::string::npos);
  r = run_command(cd + " evaluate" + big + " -i mini.h5 -i ../m.h5 -o x");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("a miniature of factor 2, expected a target run") != std::string::npos);
  r = run_command(cd + " upscale" + big + " --set dsds_factor=4 -i ../m.h5 -o x.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(
            "--set dsds_factor: /dsds_factor: expected the factor of the model ../m.h5 (2), or no "
            "dsds_factor, got 4") != std::string::npos);
  r = run_command(cd + " upscale" + big + " -i ../m.h5 -i mini.h5 -i mini.h5 -o x.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("upscale reads the model and at most one miniature cache, got 3") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "run2" / "x.h5"));
}

TEST_CASE("cloth-train: training resumed from its checkpoint ends with the uninterrupted model") {
  TempDir dir;
  const auto t = (dir / "t.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  const std::string train = kTool + " train" + kSmall + " --set train.checkpoint_every=1 -i " + t;
  // Uninterrupted: 4 epochs. Interrupted: 2 epochs, then resumed to 4 from the checkpoint.
  auto r = run_command(train + " --log-level info -o " + (dir / "whole.h5").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // A line for every epoch, with its losses (other progress comes at most once a second).
  for (int e = 1; e <= 4; ++e)
    CHECK(r.err.find("epoch " + std::to_string(e) + "/4 (") != std::string::npos);
  const auto part = (dir / "part.h5").string();
  r = run_command(train + " --set train.max_epochs=2 -o " + part);
  REQUIRE(r.exit_code == 0);
  REQUIRE(std::filesystem::exists(dir / "part.checkpoint.h5"));
  r = run_command(train + " --set train.resume=true --log-level info -o " + part);
  REQUIRE(r.exit_code == 0);
  // Training from scratch would end with the same model: the log shows it did resume, and its
  // progress goes on from epoch 3 (it counted from 1 again, to "4/4" after two epochs).
  CHECK(r.err.find("after epoch 2") != std::string::npos);
  CHECK(r.err.find("epoch 3/4 (75%)") != std::string::npos);
  CHECK(r.err.find("epoch 1/4 (") == std::string::npos);
  CHECK(r.err.find("2 epochs in ") != std::string::npos);
  datadyn::io::CacheReader whole(dir / "whole.h5"), resumed(part);
  for (int l = 0; l < 4; ++l)
    for (const char* what : {"/weight", "/bias"}) {
      const std::string path = "/model/layer_" + std::to_string(l) + what;
      INFO(path);
      CHECK(resumed.read_array<float>(path).data == whole.read_array<float>(path).data);
    }
  for (const char* path : {"/model/history/train_loss", "/model/history/test_loss"})
    CHECK(resumed.read_array<double>(path).data == whole.read_array<double>(path).data);
  // A checkpoint of another run (here: other hidden widths) is refused, naming the file.
  r = run_command(train + " --set train.resume=true --set train.hidden=[32,32] -o " + part);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("checkpoint.h5") != std::string::npos);
  // Other training settings, or a checkpoint already past max_epochs: the model's config would
  // not describe its training (both were resumed silently).
  // A dry run checks the checkpoint too (it said "would train").
  for (const std::string dry : {" --dry-run", ""}) {
    r = run_command(train + dry + " --set train.resume=true --set train.learning_rate=1e-3 -o " +
                    part);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("checkpoint.h5: written with other settings (/train/learning_rate differs)") !=
          std::string::npos);
  }
  r = run_command(train + " --set train.resume=true --set train.max_epochs=3 -o " + part);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("already at epoch 4, past train.max_epochs = 3") != std::string::npos);
  // Runs of the same names from another simulate (other masses): the same config, other data.
  // The checkpoint's epochs on the old data were resumed on the new.
  const auto other = (dir / "other.h5").string();
  REQUIRE(
      run_command(kTool + " simulate" + kSmall + " --set runs.mass=0.009,0.011,0.013 -o " + other)
          .exit_code == 0);
  r = run_command(kTool + " train" + kSmall + " --set train.checkpoint_every=1 -i " + other +
                  " --set train.resume=true -o " + part);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("part.checkpoint.h5: trained on other data") != std::string::npos);
}

TEST_CASE("cloth-train: positions that are not finite, and a training that diverges, exit 1") {
  // Both wrote the network's initial weights with exit 0 (training stopped at the first loss
  // that was not finite), and evaluate stopped at an internal check naming no file.
  TempDir dir;
  const auto t = (dir / "t.h5").string(), bad = (dir / "bad.h5").string();
  const auto m = (dir / "m.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  REQUIRE(run_command(kTool + " train" + kSmall + " -i " + t + " -o " + m).exit_code == 0);
  // NaN in every run, at frame 6 (index 5) point 7 (9 x 9 points, 3 coordinates).
  std::filesystem::copy_file(t, bad);
  for (const char* run : {"curtain_000", "curtain_001", "curtain_002"})
    datadyn::test::poke_float(bad, std::string("/sequences/") + run + "/points/position",
                              5 * 81 * 3 + 7 * 3 + 1, std::nan(""));
  auto r =
      run_command(kTool + " train" + kSmall + " -i " + bad + " -o " + (dir / "nan.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(bad + ": /sequences/curtain_000/points/position: frame 6: point 7 is not "
                         "finite") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "nan.h5"));
  r = run_command(kTool + " evaluate" + kSmall + " -i " + bad + " -i " + m + " -o " +
                  (dir / "ev").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(": frame 6: point 7 is not finite") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  // A learning rate of 1e12 makes the first epoch's loss infinite: no epoch to keep.
  r = run_command(kTool + " train" + kSmall + " --set train.learning_rate=1e12 -i " + t + " -o " +
                  (dir / "div.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("the training diverged in epoch 1 (its loss is not finite) before any epoch "
                   "ended with a finite loss: lower train.learning_rate (1e+12)") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "div.h5"));
}

TEST_CASE("cloth-train: evaluate warns of a model that trained on the runs it is scored on") {
  // Models of two seeds hold out different runs (seed 1: curtain_002, seed 2: curtain_000);
  // evaluate scores all on the first one's, and printed the second's errors on its own training
  // data beside the others as if held out.
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  REQUIRE(run_command(cd + " simulate" + kSmall + " -o t.h5").exit_code == 0);
  for (const char* seed : {"1", "2"})
    REQUIRE(run_command(cd + " train" + kSmall + " --set train.seed=" + seed + " -i t.h5 -o m" +
                        seed + ".h5")
                .exit_code == 0);
  const auto held_out = [&](const char* model) {
    return datadyn::io::CacheReader(dir / model).attributes("/model").at("test_sequences");
  };
  REQUIRE(held_out("m1.h5") != held_out("m2.h5"));
  auto r = run_command(cd + " evaluate" + kSmall + " -i t.h5 -i m1.h5 -i m2.h5 -o ev");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("m2.h5 trained on curtain_002, held out by m1.h5: its errors there are on data "
                   "it saw") != std::string::npos);
  r = run_command(cd + " evaluate" + kSmall + " -i t.h5 -i m1.h5 -i m1.h5 -o ev1");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("errors there are on data it saw") == std::string::npos);
}

TEST_CASE("cloth-train: simulate, train, upscale and evaluate chain through their files") {
  TempDir dir;
  const auto t = (dir / "t.h5").string(), m = (dir / "m.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  {
    datadyn::io::CacheReader cache(t);
    CHECK(cache.sequence_names().size() == 3);
    const auto s = cache.sequence("curtain_001");
    CHECK(s.frame_count() == 20);
    CHECK(s.point_count() == 81);
    // One quad per cell and no triangles: both sets would be one mesh with every face twice.
    CHECK(s.topology("quads").rows() == 8 * 8);
    CHECK_FALSE(s.has("topology/triangles"));
    // Texture coordinates for mesh-export: the unit square, row 0 (the pinned top) at v = 1.
    const auto uv = s.read_static<float>("points/uv").matrix();
    REQUIRE(uv.rows() == 81);
    CHECK(uv(0, 0) == 0.0f);
    CHECK(uv(0, 1) == 1.0f);
    CHECK(uv(80, 0) == 1.0f);
    CHECK(uv(80, 1) == 0.0f);
    CHECK(uv(10, 0) == 0.125f);  // row 1, column 1
    CHECK(uv(10, 1) == 0.875f);
  }
  REQUIRE(run_command(kTool + " train" + kSmall + " -i " + t + " -o " + m).exit_code == 0);
  const auto up = (dir / "up.h5").string();
  auto r = run_command(kTool + " upscale" + kSmall + " --method bicubic -i " + m + " -o " + up);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(datadyn::io::CacheReader(up).sequence("curtain_000").point_count() == 81);
  // A damaged model is named, not used: a NaN weight upscaled differently with exit 0.
  for (const auto& [dataset, value] : std::vector<std::pair<std::string, double>>{
           {"/model/layer_0/weight", std::nan("")}, {"/model/normalisation/input_std", 0.0}}) {
    CAPTURE(dataset);
    const auto bad = (dir / "bad_model.h5").string();
    std::filesystem::copy_file(m, bad, std::filesystem::copy_options::overwrite_existing);
    datadyn::test::poke_float(bad, dataset, 5, value);
    const auto b = run_command(kTool + " upscale" + kSmall + " -i " + bad + " -o " +
                               (dir / "bad_up.h5").string());
    CHECK(b.exit_code == 1);
    CHECK(b.err.find("bad_model.h5: " + dataset + ": element 5 is ") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "bad_up.h5"));
  }
  r = run_command(kTool + " evaluate" + kSmall + " -i " + t + " -i " + m + " -o " +
                  (dir / "eval").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir / "eval.json");
  const auto report = nlohmann::json::parse(in);
  REQUIRE(report["upscaling"].size() == 4);
  for (const auto& row : report["upscaling"]) CHECK(row["error"].get<double>() > 0.0);
  // The swinging curtain never passes through itself, nor do interpolations of its miniature.
  CHECK(report["target_layer_crossings_per_frame"].get<double>() == 0.0);
  for (int k = 0; k < 3; ++k)
    CHECK(report["upscaling"][k]["layer_crossings_per_frame"].get<double>() == 0.0);
  CHECK(report["provenance"]["command_line"].get<std::string>().find(" evaluate ") !=
        std::string::npos);
  CHECK(report["provenance"]["config"].is_object());
  CHECK(std::filesystem::exists(dir / "eval.md"));
  CHECK(std::filesystem::exists(dir / "eval.loss.svg"));
  CHECK(r.err.find("held no sequence out") == std::string::npos);  // 1 of 3 runs was held out
  CHECK(report["against_target"][0].contains("target_ms_per_frame"));
  // Without timings the report is the same bytes for any thread count (the times per frame made
  // every report differ), and names no time.
  for (const char* threads : {"1", "2"}) {
    const auto run_dir = dir / (std::string("threads") + threads);
    std::filesystem::create_directories(run_dir);
    REQUIRE(run_command("cd " + run_dir.string() + " && " + kTool + " evaluate" + kSmall +
                        " --set evaluate.timing_frames=0 --threads " + threads + " -i " + t +
                        " -i " + m + " -o quiet")
                .exit_code == 0);
  }
  for (const char* ext : {".json", ".md"}) {
    CAPTURE(ext);
    const std::string a = file_bytes(dir / "threads1" / (std::string("quiet") + ext));
    CHECK(a == file_bytes(dir / "threads2" / (std::string("quiet") + ext)));
  }
  const std::string quiet_json = file_bytes(dir / "threads1" / "quiet.json");
  CHECK(quiet_json.find("ms_per_frame") == std::string::npos);
  CHECK(quiet_json.find("speedup") == std::string::npos);

  // A model that held nothing out (one run, the built-in default) is evaluated on what it saw,
  // and the warning says so rather than that its test runs are missing.
  // Its test loss is none: the epoch lines and the tables say so, not "nan".
  const auto all = (dir / "all.h5").string();
  r = run_command(kTool + " train" + kSmall + " --set train.test_fraction=0 -i " + t + " -o " +
                  all + " --log-level info");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find(" m^2 (no test runs)") != std::string::npos);
  CHECK(r.err.find("nan") == std::string::npos);
  r = run_command(kTool + " evaluate" + kSmall + " -i " + t + " -i " + all + " -o " +
                  (dir / "eval_all").string());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("all.h5 held no sequence out of its training") != std::string::npos);
  const std::string all_md = file_bytes(dir / "eval_all.md");
  CHECK(all_md.find("nan") == std::string::npos);
  CHECK(all_md.find("`, 3 sequences. Error") != std::string::npos);
  CHECK(all_md.find(" | - | ") != std::string::npos);
  // A fraction that holds every run out (0.9 of 3 rounds to 3) named no key: "no training pairs".
  r = run_command(kTool + " train" + kSmall + " --set train.test_fraction=0.9 -i " + t + " -o " +
                  (dir / "none.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set train.test_fraction: /train/test_fraction: expected a fraction that "
                   "leaves a run to train on: 3 runs given, so below 0.833") != std::string::npos);

  // The model where runs belong (an easy slip in a script's -i list): it read as a cache without
  // sequences and gave NaN tables or an empty upscale with exit 0. Each command now names it.
  const std::string model_file = m + ": /sequences: none, this is a model file";
  for (const std::string& cmd :
       {kTool + " evaluate" + kSmall + " -i " + m + " -i " + m + " -o " + (dir / "e2").string(),
        kTool + " upscale" + kSmall + " -i " + m + " -i " + m + " -o " + (dir / "u2.h5").string(),
        kTool + " train" + kSmall + " -i " + m + " -o " + (dir / "m2.h5").string()}) {
    r = run_command(cmd);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(model_file) != std::string::npos);
  }
  for (const char* name : {"e2.json", "e2.md", "u2.h5", "m2.h5"})
    CHECK_FALSE(std::filesystem::exists(dir / name));
}

TEST_CASE("cloth-train: a DSDS factor that does not divide the grid is a config error (exit 2)") {
  TempDir dir;
  const auto r =
      run_command(kTool + " simulate -q --set cloth.nx=10 -o " + (dir / "t.h5").string());
  CHECK(r.exit_code == 2);
  // The grid came from the command line: the --set is named, not "<defaults>".
  CHECK(
      r.err.find("--set cloth.nx: /dsds_factor: expected a factor that divides cloth.nx - 1 = 9") !=
      std::string::npos);
  CHECK(!std::filesystem::exists(dir / "t.h5"));
}

TEST_CASE("cloth-train: upscale --shard splits the runs of a stored miniature too") {
  // With the miniature from a cache every shard upscaled every run, and merging the shards
  // failed on the overlap.
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  auto r = run_command(cd + " simulate" + kSmall + " --set simulate_miniature=true -o mini.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " upscale" + kSmall + " --method bilinear -i mini.h5 -o all.h5");
  REQUIRE(r.exit_code == 0);
  datadyn::io::CacheReader all(dir / "all.h5");
  const auto names = all.sequence_names();
  REQUIRE(names.size() == 3);
  std::vector<std::string> seen;
  for (int k = 1; k <= 2; ++k) {
    const std::string part = "part" + std::to_string(k) + ".h5";
    r = run_command(cd + " upscale" + kSmall + " --method bilinear -i mini.h5 --shard " +
                    std::to_string(k) + "/2 -o " + part);
    REQUIRE(r.exit_code == 0);
    datadyn::io::CacheReader shard(dir / part);
    for (const auto& name : shard.sequence_names()) {
      seen.push_back(name);
      const auto a = shard.sequence(name), b = all.sequence(name);
      REQUIRE(a.frame_count() == b.frame_count());
      CHECK(a.read_frame<float>("points/position", a.frame_count() - 1).data ==
            b.read_frame<float>("points/position", b.frame_count() - 1).data);
    }
  }
  CHECK(seen == names);  // each run once, in order
}

TEST_CASE("cloth-train: upscale records the model's DSDS factor, so its stored config reruns") {
  // A factor-4 model upscaled without dsds_factor in the config: the output's config said the
  // default 2, and fed back (with this model) it was refused.
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  auto r = run_command(cd + " simulate" + kSmall + " --set dsds_factor=4 -o t.h5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " train" + kSmall + " --set dsds_factor=4 -i t.h5 -o m4.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " upscale" + kSmall + " -i m4.h5 -o up.h5");
  REQUIRE(r.exit_code == 0);
  const auto stored =
      nlohmann::json::parse(datadyn::io::CacheReader(dir / "up.h5").provenance().config_json);
  CHECK(stored["dsds_factor"] == 4);
  { std::ofstream(dir / "stored.json") << stored.dump(); }
  r = run_command(cd + " upscale -q -c stored.json -i m4.h5 -o again.h5");
  CHECK(r.exit_code == 0);
}

TEST_CASE(
    "cloth-train: train refuses a run given twice, which would be in both splits, not a namesake") {
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  auto r = run_command(cd + " simulate" + kSmall + " -o t.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " simulate" + kSmall + " --shard 3/3 -o part3.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " train" + kSmall + " -i t.h5 -i part3.h5 -o m.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("t.h5 and part3.h5 both hold the run /sequences/curtain_002 (the same "
                   "frames); expected each run once") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "m.h5"));
  // Separate simulate calls name their runs alike (curtain_000, ...): other frames are other
  // runs, trained on with a warning that the names repeat.
  r = run_command(cd + " simulate" + kSmall + " --set runs.mass=0.02 -o heavy.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " train" + kSmall + " -i t.h5 -i heavy.h5 -o m.h5");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("t.h5 and heavy.h5 both have a run named curtain_000 (other frames)") !=
        std::string::npos);
}

TEST_CASE("cloth-train: evaluate reports its progress and stops at SIGTERM") {
  // evaluate checked for a signal once a sequence: on a long sequence SIGTERM waited for the
  // 10 s watchdog, and nothing was logged for minutes.
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  const std::string grid = " -q --set cloth.nx=33 --set cloth.ny=33 --set cloth.frames=1500";
  auto r = run_command(cd + " simulate" + grid + " -o t.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " train" + kSmall + " -i " + (dir / "t.h5").string() + " -o m.h5");
  REQUIRE(r.exit_code == 0);
  const auto err = dir / "err.txt";
  const pid_t pid = datadyn::test::spawn({kTool, "evaluate", "-i", (dir / "t.h5").string(), "-i",
                                          (dir / "m.h5").string(), "-o", (dir / "ev").string()},
                                         err.string());
  REQUIRE(pid > 0);
  // Wait for the third upscaling to start: the network's, whose crossing count on the crumpled
  // output of a barely trained network takes minutes (in no simulation step, which checked).
  const auto log_text = [&] {
    std::ifstream in(err);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (int i = 0; i < 1200 && log_text().find("upscaling 3/4") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(log_text().find("upscaling 3/4") != std::string::npos);  // the progress lines
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto start = std::chrono::steady_clock::now();
  CHECK(datadyn::test::terminate_and_wait(pid) == 1);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("evaluate ended " << waited << " s after SIGTERM");
  const std::string log = log_text();
  CHECK(log.find("interrupted by SIGTERM") != std::string::npos);
  CHECK(log.find("did not stop within") == std::string::npos);  // not the watchdog
  CHECK(!std::filesystem::exists(dir / "ev.json"));
}

TEST_CASE("cloth-train: a grid past 1e8 particles or with parallel axes is a config error") {
  // 46341 x 46341 particles overflowed the index type and crashed (SIGSEGV) while the config
  // was read, in every subcommand and with --dry-run; parallel axes put the grid on a line.
  TempDir dir;
  const std::string out = " -o " + (dir / "t.h5").string();
  for (const std::string& cmd :
       {std::string(" simulate --dry-run --set cloth.nx=46341 --set cloth.ny=46341"),
        std::string(" simulate --set cloth.nx=1073741825 --set cloth.ny=3"),
        std::string(" upscale --method bilinear --set cloth.nx=65537 --set cloth.ny=65537")}) {
    INFO(cmd);
    const auto r = run_command(kTool + cmd + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("/cloth/ny: expected a grid of at most 1e8 particles") != std::string::npos);
  }
  const auto r = run_command(kTool + " simulate --set cloth.axis_v=[2,0,0] --set " +
                             "cloth.axis_u=[1,0,0]" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cloth/axis_v: expected a vector not parallel to axis_u") != std::string::npos);
  // A step of 1e-320 s (an infinite frame rate) failed after the simulation, blaming the
  // output file; a spacing of 1e-320 m made a cloth of no size with exit 0.
  for (const auto& [set, expected] : std::vector<std::pair<std::string, std::string>>{
           {"cloth.time_step=1e-320", "/cloth/time_step: expected a number in [1e-06, 1]"},
           {"runs.time_step=0.01,1e-320",
            "/runs/time_step: expected a list of numbers, each in "
            "[1e-06, 1]"},
           {"cloth.spacing=1e-320", "/cloth/spacing: expected a number in [0.0001, 100]"}}) {
    CAPTURE(set);
    const auto bad = run_command(kTool + " simulate --dry-run --set " + set + out);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find(expected) != std::string::npos);
  }
  CHECK(!std::filesystem::exists(dir / "t.h5"));
}

TEST_CASE("cloth-train: a cloth that starts inside the sphere or below the ground is refused") {
  // Pins inside a sphere ran silently at 10 m/s with springs 4.7 times their length; a sphere
  // larger than the cloth ended as "diverged (try a smaller time_step)" at frame 1.
  TempDir dir;
  const std::string out = " -o " + (dir / "t.h5").string();
  auto r = run_command(kTool +
                       " simulate -q --set scene=curtain --set cloth.sphere.enabled=true"
                       " --set cloth.sphere.center=0,1.5,0 --set cloth.sphere.radius=0.2" +
                       out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cloth/sphere/radius: expected a sphere (plus the collision margin) the "
                   "cloth starts outside; particle 10 (row 0, column 10) starts inside it") !=
        std::string::npos);
  r = run_command(kTool + " simulate -q --set scene=collision --set cloth.sphere.radius=1e9" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cloth/sphere/radius") != std::string::npos);
  r = run_command(kTool +
                  " simulate -q --set cloth.ground.enabled=true --set cloth.ground.height=2" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cloth/ground/height: expected a ground (plus the collision margin) the "
                   "cloth starts above") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "t.h5"));
}

TEST_CASE("cloth-train: a miniature whose point count is not its grid's exits 1 naming it") {
  // Patches index the miniature as an nx x ny grid; an empty sequence crashed upscale. The bad
  // run is the second: every run is checked before the first is upscaled.
  TempDir dir;
  const auto t = (dir / "t.h5").string(), bad = (dir / "bad.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  {
    datadyn::io::CacheReader in(t);
    const auto json =
        std::get<std::string>(in.sequence("curtain_000").attributes().at("cloth_json"));
    datadyn::io::CacheWriter w(bad, {"test", "", "{}", ""});
    for (const Eigen::Index points : {81, 5}) {  // the grid is 9 x 9
      auto& seq = w.add_sequence(points == 81 ? "curtain_000" : "curtain_001", {24.0, 3});
      seq.set_attribute("cloth_json", json);
      seq.set_attribute("miniature_factor", std::int64_t{2});  // the default dsds_factor
      const datadyn::Points3 x = datadyn::Points3::Zero(points, 3);
      for (int frame = 1; frame <= 2; ++frame)
        seq.append_frame(frame, frame / 24.0, {{"points/position", datadyn::io::view(x)}});
    }
    w.commit();
  }
  const auto out = dir / "up.h5";
  const std::string loud = kSmall.substr(std::string(" -q").size());
  const auto r = run_command(kTool + " upscale" + loud + " --method bicubic -i " + bad + " -o " +
                             out.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("bad.h5: /sequences/curtain_001: 5 points, but its cloth_json describes a 9 x "
                   "9 grid (81 points)") != std::string::npos);
  CHECK(r.err.find("upscaling") == std::string::npos);  // curtain_000 was not upscaled first
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("cloth-train: train.miniature=simulated trains a corrector on the simulated miniature") {
  TempDir dir;
  const auto t = (dir / "t.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  const auto paper = (dir / "dsds.h5").string(), sim = (dir / "sim.h5").string();
  REQUIRE(run_command(kTool + " train" + kSmall + " -i " + t + " -o " + paper).exit_code == 0);
  auto r = run_command(kTool + " train" + kSmall + " --set train.miniature=simulated -i " + t +
                       " -o " + sim);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto miniature = [](const std::string& path) {
    const auto a = datadyn::io::CacheReader(path).attributes("/model");
    return std::get<std::string>(a.at("train_miniature"));
  };
  CHECK(miniature(paper) == "dsds");
  CHECK(miniature(sim) == "simulated");
  // Other training pairs, another model (the miniature of a 9 x 9 curtain does not follow its
  // target's DSDS exactly).
  CHECK(datadyn::io::CacheReader(sim).read_array<float>("/model/layer_0/weight").data !=
        datadyn::io::CacheReader(paper).read_array<float>("/model/layer_0/weight").data);
  r = run_command(kTool + " evaluate" + kSmall + " -i " + t + " -i " + sim + " -i " + paper +
                  " -o " + (dir / "eval").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir / "eval.json");
  const auto report = nlohmann::json::parse(in);
  REQUIRE(report["dsds_factor"].size() == 2);
  CHECK(report["dsds_factor"][0]["train_miniature"] == "simulated");
  CHECK(report["dsds_factor"][1]["train_miniature"] == "dsds");
  // Table 6: three interpolations, then a network row per model of the first one's factor.
  REQUIRE(report["upscaling"].size() == 5);
  CHECK(report["upscaling"][3]["model"] == "sim.h5");
  CHECK(report["upscaling"][3]["method"] == "corrector + bicubic");
  CHECK(report["upscaling"][4]["model"] == "dsds.h5");
  CHECK(report["upscaling"][4]["method"] == "network");
  for (const auto& row : report["upscaling"]) CHECK(row["roughness"].get<double>() > 0.0);
  CHECK(report["target_roughness"].get<double>() > 0.0);

  // train.max_departure: each run's pairs end where its miniature departs from the target's
  // DSDS (the 9 x 9 curtain's by 1 cm within its 20 frames); the pairs are 16 patches a frame.
  const std::string loud = kSmall.substr(std::string(" -q").size());
  r = run_command(kTool + " train" + loud +
                  " --set train.miniature=simulated --set train.max_departure=0.01 -i " + t +
                  " -o " + (dir / "cut.h5").string());
  REQUIRE(r.exit_code == 0);
  std::size_t kept = 0, runs = 0;
  const std::regex line(R"((curtain_00\d): pairs from frames 1-(\d+) of 20: from frame (\d+) )");
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), line), end; it != end; ++it) {
    const int k = std::stoi((*it)[2]), from = std::stoi((*it)[3]);
    CHECK(k >= 3);
    CHECK(k < 20);
    CHECK(k == std::max(from - 1, 3));
    kept += static_cast<std::size_t>(k);
    ++runs;
  }
  CHECK(runs == 3);
  std::smatch counts;
  REQUIRE(std::regex_search(
      r.err, counts, std::regex(R"((\d+) training pairs from 2 sequences, (\d+) test pairs)")));
  CHECK(std::stoul(counts[1]) + std::stoul(counts[2]) == 16 * kept);
  // Only a simulated miniature departs from anything.
  r = run_command(kTool + " train" + kSmall + " --set train.max_departure=0.01 -i " + t + " -o " +
                  (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/train/max_departure: expected 0 with train.miniature \"dsds\"") !=
        std::string::npos);

  r = run_command(kTool + " train" + kSmall + " --set train.miniature=coarse -i " + t + " -o " +
                  (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/train/miniature") != std::string::npos);
  CHECK(r.err.find("coarse") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad.h5"));
}

TEST_CASE("cloth-train: cloth.solver selects ADMM, and an unknown solver is a config error") {
  TempDir dir;
  const auto pd = (dir / "pd.h5").string(), admm = (dir / "admm.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + pd).exit_code == 0);
  auto r = run_command(kTool + " simulate" + kSmall + " --set cloth.solver=admm -o " + admm);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Another local step, other positions after the first step (both start at the rest shape).
  const auto a = datadyn::io::CacheReader(pd).sequence("curtain_000").positions(5);
  const auto b = datadyn::io::CacheReader(admm).sequence("curtain_000").positions(5);
  CHECK(a != b);
  const auto attrs = datadyn::io::CacheReader(admm).sequence("curtain_000").attributes();
  CHECK(std::get<std::string>(attrs.at("cloth_json")).find("\"admm\"") != std::string::npos);
  r = run_command(kTool + " simulate" + kSmall + " --set cloth.solver=newton -o " +
                  (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cloth/solver") != std::string::npos);
  CHECK(r.err.find("newton") != std::string::npos);
}

TEST_CASE("cloth-train: cloth.self_collision reaches the solver and the stored run") {
  // The collision scene at 9 x 9 (spacing 0.1 m) folds over itself as it slides off the sphere.
  TempDir dir;
  const std::string scene =
      " simulate -q --set scene=collision --set cloth.nx=9 --set cloth.ny=9"
      " --set cloth.spacing=0.1 --set cloth.frames=60";
  const auto off = (dir / "off.h5").string(), on = (dir / "on.h5").string();
  REQUIRE(run_command(kTool + scene + " -o " + off).exit_code == 0);
  auto r = run_command(kTool + scene + " --set cloth.self_collision.enabled=true -o " + on);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("thicknesses in one step") == std::string::npos);
  const auto a = datadyn::io::CacheReader(off).sequence("collision_000").positions(59);
  const auto b = datadyn::io::CacheReader(on).sequence("collision_000").positions(59);
  CHECK(a != b);
  const auto attrs = datadyn::io::CacheReader(on).sequence("collision_000").attributes();
  CHECK(
      std::get<std::string>(attrs.at("cloth_json")).find("\"self_collision\":{\"enabled\":true") !=
      std::string::npos);
  // A sheet 1 cm thick moves several thicknesses a step as it falls: the run warns.
  r = run_command(kTool + scene +
                  " --set cloth.self_collision.enabled=true"
                  " --set cloth.self_collision.thickness=0.01 -o " +
                  (dir / "thin.h5").string());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("collision_000: a particle moved ") != std::string::npos);
  CHECK(r.err.find(" self-collision thicknesses in one step (frame ") != std::string::npos);
  // A thickness without enabled does nothing, and says so.
  r = run_command(kTool + scene + " --set cloth.self_collision.thickness=0.05 --dry-run -o " +
                  (dir / "off2.h5").string());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("cloth.self_collision.thickness is 0.05 m but cloth.self_collision.enabled is "
                   "false: no self-collision") != std::string::npos);
  // Up to 5 spacings (0.5 m here).
  r = run_command(kTool + scene + " --set cloth.self_collision.thickness=0.6 -o " +
                  (dir / "bad.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set cloth.spacing, --set cloth.self_collision.thickness: "
                   "/cloth/self_collision/thickness: expected a number in [0, 0.5] (5 spacings: "
                   "cloth.spacing = 0.1 m), got 0.6") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad.h5"));
}

namespace {

/// Points of every frame of `sequence` inside the collision scene's sphere (centre (0.05, 0.35,
/// 0), radius 0.3) or below its ground (y = 0).
long inside_colliders(const std::string& file, const std::string& sequence) {
  const auto seq = datadyn::io::CacheReader(file).sequence(sequence);
  long inside = 0;
  for (std::size_t f = 0; f < seq.frame_count(); ++f) {
    const datadyn::Points3 x = seq.positions(f);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const double dx = x(i, 0) - 0.05, dy = x(i, 1) - 0.35, dz = x(i, 2);
      if (dx * dx + dy * dy + dz * dz < 0.09 || x(i, 1) < 0.0) ++inside;
    }
  }
  return inside;
}

/// Simulates the target runs of `flags` into `dir` and trains a model on them: {target, model}.
std::pair<std::string, std::string> simulate_and_train(const TempDir& dir,
                                                       const std::string& flags) {
  const auto target = (dir / "t.h5").string(), model = (dir / "m.h5").string();
  REQUIRE(run_command(kTool + " simulate" + flags + " -o " + target).exit_code == 0);
  REQUIRE(run_command(kTool + " train" + flags + " -i " + target + " -o " + model).exit_code == 0);
  return {target, model};
}

/// evaluate's JSON report of `model` against `target` with `flags`, written to `prefix`.json.
nlohmann::json evaluate_report(const std::string& flags, const std::string& target,
                               const std::string& model, const std::string& prefix) {
  const auto r =
      run_command(kTool + " evaluate" + flags + " -i " + target + " -i " + model + " -o " + prefix);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(prefix + ".json");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("cloth-train: upscaled frames are moved out of the colliders (upscale.colliders)") {
  // The collision scene at 9 x 9 (spacing 0.1 m) lands on the sphere. Its 5 x 5 miniature's cells
  // are 0.2 m wide in target metres, so bilinear chords sag 0.2^2 / (8 0.3) = 0.017 m into a
  // sphere its particles touch 0.005 m out: without the pass, upscaled points lie inside it.
  TempDir dir;
  const std::string scene =
      " -q --set scene=collision --set cloth.nx=9 --set cloth.ny=9 --set cloth.spacing=0.1"
      " --set cloth.frames=40";
  const auto on = (dir / "on.h5").string(), off = (dir / "off.h5").string();
  auto r = run_command(kTool + " upscale" + scene + " --method bilinear -o " + on);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(run_command(kTool + " upscale" + scene +
                      " --set upscale.colliders=false --method bilinear -o " + off)
              .exit_code == 0);
  CHECK(inside_colliders(on, "collision_000") == 0);
  CHECK(inside_colliders(off, "collision_000") > 0);
  // From a simulated miniature cache the colliders are scaled back to the target's: the frames
  // of upscale's own miniature, but for the cache's float32 positions (about 6e-8 m here, times
  // f = 2); colliders left at the miniature's scale would move points by centimetres.
  const auto mini = (dir / "mini.h5").string(), from_cache = (dir / "cached.h5").string();
  REQUIRE(run_command(kTool + " simulate" + scene + " --set simulate_miniature=true -o " + mini)
              .exit_code == 0);
  REQUIRE(run_command(kTool + " upscale" + scene + " --method bilinear -i " + mini + " -o " +
                      from_cache)
              .exit_code == 0);
  const auto a = datadyn::io::CacheReader(on).sequence("collision_000");
  const auto b = datadyn::io::CacheReader(from_cache).sequence("collision_000");
  REQUIRE(a.frame_count() == b.frame_count());
  double largest = 0.0;
  for (std::size_t f = 0; f < a.frame_count(); ++f)
    largest = std::max(largest, (a.positions(f) - b.positions(f)).cwiseAbs().maxCoeff());
  CHECK(largest < 1e-6);

  // evaluate reports particles inside colliders per frame, with the pass and without.
  const std::string small =
      scene + " --set runs.mass=0.008,0.012 --set train.max_epochs=2 --set train.batch_size=300";
  const auto [target, model] = simulate_and_train(dir, small);
  for (const bool pass : {true, false}) {
    const auto report =
        evaluate_report(small + " --set upscale.colliders=" + (pass ? "true" : "false"), target,
                        model, (dir / (pass ? "e_on" : "e_off")).string());
    CHECK(report["target_collider_penetrations_per_frame"].get<double>() == 0.0);
    const auto& rows = report["upscaling"];
    REQUIRE(rows.size() == 4);
    CHECK(rows[0]["method"] == "bilinear");
    if (pass)
      for (const auto& row : rows)
        CHECK(row["collider_penetrations_per_frame"].get<double>() == 0.0);
    else
      CHECK(rows[0]["collider_penetrations_per_frame"].get<double>() > 0.0);
  }
}

TEST_CASE("cloth-train: upscaled frames keep the pinned particles on their pins (upscale.pins)") {
  // A network trained for a few epochs predicts the curtain's pinned top row only roughly; the
  // simulation holds it exactly, and so does upscale unless upscale.pins is false.
  TempDir dir;
  const auto [target, model] = simulate_and_train(dir, kSmall);
  // The largest distance of a top-row particle from its rest position (its pin) over all frames.
  auto drift = [](const std::string& file) {
    const auto seq = datadyn::io::CacheReader(file).sequence("curtain_000");
    const auto rest = seq.read_static<double>("rest/position").matrix();
    double largest = 0.0;
    for (std::size_t f = 0; f < seq.frame_count(); ++f) {
      const datadyn::Points3 x = seq.positions(f);
      for (int c = 0; c < 9; ++c) largest = std::max(largest, (x.row(c) - rest.row(c)).norm());
    }
    return largest;
  };
  const auto on = (dir / "on.h5").string(), off = (dir / "off.h5").string();
  auto r = run_command(kTool + " upscale" + kSmall + " -i " + model + " -o " + on);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(run_command(kTool + " upscale" + kSmall + " --set upscale.pins=false -i " + model +
                      " -o " + off)
              .exit_code == 0);
  // Positions are stored as float32: 1.2e-7 m apart at 1.5 m, where the curtain hangs.
  CHECK(drift(on) < 1e-6);
  CHECK(drift(off) > 1e-3);  // a millimetre: far above rounding, far below this network's error
  for (const bool pins : {true, false}) {
    const auto rows =
        evaluate_report(kSmall + " --set upscale.pins=" + (pins ? "true" : "false"), target, model,
                        (dir / (pins ? "e_on" : "e_off")).string())["upscaling"];
    REQUIRE(rows.size() == 4);
    CHECK(rows[3]["method"] == "network");
    if (pins)
      for (const auto& row : rows) CHECK(row["pin_drift"].get<double>() == 0.0);
    else
      CHECK(rows[3]["pin_drift"].get<double>() > 1e-3);
  }
}

TEST_CASE(
    "cloth-train: a corrector's correction is stepped with self-collision "
    "(upscale.self_collision)") {
  // The collision scene at 9 x 9 with self-collision, a corrector trained for 2 epochs: applied
  // in one go its corrections put the sheet through itself in some frames (0.12 edge crossings a
  // frame), applied as a motion with the miniature's self-collision in none. Every step is
  // deterministic (the same bytes on any thread count and SIMD level), so the counts are exact.
  TempDir dir;
  const std::string scene =
      " -q --set scene=collision --set cloth.nx=9 --set cloth.ny=9 --set cloth.spacing=0.1"
      " --set cloth.frames=60 --set cloth.self_collision.enabled=true"
      " --set runs.mass=0.008,0.012 --set train.max_epochs=2 --set train.batch_size=300"
      " --set features.local=true --set features.residual=true --set train.miniature=simulated";
  const auto [target, model] = simulate_and_train(dir, scene);
  std::vector<nlohmann::json> corrector;
  for (const char* stepped : {"true", "false"}) {
    const auto rows =
        evaluate_report(scene + " --set upscale.self_collision=" + stepped, target, model,
                        (dir / (std::string("e_") + stepped)).string())["upscaling"];
    REQUIRE(rows.size() == 4);
    REQUIRE(rows[3]["method"] == "corrector + bicubic");
    corrector.push_back(rows[3]);
  }
  CHECK(corrector[0]["layer_crossings_per_frame"].get<double>() == 0.0);
  CHECK(corrector[1]["layer_crossings_per_frame"].get<double>() > 0.0);
  CHECK(corrector[0]["error"].get<double>() != corrector[1]["error"].get<double>());
}

TEST_CASE("cloth-train: another tool's cache where cloth runs belong is named by its generator") {
  // An mps-gen database given to train was read as cloth runs ("a target run" where a miniature
  // belonged, or shapes that did not fit).
  TempDir dir;
  const auto db = dir / "db.h5";
  {
    datadyn::io::CacheWriter w(db, {"mps-gen 0.1.0", "mps-gen -o db.h5", "{}", ""});
    datadyn::Points2 x = datadyn::Points2::Zero(4, 2);
    w.add_sequence("sim_000", {30.0, 2})
        .append_frame(1, 0.0, {{"points/position", datadyn::io::view(x)}});
    w.commit();
  }
  const auto r = run_command(kTool + " train" + kSmall + " -i " + db.string() + " -o " +
                             (dir / "m.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(
      r.err.find("db.h5: written by mps-gen 0.1.0, expected target runs (cloth-train simulate)") !=
      std::string::npos);
}

TEST_CASE("cloth-train: a model's attributes and layers are checked before it upscales") {
  // An unknown or missing activation and junk flags upscaled with exit 0 (each fell back to a
  // default); sizes of 1e9 ran out of memory naming nothing.
  TempDir dir;
  const auto t = (dir / "t.h5").string(), m = (dir / "m.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  REQUIRE(run_command(kTool + " train" + kSmall + " -i " + t + " -o " + m).exit_code == 0);
  const auto upscale = [&](const std::filesystem::path& model) {
    return run_command(kTool + " upscale" + kSmall + " -i " + model.string() + " -o " +
                       (dir / "up.h5").string());
  };
  REQUIRE(upscale(m).exit_code == 0);
  std::filesystem::remove(dir / "up.h5");
  using Damage = std::function<void(const std::filesystem::path&)>;
  const auto attr = [](const std::string& name, datadyn::io::AttributeValue v) -> Damage {
    return [=](const std::filesystem::path& f) { set_attribute(f, "/model", name, v); };
  };
  const std::vector<std::pair<Damage, std::string>> cases{
      {attr("activation", std::string("no_such_activation")),
       "/model@activation: expected \"relu\" (the only one), got \"no_such_activation\""},
      {[](const auto& f) { remove_attribute(f, "/model", "activation"); },
       "/model@activation: missing, expected \"relu\""},
      {attr("features_local", std::string("yes")),
       "/model@features_local: expected 0 or 1 (features_local of the training), got \"yes\""},
      {attr("features_residual", std::int64_t{7}), "/model@features_residual: expected 0 or 1"},
      {attr("train_miniature", std::string("junk")),
       "/model@train_miniature: expected \"dsds\" or \"simulated\", got \"junk\""},
      {attr("train_miniature", std::int64_t{1}),
       "/model@train_miniature: expected \"dsds\" or \"simulated\", got 1"},
      {attr("dsds_factor", std::int64_t{9}),
       "/model@dsds_factor: expected a DSDS factor of 2, 3 or 4"},
      {attr("sizes", std::vector<std::int64_t>{36, 1000000000, 64, 64, 27}),
       "/model/layer_0/weight: expected [1000000000, 36] as /model@sizes [36, 1000000000, 64, 64, "
       "27] says, got [64, 36]"},
      {attr("sizes", std::vector<std::int64_t>{36, 64, 64, 27}),
       "/model/layer_2/weight: expected [27, 64] as /model@sizes [36, 64, 64, 27] says, got [64, "
       "64]"},
      {attr("sizes", std::vector<std::int64_t>{36, -64, 64, 64, 27}),
       "/model@sizes: expected layer sizes from 36 inputs to 3 (f+1)^2 = 27 outputs"},
      {[](const auto& f) { remove_object(f, "/model/layer_2"); },
       "/model/layer_2/weight: missing, but /model@sizes [36, 64, 64, 64, 27] has 4 layers"},
      {[](const auto& f) {
         datadyn::test::poke_float(f, "/model/layer_0/weight", 3, std::nan(""));
       },
       "/model/layer_0/weight: element 3 is not finite"},
      {attr("features_history", std::int64_t{4}),
       "/model@features_history: expected 1, 2 or 3, got 4"},
      {attr("features_velocities", std::int64_t{1}),
       "/model@sizes: expected layer sizes from 48 inputs to 3 (f+1)^2 = 27 outputs (dsds_factor "
       "2, features_history 3, features_velocities 1), got [36, 64, 64, 64, 27]"},
      {[](const auto& f) {
         set_attribute(f, "/model/domain", "mass", std::vector<std::int64_t>{3, 1});
       },
       "/model/domain@mass: expected [least, greatest], got [3, 1]"},
      {[](const auto& f) {
         datadyn::test::poke_double_attribute(f, "/model/domain", "wind.drag", 0.6);
       },
       "/model/domain@wind.drag: expected [least, greatest], got 0.6"},
  };
  for (const auto& [damage, message] : cases) {
    CAPTURE(message);
    const auto bad = dir / "bad.h5";
    std::filesystem::copy_file(m, bad, std::filesystem::copy_options::overwrite_existing);
    damage(bad);
    const auto r = upscale(bad);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(bad.string() + ": " + message) != std::string::npos);
    CHECK(r.err.find("out of memory") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "up.h5"));
  }
}

TEST_CASE("cloth-train: a run's cloth_json and topology are checked where the run is read") {
  // Bad JSON in cloth_json came out as the library's "[json.exception.parse_error.101] ..."
  // text, and a quad index of -1 trained with exit 0.
  TempDir dir;
  const auto t = dir / "t.h5";
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t.string()).exit_code == 0);
  const auto train = [&](const std::filesystem::path& in) {
    return run_command(kTool + " train" + kSmall + " -i " + in.string() + " -o " +
                       (dir / "m.h5").string());
  };
  const std::string run = "/sequences/curtain_001";
  const auto damaged = [&](const std::function<void(const std::filesystem::path&)>& damage,
                           const std::string& message) {
    CAPTURE(message);
    const auto bad = dir / "bad.h5";
    std::filesystem::copy_file(t, bad, std::filesystem::copy_options::overwrite_existing);
    damage(bad);
    const auto r = train(bad);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(bad.string() + ": " + run + message) != std::string::npos);
    CHECK(r.err.find("json.exception") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
  };
  damaged([&](const auto& f) { set_attribute(f, run, "cloth_json", std::string("{bad")); },
          "@cloth_json: invalid JSON: ");
  damaged(
      [&](const auto& f) {
        set_attribute(f, run, "cloth_json", std::string(100000, '[') + std::string(100000, ']'));
      },
      "@cloth_json: invalid JSON: nested deeper than ");
  damaged([&](const auto& f) { datadyn::test::poke_float(f, run + "/topology/quads", 0, -1); },
          "/topology/quads: index -1 at element 0 outside [0, 81)");
  // An index in range that is not the grid's: the patches would read another mesh than stored.
  damaged([&](const auto& f) { datadyn::test::poke_float(f, run + "/topology/quads", 0, 40); },
          "/topology/quads: not the cells of the 9 x 9 grid its cloth_json describes");
  REQUIRE(train(t).exit_code == 0);
}

TEST_CASE("cloth-train: a checkpoint with a weight or moment that is not finite is refused") {
  // A NaN in /checkpoint/parameters was resumed and the run ended "diverged", as if the training
  // had, instead of naming the damaged file.
  TempDir dir;
  const auto t = (dir / "t.h5").string(), m = (dir / "m.h5").string();
  REQUIRE(run_command(kTool + " simulate" + kSmall + " -o " + t).exit_code == 0);
  const std::string train = kTool + " train" + kSmall + " --set train.checkpoint_every=1 -i " + t;
  REQUIRE(run_command(train + " --set train.max_epochs=2 -o " + m).exit_code == 0);
  const auto checkpoint = dir / "m.checkpoint.h5", kept = dir / "kept.h5";
  std::filesystem::copy_file(checkpoint, kept);
  for (const auto& [dataset, value] : std::vector<std::pair<std::string, double>>{
           {"/checkpoint/parameters", std::nan("")},
           {"/checkpoint/adam_m", std::numeric_limits<double>::infinity()},
           {"/checkpoint/adam_v", -1.0}}) {
    CAPTURE(dataset);
    std::filesystem::copy_file(kept, checkpoint, std::filesystem::copy_options::overwrite_existing);
    datadyn::test::poke_float(checkpoint, dataset, 4, value);
    const auto r = run_command(train + " --set train.resume=true -o " + m);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(checkpoint.string() + ": " + dataset + ": element 4 is ") !=
          std::string::npos);
    CHECK(r.err.find("a damaged checkpoint") != std::string::npos);
    CHECK(r.err.find("diverged") == std::string::npos);
  }
  std::filesystem::copy_file(kept, checkpoint, std::filesystem::copy_options::overwrite_existing);
  CHECK(run_command(train + " --set train.resume=true -o " + m).exit_code == 0);
}

TEST_CASE("configs/cloth/run.sh gives mesh-export the common flags only") {
  // Stand-ins for the tools record their arguments: the script's extra flags go to every
  // cloth-train step as they are, and to mesh-export only those it has too (a cloth-train --set
  // would be an unknown key there, and -q would be lost on the export's log).
  TempDir dir;
  const auto bin = dir / "bin";
  std::filesystem::create_directories(bin);
  for (const char* tool : {"cloth-train", "mesh-export"}) {
    std::ofstream(bin / tool) << "#!/bin/sh\necho \"" << tool << " $*\" >> \""
                              << (dir / "log").string() << "\"\n";
    std::filesystem::permissions(bin / tool, std::filesystem::perms::owner_all);
  }
  const auto r = run_command(std::string(DATADYN_SOURCE_DIR) + "/configs/cloth/run.sh " +
                             bin.string() + " " + (dir / "out").string() +
                             " flag -q --threads 1 --set train.max_epochs=2 --log-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream log(dir / "log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  REQUIRE(lines.size() == 9);  // simulate, 5 trainings, upscale, evaluate, then the export
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(lines[i].starts_with("cloth-train "));
    CHECK(lines[i].ends_with(" -q --threads 1 --set train.max_epochs=2 --log-format=json"));
  }
  CHECK(lines.back().starts_with("mesh-export -i " + (dir / "out" / "flag.upscaled.h5").string() +
                                 " --sequence flag_000 -o "));
  CHECK(lines.back().ends_with("flag.####.obj -q --threads 1 --log-format=json"));
}

TEST_CASE("cloth-train: a check across keys names the --set of the key its bound comes from") {
  TempDir dir;
  const auto config = dir / "c.json";
  // Each config passes alone; the --set of another key than the one reported breaks it.
  const auto refused = [&](const char* json, const std::string& set, const std::string& message) {
    std::ofstream(config) << json;
    const auto r = run_command(kTool + " simulate --dry-run -c " + config.string() + " --set " +
                               set + " -o " + (dir / "t.h5").string());
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
  };
  refused(R"({"cloth": {"ground": {"height": 10.0}}})", "cloth.ground.enabled=true",
          "--set cloth.ground.enabled: /cloth/ground/height: expected a ground");
  // 0.05 m is within 5 default spacings (0.104 m) but not 5 of 5 mm.
  refused(R"({"cloth": {"self_collision": {"thickness": 0.05}}})", "cloth.spacing=0.005",
          "--set cloth.spacing: /cloth/self_collision/thickness: expected a number in [0, 0.025] "
          "(5 spacings: cloth.spacing = 0.005 m), got 0.05");
}

TEST_CASE(
    "cloth-train: runs.wind_velocity sweeps the wind, and upscale and evaluate warn of a run "
    "outside the training runs") {
  // The paper's limit (sec. 6, fig. 15): wind from a direction the training did not have gave
  // wrong wrinkles, silently. The model records what its training runs spanned.
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  const std::string flag =
      " -q --set scene=flag --set cloth.nx=9 --set cloth.ny=9 --set "
      "cloth.spacing=0.1 --set cloth.frames=8 --set runs.mass=0.01 --set "
      "train.max_epochs=2 --set train.batch_size=300 --set train.test_fraction=0";
  const std::string trained_winds = " --set 'runs.wind_velocity=[[6,0,1.5],[6,0,3]]'";
  auto r = run_command(cd + " simulate" + flag + trained_winds + " -o t.h5");
  REQUIRE(r.exit_code == 0);
  {
    // One run per wind, each with its velocity (the flag's default is [6, 0, 1.5]).
    const datadyn::io::CacheReader cache(dir / "t.h5");
    REQUIRE(cache.sequence_names() == std::vector<std::string>{"flag_000", "flag_001"});
    const auto json_of = [&](const std::string& name) {
      const auto a = cache.sequence(name).attributes();
      return nlohmann::json::parse(std::get<std::string>(a.at("cloth_json")));
    };
    CHECK(json_of("flag_000")["wind"]["velocity"] == nlohmann::json({6, 0, 1.5}));
    CHECK(json_of("flag_001")["wind"]["velocity"] == nlohmann::json({6, 0, 3}));
  }
  r = run_command(cd + " train" + flag + trained_winds + " -i t.h5 -o m.h5");
  REQUIRE(r.exit_code == 0);

  // Within the trained box: no warning.
  r = run_command(cd + " upscale" + flag + " --set 'runs.wind_velocity=[[6,0,2]]' -i m.h5 -o a.h5");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("outside the runs") == std::string::npos);
  // The opposite wind: named quantity by quantity, the output still written.
  r = run_command(cd + " upscale" + flag +
                  " --set 'runs.wind_velocity=[[-6,0,-1.5]]' -i m.h5 -o b.h5");
  CHECK(r.exit_code == 0);
  CHECK(
      r.err.find("[warning] flag_000: outside the runs m.h5 was trained on: wind.velocity.x -6 "
                 "(trained 6), wind.velocity.z -1.5 (trained 1.5 to 3); the network knows only") !=
      std::string::npos);
  CHECK(std::filesystem::exists(dir / "b.h5"));
  // Another scene: the curtain has no wind and the heavier cloth is outside too.
  r = run_command(cd +
                  " upscale -q --set cloth.nx=9 --set cloth.ny=9 --set cloth.spacing=0.1 "
                  "--set cloth.frames=8 --set runs.mass=0.02 -i m.h5 -o c.h5");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("curtain_000: outside the runs m.h5 was trained on: mass 0.02 (trained 0.01), "
                   "substeps 1 (trained 8), wind.velocity.x 0 (trained 6), wind.velocity.z 0 "
                   "(trained 1.5 to 3), "
                   "wind.drag 0 (trained 0.6), wind.drag_tangent 0 (trained 0.0067), wind.gust 0 "
                   "(trained 0.5)") != std::string::npos);
  // evaluate says the same of a target run outside.
  r = run_command(cd + " simulate" + flag + " --set 'runs.wind_velocity=[[-6,0,-1.5]]' -o o.h5");
  REQUIRE(r.exit_code == 0);
  r = run_command(cd + " evaluate" + flag +
                  " --set evaluate.timing_frames=0 -i o.h5 -i m.h5 -o ev");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("flag_000: outside the runs m.h5 was trained on: wind.velocity.x -6") !=
        std::string::npos);
  // A sweep of a wind that no drag takes force from is a config error.
  r = run_command(cd + " simulate -q --set 'runs.wind_velocity=[[1,0,0]]' -o n.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set runs.wind_velocity: /runs/wind_velocity: expected no wind velocities "
                   "while cloth.wind.drag and cloth.wind.drag_tangent are 0") != std::string::npos);
  // The tangential drag alone takes force from the wind: the sweep is accepted.
  r = run_command(cd + " simulate -q --set cloth.frames=2 --set cloth.wind.drag_tangent=0.01 " +
                  "--set 'runs.wind_velocity=[[1,0,0]]' -o n.h5");
  CHECK(r.exit_code == 0);
}

TEST_CASE(
    "configs/cloth/architectures.sh trains the five network shapes of table 5 and compares "
    "them") {
  TempDir dir;
  const auto out = dir / "out";
  const auto r = run_command(std::string(DATADYN_SOURCE_DIR) + "/configs/cloth/architectures.sh " +
                             DATADYN_BIN_DIR + " " + out.string() + " curtain" + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes{
      {"4xFC-64", {36, 64, 64, 64, 27}},
      {"4xFC-32", {36, 32, 32, 32, 27}},
      {"3xFC-64", {36, 64, 64, 27}},
      {"5xFC-64", {36, 64, 64, 64, 64, 27}},
      {"4xFC-128", {36, 128, 128, 128, 27}}};
  std::ifstream md(out / "curtain.architectures.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const auto& [name, sizes] : shapes) {
    INFO(name);
    const datadyn::io::CacheReader model(out / ("curtain." + name + ".h5"));
    CHECK(std::get<std::vector<std::int64_t>>(model.attributes("/model").at("sizes")) == sizes);
    CHECK(report.find("| curtain." + name + ".h5 | 2 | positions x3 | no | no | DSDS | ") !=
          std::string::npos);
  }
}

TEST_CASE("cloth-train: features.history and features.velocities choose the inputs of table 3") {
  TempDir dir;
  const std::string cd = "cd " + dir.path().string() + " && " + kTool;
  auto r = run_command(cd + " simulate" + kSmall + " -o t.h5");
  REQUIRE(r.exit_code == 0);
  const std::string one = " --set features.history=1 --set features.velocities=true";
  r = run_command(cd + " train" + kSmall + one + " -i t.h5 -o m.h5");
  REQUIRE(r.exit_code == 0);
  {
    const datadyn::io::CacheReader model(dir / "m.h5");
    const auto a = model.attributes("/model");
    CHECK(std::get<std::vector<std::int64_t>>(a.at("sizes")) ==
          std::vector<std::int64_t>{24, 64, 64, 64, 27});
    CHECK(std::get<std::int64_t>(a.at("features_history")) == 1);
    CHECK(std::get<std::int64_t>(a.at("features_velocities")) == 1);
  }
  // The model carries its inputs: upscale and evaluate need no flag for them.
  r = run_command(cd + " upscale" + kSmall + " -i m.h5 -o u.h5");
  CHECK(r.exit_code == 0);
  r = run_command(cd + " evaluate" + kSmall +
                  " --set evaluate.timing_frames=0 -i t.h5 -i m.h5 -o ev");
  CHECK(r.exit_code == 0);
  std::ifstream md(dir / "ev.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  CHECK(report.find("| m.h5 | 2 | positions x1 + velocities | no | no | DSDS | ") !=
        std::string::npos);
  r = run_command(cd + " train" + kSmall + " --set features.history=4 -i t.h5 -o n.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/features/history: expected an integer in [1, 3], got 4") != std::string::npos);
}

TEST_CASE(
    "cloth-train: simulate's and upscale's dry runs state the size of what they would write") {
  // For a farm job's disk request: the float32 positions of every frame, as the runs then write
  // them. kSmall: 3 runs of 20 frames of a 9 x 9 curtain, 3 x 20 x 81 x 12 = 58,320 bytes; their
  // miniatures (factor 2) 5 x 5, 18,000 bytes; upscaled from those, the targets' 58,320 again.
  TempDir dir;
  const auto written = [](const std::filesystem::path& file) {
    return datadyn::test::position_bytes(datadyn::io::CacheReader(file));
  };
  const std::string t = (dir / "t.h5").string(), m = (dir / "m.h5").string(),
                    u = (dir / "u.h5").string();
  const std::string mini = " --set simulate_miniature=true";
  struct Case {
    std::string command, output, size;
    std::uintmax_t bytes;
  };
  for (const Case& c :
       {Case{" simulate" + kSmall + " -o " + t, t, "(58.3 kB of frame arrays", 58320},
        Case{" simulate" + kSmall + mini + " -o " + m, m, "(18 kB of frame arrays", 18000},
        Case{" upscale" + kSmall + " --method bilinear -i " + m + " -o " + u, u,
             "(58.3 kB of frame arrays", 58320}}) {
    INFO(c.command);
    const auto dry = run_command(kTool + c.command + " --dry-run");
    REQUIRE(dry.exit_code == 0);
    CHECK(dry.out.find(c.size + " before compression)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(c.output));
    const auto run = run_command(kTool + c.command);
    REQUIRE(run.exit_code == 0);
    CHECK(written(c.output) == c.bytes);
  }
}
