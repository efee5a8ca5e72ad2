// dd-cache check (io::check_cache): every object of the file is read, not only the sequences, so
// damage in a tool's own group (/springs, /model, /features) is found and named.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include <fstream>
#include <limits>
#include <vector>

#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "io/cache_summary.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_library.hpp"
#include "support/h5_poke.hpp"
#include "support/io_error.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::damage_chunk;
using datadyn::test::io_error_message;
using datadyn::test::poke_double_attribute;
using datadyn::test::TempDir;

namespace {

/// A cache with one sequence of 6 frames (and a tool's tank/position [10, 2] in it) and a tool
/// group /springs/ks of 5,000 values.
void write_cache(const std::filesystem::path& path) {
  CacheWriter w(path, {"check_test 0", "check_test", "{}", ""});
  auto& s = w.add_sequence("s", {24.0, 3});
  for (int f = 0; f < 6; ++f) {
    Points3 x(50, 3);
    for (int i = 0; i < 50; ++i) x.row(i) << 0.01 * i, 0.02 * f, std::sin(0.3 * i + f);
    s.append_frame(f, f / 24.0, {{"points/position", view(x)}});
    if (f == 0) s.write_static("rest/position", view(x));
  }
  // A tool's own array in the sequence, as mps-gen's tank walls.
  Points2 tank(10, 2);
  for (int i = 0; i < 10; ++i) tank.row(i) << 0.1 * i, 0.0;
  s.write_static("tank/position", view(tank));
  std::vector<double> ks(5000);
  for (std::size_t i = 0; i < ks.size(); ++i) ks[i] = 100.0 + std::sin(0.01 * double(i));
  w.write_array("/springs/ks", view(ks));
  w.commit();
}

}  // namespace

TEST_CASE("cache check: a good cache passes and reports each sequence") {
  TempDir dir;
  write_cache(dir / "good.h5");
  std::vector<std::string> seen;
  check_cache(dir / "good.h5", [&](const std::string& name, std::size_t frames) {
    seen.push_back(name);
    CHECK(frames == 6);
  });
  CHECK(seen == std::vector<std::string>{"s"});
}

TEST_CASE("cache check: damage outside the sequences is found and named") {
  // The check used to open the sequences only: a damaged spring table (or model, or feature
  // cache) passed, and the tool that read it later failed.
  TempDir dir;
  write_cache(dir / "c.h5");
  damage_chunk(dir / "c.h5", "/springs/ks");
  const std::string m = io_error_message([&] { check_cache(dir / "c.h5", {}); });
  INFO(m);
  CHECK(m.find("c.h5: /springs/ks: cannot read row 0 (") != std::string::npos);
}

TEST_CASE("cache check and reads: a shape larger than what is stored is named before a read") {
  // /springs/ks declared with 2^40 entries and nothing written (a flipped bit in a shape does the
  // same): check read fill values for ever, and a reader ran out of memory naming nothing.
  TempDir dir;
  write_cache(dir / "c.h5");
  const auto replace_ks = [&](bool write_some) {
    const hid_t file = H5Fopen((dir / "c.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    REQUIRE(H5Ldelete(file, "/springs/ks", H5P_DEFAULT) >= 0);
    const hsize_t dims = write_some ? 4096 : hsize_t{1} << 40, max = H5S_UNLIMITED, chunk = 1024;
    const hid_t space = H5Screate_simple(1, &dims, &max);
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(plist, 1, &chunk);
    H5Pset_deflate(plist, 4);
    const hid_t ds =
        H5Dcreate2(file, "/springs/ks", H5T_IEEE_F64LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    if (write_some) {
      // Every chunk written, compressed to far less than its elements; then the shape grows.
      const std::vector<double> values(4096, 1.0);
      REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
      const hsize_t grown = 5000;
      REQUIRE(H5Dset_extent(ds, &grown) >= 0);
    }
    H5Dclose(ds);
    H5Pclose(plist);
    H5Sclose(space);
    H5Fclose(file);
  };
  replace_ks(false);
  const std::string where = (dir / "c.h5").string() + ": /springs/ks: shape ";
  CHECK(io_error_message([&] { check_cache(dir / "c.h5", {}); }) ==
        where +
            "[1099511627776], but no element of it is stored (a damaged shape, or a file cut "
            "short)");
  CHECK(io_error_message([&] {
          (void)CacheReader(dir / "c.h5").read_array<double>("/springs/ks");
        }) == where +
                  "[1099511627776], but no element of it is stored (a damaged shape, or a file cut "
                  "short)");
  replace_ks(true);
  CHECK(io_error_message([&] { check_cache(dir / "c.h5", {}); }) ==
        where + "[5000], but only part of it is stored (a damaged shape, or a file cut short)");
}

TEST_CASE("cache check: a damaged frame chunk and a NaN are found and named") {
  TempDir dir;
  write_cache(dir / "c.h5");
  damage_chunk(dir / "c.h5", "/sequences/s/points/position");
  std::string m = io_error_message([&] { check_cache(dir / "c.h5", {}); });
  INFO(m);
  CHECK(m.find("c.h5: /sequences/s/points/position: cannot read frame 0 (row 0)") !=
        std::string::npos);
  // A later frame of a sequence numbered from 11: the frame as --frames and dd-cache info give
  // it, which every reader names too (a reader said "frame index 2", one less than the row's
  // frame of a sequence numbered from 1, and check the slab's rows 0-5).
  {
    CacheWriter w(dir / "f.h5", {"check_test 0", "check_test", "{}", ""});
    auto& s = w.add_sequence("s", {24.0, 3});
    for (int f = 0; f < 6; ++f) {
      Points3 x(50, 3);
      for (int i = 0; i < 50; ++i) x.row(i) << 0.01 * i, 0.02 * f, std::sin(0.3 * i + f);
      s.append_frame(11 + f, f / 24.0, {{"points/position", view(x)}});
    }
    w.commit();
  }
  damage_chunk(dir / "f.h5", "/sequences/s/points/position", 2);
  m = io_error_message([&] { check_cache(dir / "f.h5", {}); });
  CHECK(m.find("f.h5: /sequences/s/points/position: cannot read frame 13 (row 2) (") !=
        std::string::npos);
  m = io_error_message([&] { (void)CacheReader(dir / "f.h5").sequence("s").positions(2); });
  CHECK(m.find("f.h5: /sequences/s/points/position: frame 13: cannot read") != std::string::npos);

  write_cache(dir / "n.h5");
  datadyn::test::poke_float(dir / "n.h5", "/sequences/s/points/position", 4 * 150 + 7,
                            std::numeric_limits<double>::quiet_NaN());
  m = io_error_message([&] { check_cache(dir / "n.h5", {}); });
  CHECK(m.find("n.h5: /sequences/s/points/position: frame 4 holds NaN or infinity") !=
        std::string::npos);
  // A time and a static array are checked too (the check looked at per-frame arrays only).
  write_cache(dir / "t.h5");
  datadyn::test::poke_float(dir / "t.h5", "/sequences/s/time", 2,
                            std::numeric_limits<double>::quiet_NaN());
  m = io_error_message([&] { check_cache(dir / "t.h5", {}); });
  CHECK(m.find("t.h5: /sequences/s/time: element 2 (frame 2) is nan, expected a finite number") !=
        std::string::npos);
  // So is a tool's own float array in a sequence (mps-gen's tank/position passed).
  write_cache(dir / "k.h5");
  datadyn::test::poke_float(dir / "k.h5", "/sequences/s/tank/position", 7,
                            std::numeric_limits<double>::quiet_NaN());
  m = io_error_message([&] { check_cache(dir / "k.h5", {}); });
  CHECK(m.find("k.h5: /sequences/s/tank/position: row 3 holds NaN or infinity") !=
        std::string::npos);
  write_cache(dir / "r.h5");
  datadyn::test::poke_float(dir / "r.h5", "/sequences/s/rest/position", 4,
                            std::numeric_limits<double>::infinity());
  m = io_error_message([&] { check_cache(dir / "r.h5", {}); });
  CHECK(m.find("r.h5: /sequences/s/rest/position: element 4 is inf") != std::string::npos);
}

TEST_CASE("cache check: empty arrays are written and checked without reading anything") {
  // Zero points in a frame, or an empty static array: nothing to test for finiteness and no
  // rows to read (a division by the zero extent, or a zero-sized hyperslab, must not happen).
  TempDir dir;
  {
    CacheWriter w(dir / "e.h5", {"check_test 0", "check_test", "{}", ""});
    auto& s = w.add_sequence("empty", {24.0, 3});
    const Points3 none(0, 3);
    s.write_static("rest/position", view(none));
    for (int f = 0; f < 3; ++f) s.append_frame(f, f / 24.0, {{"points/position", view(none)}});
    w.write_array("/extra/scalarish", view(std::vector<double>{}));
    w.commit();
  }
  std::size_t frames = 0;
  CHECK_NOTHROW(check_cache(dir / "e.h5", [&](const std::string&, std::size_t n) { frames = n; }));
  CHECK(frames == 3);
}

TEST_CASE("cache info: lists the tools' own groups and a sequence's other arrays") {
  TempDir dir;
  const auto path = dir / "info.h5";
  {
    CacheWriter w(path, {"info_test 0", "info_test", "{}", ""});
    auto& s = w.add_sequence("s", {24.0, 2});
    Points2 x = Points2::Zero(3, 2);
    s.append_frame(1, 0.0, {{"points/position", view(x)}});
    const std::vector<std::int8_t> type{0, 1, 1};
    s.write_static("tank/type", view(type));
    s.set_attribute("note", std::string(300, 'x'));
    Triangles t(1, 3);
    t << 0, 1, 2;
    s.write_static("topology/triangles", view(t));
    FaceVaryingUv uv;
    uv.coordinates = Eigen::Matrix<double, 3, 2, Eigen::RowMajor>::Identity(3, 2);
    uv.corners = t;
    write_face_uv(s, uv);
    const std::vector<double> ks(5, 1.0);
    w.write_array("/springs/ks", view(ks));
    w.set_attribute("/springs", "ks_unit", std::string("1/s^2"));
    w.commit();
  }
  const std::string info = cache_summary(path);
  INFO(info);
  // Before, only the sequences' standard layout was listed: /springs, /model, /features and
  // mps-gen's tank arrays did not appear.
  CHECK(info.find("    tank/type int8 [3]\n") != std::string::npos);
  CHECK(info.find("    topology/triangles [1, 3]\n    uv/coordinates [3, 2]\n"
                  "    uv/triangles [1, 3]\n") != std::string::npos);
  CHECK(info.find("  /springs/ks float64 [5]\n") != std::string::npos);
  CHECK(info.find("  /springs/@ks_unit = \"1/s^2\"\n") != std::string::npos);
  // A long string attribute is cut to its start and length; the provenance is not repeated.
  CHECK(info.find("@note = \"" + std::string(60, 'x') + "...\" (300 bytes)") != std::string::npos);
  CHECK(info.find("@format") == std::string::npos);
}

TEST_CASE("cache info and check: a hard link back to a group above it is followed once") {
  // A link cycle made the walks that follow every link never end (info grew in memory until
  // killed).
  TempDir dir;
  const auto path = dir / "loop.h5";
  write_cache(path);
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    REQUIRE(H5Lcreate_hard(file, "/springs", file, "/springs/loop", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(file);
  }
  const std::string info = cache_summary(path);
  INFO(info);
  CHECK(info.find("  /springs/ks float64 [5000]\n") != std::string::npos);
  CHECK(info.find("  /springs/loop (a link to an object listed above)\n") != std::string::npos);
  CHECK_NOTHROW(check_cache(path));
}

TEST_CASE("crash report: a fault outside the HDF5 library keeps its default action in a read") {
  // report_hdf5_crashes turns a crash inside the HDF5 library into a line naming the file (exit
  // 1; tested in tests/cli). A read scope also spans some of our own code around the calls: a
  // fault there, or a SIGSEGV sent by another process, must still end the process by the
  // signal (a core dump where enabled), not blame the file.
  for (const bool sent : {false, true}) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      report_hdf5_crashes(nullptr);
      const h5::ReadScope reading("x.h5: /");
      if (sent) {
        kill(getpid(), SIGSEGV);
      } else {
        static volatile std::uintptr_t zero = 0;
        *reinterpret_cast<volatile int*>(zero) = 1;
      }
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("sent: " << sent << ", status " << status);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSEGV);
  }
}

TEST_CASE("HDF5 attribute lookup: present, absent, and a lookup that fails") {
  // A lookup HDF5 cannot do must throw naming the object, not read as "absent": absent
  // per_frame made a per-frame array static, and absent format "not a datadyn cache".
  TempDir dir;
  const auto path = dir / "a.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  h5::write_attribute(f, "format", AttributeValue(std::string("x")), "a.h5: /");
  CHECK(h5::attribute_exists(f, "format", "a.h5: /"));
  CHECK_FALSE(h5::attribute_exists(f, "per_frame", "a.h5: /"));
  H5Fclose(f);
  // A closed file's id: HDF5 answers -1, as for an object header it cannot read.
  const std::string m = io_error_message([&] { h5::attribute_exists(f, "format", "a.h5: /"); });
  CHECK(m.find("a.h5: /: attribute format: cannot look it up (damaged file?)") == 0);
}

TEST_CASE("HDF5 link lookup in a group: present, absent, and a lookup that fails") {
  // The merge asks each shard for a child another shard listed; a failed lookup read as "not in
  // this shard" and left its part out of the merged cache.
  TempDir dir;
  const auto path = dir / "g.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  H5Gclose(H5Gcreate2(f, "x", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK(h5::child_exists(f, "x", "g.h5: /x"));
  CHECK_FALSE(h5::child_exists(f, "frame", "g.h5: /frame"));
  H5Fclose(f);
  const std::string m = io_error_message([&] { h5::child_exists(f, "x", "g.h5: /x"); });
  CHECK(m.find("g.h5: /x: cannot look the link up (damaged file?)") == 0);
}

TEST_CASE("HDF5 errors: the driver's failure reads as its reason") {
  // As HDF5 1.10's sec2 driver words a full disk (time stamp with its newline included).
  const std::string full =
      "file write failed: time = Tue Dec  1 02:40:11 2026\n, filename = 'db.h5.tmp-17', file "
      "descriptor = 3, errno = 28, error message = 'No space left on device', buf = "
      "0x560f3a2b1c40, total write size = 4096, bytes this sub-write = 4096, bytes actually "
      "written = 18446744073709551615, offset = 0";
  CHECK(h5::readable_error(full) == "file write failed: No space left on device");
  CHECK(h5::readable_error("unable to open file\n") == "unable to open file");
  CHECK(h5::readable_error("error message = 'x' without a head") ==
        "error message = 'x' without a head");
}

namespace {

void write_grid_cache(const std::filesystem::path& path) {
  GridSpec spec;
  spec.nx = 8;
  spec.ny = 4;
  spec.nz = 2;
  spec.voxel_size = 0.1;
  CacheWriter w(path, {"check_test 0", "check_test", "{}", ""});
  auto& s = w.add_sequence("g", {24.0, 3});
  s.declare_grid("surface", spec);
  std::vector<float> phi(8 * 4 * 2, 0.05f);
  s.append_frame(1, 0.0, {{"grids/surface", view(phi, {2, 4, 8})}});
  w.commit();
}

}  // namespace

TEST_CASE("cache reader: attributes and values the format cannot hold are refused, named") {
  TempDir dir;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  const auto open_message = [&](const std::string& file) {
    return io_error_message(
        [&] { (void)CacheReader(dir / file).sequence(file[0] == 'g' ? "g" : "s"); });
  };
  // An infinite frame rate went into a USDA's timeCodesPerSecond with exit 0.
  write_cache(dir / "r.h5");
  poke_double_attribute(dir / "r.h5", "/sequences/s", "frame_rate", inf);
  std::string m = open_message("r.h5");
  CHECK(m.find("r.h5: /sequences/s: attribute frame_rate: expected a finite number > 0, got inf") !=
        std::string::npos);
  // A NaN time is refused by every reader, not only by the check (spring-fit fit and
  // cloth-train train ran on it).
  write_cache(dir / "t.h5");
  datadyn::test::poke_float(dir / "t.h5", "/sequences/s/time", 2, nan);
  m = open_message("t.h5");
  CHECK(m.find("t.h5: /sequences/s/time: element 2 (frame 2) is nan, expected a finite number") !=
        std::string::npos);
  // A float64 array of another writer holding 1e300: finite as a double, so it reached an OBJ
  // as "v 1e+300 ..." and a fit as an rms error of inf.
  {
    CacheWriter w(dir / "h.h5", {"check_test 0", "check_test", "{}", ""});
    auto& s = w.add_sequence("s", {24.0, 3});
    Points3 x = Points3::Zero(5, 3);
    s.append_frame(1, 0.0, {{"points/position", view(x)}});
    const std::vector<double> mass(5, 1.0);
    s.write_static("points/mass", view(mass));
    w.commit();
  }
  datadyn::test::poke_float(dir / "h.h5", "/sequences/s/points/mass", 3, 1e300);
  m = io_error_message(
      [&] { (void)CacheReader(dir / "h.h5").sequence("s").read_static<double>("points/mass"); });
  CHECK(m.find("h.h5: /sequences/s/points/mass: item 3 is 1e+300, beyond float32's range") !=
        std::string::npos);
  m = io_error_message([&] { check_cache(dir / "h.h5", {}); });
  CHECK(m.find("/sequences/s/points/mass: item 3 is 1e+300") != std::string::npos);
  // A grid's voxel size, band and origin: OpenVDB failed on them with its own words ("Inversion
  // of singular 4x4 matrix"), or wrote a level set with a NaN background.
  const std::string grid = "/sequences/g/grids/surface";
  struct Case {
    const char* attribute;
    double value;
    const char* expected;
  };
  for (const Case& c :
       {Case{"voxel_size", inf, "attribute voxel_size: expected a finite number > 0, got inf"},
        Case{"voxel_size", 0.0, "attribute voxel_size: expected a finite number > 0, got 0"},
        Case{"background", nan,
             "attribute background: expected a finite number > 0 (the band's half width, m), got "
             "nan"},
        Case{"background", -1.0, "got -1"}, Case{"background", 0.0, "got 0"}}) {
    CAPTURE(c.attribute);
    CAPTURE(c.value);
    write_grid_cache(dir / "g.h5");
    poke_double_attribute(dir / "g.h5", grid, c.attribute, c.value);
    m = open_message("g.h5");
    CHECK(m.find("g.h5: " + grid + ": attribute " + c.attribute) != std::string::npos);
    CHECK(m.find(c.expected) != std::string::npos);
  }
  write_grid_cache(dir / "g.h5");
  CHECK_NOTHROW((void)CacheReader(dir / "g.h5").sequence("g"));
}
