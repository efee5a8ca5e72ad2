// Round trips, streaming, validation and atomicity of the datadyn cache (lib/io/cache.hpp).

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include <hdf5.h>

#include "core/errors.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "support/file_bytes.hpp"
#include "support/io_error.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::io_error_message;
using datadyn::test::TempDir;

namespace {

Provenance test_provenance() {
  return {"cache_test 0", "cache_test --run", "{\"a\":1}", ""};
}

Points3 wave_points(int frame, int n) {
  Points3 p(n, 3);
  for (int i = 0; i < n; ++i) p.row(i) << 0.01 * i, std::sin(0.1 * i + 0.05 * frame), -0.5 * i;
  return p;
}

long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

/// A cache with one 3D sequence "s" of `frames` frames of n points, triangles, a rest pose.
void write_small_cache(const std::filesystem::path& path, int frames, int n) {
  CacheWriter w(path, test_provenance());
  auto& s = w.add_sequence("s", {24.0, 3});
  s.set_attribute("column_height", 0.5);
  const Points3 rest = wave_points(0, n);
  s.write_static("rest/position", view(rest));
  Triangles tris(n - 2, 3);
  for (int i = 0; i < n - 2; ++i) tris.row(i) << i, i + 1, i + 2;
  s.write_static("topology/triangles", view(tris));
  for (int f = 0; f < frames; ++f) {
    const Points3 p = wave_points(f + 1, n);
    s.append_frame(f + 1, f / 24.0, {{"points/position", view(p)}});
  }
  w.commit();
}

}  // namespace

TEST_CASE("cache: sequences, static arrays, topology and attributes round-trip") {
  TempDir dir;
  const auto path = dir / "c.h5";
  const int n = 50, frames = 7;
  write_small_cache(path, frames, n);

  CacheReader r(path);
  CHECK(r.format_version() == 1);
  CHECK(r.sequence_names() == std::vector<std::string>{"s"});
  const Provenance p = r.provenance();
  CHECK(p.generator == "cache_test 0");
  CHECK(p.command_line == "cache_test --run");
  CHECK(p.config_json == "{\"a\":1}");
  CHECK(p.created_utc.size() == 20);  // YYYY-MM-DDTHH:MM:SSZ

  SequenceReader s = r.sequence("s");
  CHECK(s.frame_count() == frames);
  CHECK(s.point_count() == n);
  CHECK(s.dimension() == 3);
  CHECK(s.frame_rate() == 24.0);
  CHECK(s.frames().front() == 1);
  CHECK(s.frames().back() == frames);
  CHECK(s.times()[3] == doctest::Approx(3 / 24.0));
  CHECK(s.frame_index(4) == std::optional<std::size_t>(3));
  CHECK_FALSE(s.frame_index(100).has_value());
  CHECK(std::get<double>(s.attributes().at("column_height")) == 0.5);
  CHECK(s.shape("points/position") == Shape{frames, n, 3});
  CHECK(s.is_per_frame("points/position"));

  for (int f = 0; f < frames; ++f) {
    const auto got = s.positions(static_cast<std::size_t>(f));
    const Points3 want = wave_points(f + 1, n);
    // Stored as float32: relative rounding 2^-24 ~ 6e-8 on values of order 1.
    CHECK((got - want).cwiseAbs().maxCoeff() < 1e-6);
  }
  const auto tris = s.topology("triangles");
  CHECK(tris.rows() == n - 2);
  CHECK(tris(5, 2) == 7);
  const auto rest = s.read_static<double>("rest/position");
  CHECK(rest.shape == Shape{n, 3});
}

TEST_CASE("cache: every element type and attribute type round-trips exactly") {
  TempDir dir;
  const auto path = dir / "types.h5";
  std::vector<std::int8_t> i8{-128, 0, 127};
  std::vector<std::uint8_t> u8{0, 200, 255};
  std::vector<std::int32_t> i32{-2147483647, 0, 7};
  std::vector<std::int64_t> i64{-(std::int64_t{1} << 62), 0, 42};
  std::vector<float> f32{1.5f, -0.25f, 3.0e-38f};
  std::vector<double> f64{1e-300, -2.5, 1e300};
  {
    CacheWriter w(path, test_provenance());
    w.write_array("/extra/i8", view(i8));
    w.write_array("/extra/u8", view(u8));
    w.write_array("/extra/i32", view(i32));
    w.write_array("/extra/i64", view(i64));
    w.write_array("/extra/f32", view(f32));
    w.write_array("/extra/f64", view(f64, {3, 1}));
    w.set_attribute("/extra", "int", std::int64_t{-3});
    w.set_attribute("/extra", "real", 2.75);
    w.set_attribute("/extra", "text", std::string("ünïcode ok"));
    w.set_attribute("/extra", "ints", std::vector<std::int64_t>{1, 2, 3});
    w.set_attribute("/extra", "reals", std::vector<double>{0.5, 1.5});
    w.set_attribute("/extra", "texts", std::vector<std::string>{"a", "", "ccc"});
    w.commit();
  }
  CacheReader r(path);
  CHECK(r.read_array<std::int8_t>("/extra/i8").data == i8);
  CHECK(r.read_array<std::uint8_t>("/extra/u8").data == u8);
  CHECK(r.read_array<std::int32_t>("/extra/i32").data == i32);
  CHECK(r.read_array<std::int64_t>("/extra/i64").data == i64);
  CHECK(r.read_array<float>("/extra/f32").data == f32);
  const auto d = r.read_array<double>("/extra/f64");
  CHECK(d.data == f64);
  CHECK(d.shape == Shape{3, 1});
  const Attributes a = r.attributes("/extra");
  CHECK(std::get<std::int64_t>(a.at("int")) == -3);
  CHECK(std::get<double>(a.at("real")) == 2.75);
  CHECK(std::get<std::string>(a.at("text")) == "ünïcode ok");
  CHECK(std::get<std::vector<std::int64_t>>(a.at("ints")) == std::vector<std::int64_t>{1, 2, 3});
  CHECK(std::get<std::vector<double>>(a.at("reals")) == std::vector<double>{0.5, 1.5});
  CHECK(std::get<std::vector<std::string>>(a.at("texts")) ==
        std::vector<std::string>{"a", "", "ccc"});
}

TEST_CASE("cache: per-frame point attributes, 2D sequences and static point arrays") {
  TempDir dir;
  const auto path = dir / "p.h5";
  const int n = 10;
  {
    CacheWriter w(path, test_provenance());
    auto& s = w.add_sequence("dam", {100.0, 2});
    std::vector<std::int8_t> type(n, 0);
    type[0] = 2;
    s.write_static("points/type", view(type));
    s.declare_frame_array("points/pressure", ElementType::Float64, {n});
    for (int f = 0; f < 3; ++f) {
      Points2 p = Points2::Constant(n, 2, f * 0.5);
      Eigen::VectorXd pr = Eigen::VectorXd::LinSpaced(n, 0.0, 1.0 + f);
      s.append_frame(f, f * 0.01, {{"points/position", view(p)}, {"points/pressure", view(pr)}});
    }
    w.commit();
  }
  CacheReader r(path);
  auto s = r.sequence("dam");
  CHECK(s.dimension() == 2);
  CHECK(s.shape("points/position") == Shape{3, n, 2});
  CHECK_FALSE(s.is_per_frame("points/type"));
  CHECK(s.read_static<std::int32_t>("points/type").data[0] == 2);
  const auto pr = s.read_frame<double>("points/pressure", 2);
  CHECK(pr.shape == Shape{n});
  CHECK(pr.data.back() == 3.0);  // declared float64: exact
  CHECK(s.positions(1)(4, 1) == 0.5);
  CHECK_THROWS_AS(s.read_frame<double>("points/pressure", 3), IoError);
}

TEST_CASE("cache: level-set grids carry their spec and are clamped to the band") {
  TempDir dir;
  const auto path = dir / "g.h5";
  GridSpec spec;
  spec.nx = 8;
  spec.ny = 4;
  spec.nz = 2;
  spec.origin = {1.0, 2.0, 3.0};
  spec.voxel_size = 0.1;
  spec.background = 3.0;
  {
    CacheWriter w(path, test_provenance());
    auto& s = w.add_sequence("surface", {30.0, 3});
    s.declare_grid("surface", spec);
    std::vector<float> phi(8 * 4 * 2);
    for (std::size_t i = 0; i < phi.size(); ++i) phi[i] = static_cast<float>(i) * 0.1f - 2.0f;
    s.append_frame(1, 0.0, {{"grids/surface", view(phi, {2, 4, 8})}});
    w.commit();
  }
  CacheReader r(path);
  auto s = r.sequence("surface");
  const GridSpec g = s.grid_spec("surface");
  CHECK(g.nx == 8);
  CHECK(g.nz == 2);
  CHECK(g.origin.y() == 2.0);
  CHECK(g.voxel_size == 0.1);
  CHECK(g.grid_class == GridClass::LevelSet);
  CHECK(g.background == doctest::Approx(3.0));
  const auto phi = s.read_frame<float>("grids/surface", 0);
  CHECK(phi.shape == Shape{2, 4, 8});
  // Values below -0.3 and above 0.3 (3 voxels of 0.1) are clamped.
  CHECK(phi.data.front() == doctest::Approx(-0.3f));
  CHECK(phi.data.back() == doctest::Approx(0.3f));
  CHECK(phi.data[20] == doctest::Approx(0.0f).epsilon(1e-6));
}

TEST_CASE("cache: finished sequences hold no memory, and take no more writes") {
  // An open sequence held about 80 kB of HDF5 objects to the end: cloth-train simulate of 10,000
  // runs held 800 MB. Finished, 1,000 sequences were measured to add under 1 MB.
  TempDir dir;
  long rss_after_200 = 0, rss_after_1000 = 0;
  CacheWriter w(dir / "many.h5", test_provenance());
  const Points3 p = wave_points(1, 25);
  for (int k = 0; k < 1000; ++k) {
    auto& s = w.add_sequence("s" + std::to_string(k), {30.0, 3});
    s.write_static("rest/position", view(p));
    for (int f = 1; f <= 2; ++f) s.append_frame(f, f / 30.0, {{"points/position", view(p)}});
    s.finish();
    if (k == 199) rss_after_200 = resident_kib();
  }
  rss_after_1000 = resident_kib();
  MESSAGE("RSS after 200 sequences " << rss_after_200 << " KiB, after 1000 " << rss_after_1000
                                     << " KiB");
  // Open, the 800 more would add about 60 MB; 10 MB is allocator slack.
  CHECK(rss_after_1000 - rss_after_200 < 10 * 1024);
  CHECK_THROWS_WITH_AS(
      w.sequence("s3").append_frame(3, 0.1, {{"points/position", view(p)}}),
      doctest::Contains("/sequences/s3/frame: written after the sequence was finished"), IoError);
  w.commit();
  CHECK(CacheReader(dir / "many.h5").sequence("s999").frame_count() == 2);
}

TEST_CASE("cache: a 1,000-frame sequence streams with flat memory") {
  TempDir dir;
  const auto path = dir / "long.h5";
  const int n = 20000;  // 240 KB per frame as float32: 240 MB over 1,000 frames
  long rss_after_100 = 0, rss_after_1000 = 0;
  {
    CacheWriter w(path, test_provenance(), WriteOptions{1});
    auto& s = w.add_sequence("long", {24.0, 3});
    for (int f = 0; f < 1000; ++f) {
      const Points3 p = wave_points(f, n);
      s.append_frame(f, f / 24.0, {{"points/position", view(p)}});
      if (f == 99) rss_after_100 = resident_kib();
    }
    rss_after_1000 = resident_kib();
    w.commit();
  }
  MESSAGE("RSS after 100 frames " << rss_after_100 << " KiB, after 1000 " << rss_after_1000
                                  << " KiB");
  // Keeping the frames would add ~210 MB; HDF5's chunk cache is bounded at 1 MiB per dataset.
  // 16 MiB of slack covers allocator noise.
  CHECK(rss_after_1000 - rss_after_100 < 16 * 1024);

  CacheReader r(path);
  auto s = r.sequence("long");
  CHECK(s.frame_count() == 1000);
  long rss_read_start = resident_kib();
  double checksum = 0;
  for (std::size_t f = 0; f < 1000; ++f)
    checksum += s.read_frame<float>("points/position", f).data[3 * 7 + 1];
  long rss_read_end = resident_kib();
  MESSAGE("reading: RSS " << rss_read_start << " -> " << rss_read_end << " KiB");
  CHECK(rss_read_end - rss_read_start < 16 * 1024);
  double want = 0;
  for (int f = 0; f < 1000; ++f) want += static_cast<float>(std::sin(0.1 * 7 + 0.05 * f));
  CHECK(checksum == doctest::Approx(want).epsilon(1e-9));
}

TEST_CASE("cache: a writer that throws or is destroyed without commit leaves no file") {
  TempDir dir;
  const auto path = dir / "never.h5";
  std::filesystem::path tmp;
  try {
    CacheWriter w(path, test_provenance());
    tmp = w.temporary_path();
    auto& s = w.add_sequence("s", {24.0, 3});
    const Points3 p = wave_points(0, 5);
    s.append_frame(1, 0.0, {{"points/position", view(p)}});
    CHECK(std::filesystem::exists(tmp));
    throw std::runtime_error("simulated failure");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(tmp));
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("cache: a failed run does not replace an existing file") {
  TempDir dir;
  const auto path = dir / "keep.h5";
  write_small_cache(path, 3, 10);
  const auto size = std::filesystem::file_size(path);
  {
    CacheWriter w(path, test_provenance());
    w.add_sequence("other", {24.0, 3});
    // no commit
  }
  CacheReader r(path);
  CHECK(r.sequence_names() == std::vector<std::string>{"s"});
  CHECK(std::filesystem::file_size(path) == size);
}

TEST_CASE("cache: a frame with a wrong shape is rejected and the sequence stays whole") {
  TempDir dir;
  const auto path = dir / "roll.h5";
  CacheWriter w(path, test_provenance());
  auto& s = w.add_sequence("s", {24.0, 3});
  s.declare_frame_array("points/velocity", ElementType::Float32, {4, 3});
  const Points3 p = wave_points(0, 4);
  s.append_frame(1, 0.0, {{"points/position", view(p)}, {"points/velocity", view(p)}});
  const Points3 bad = wave_points(0, 5);
  CHECK_THROWS_WITH_AS(
      s.append_frame(2, 0.1, {{"points/position", view(p)}, {"points/velocity", view(bad)}}),
      doctest::Contains("/sequences/s/points/velocity: frame 2: expected shape [4, 3], got [5, 3]"),
      IoError);
  CHECK_THROWS_WITH_AS(s.append_frame(2, 0.1, {{"points/position", view(p)}}),
                       doctest::Contains("missing from frame 2"), IoError);
  CHECK_THROWS_WITH_AS(s.append_frame(1, 0.1, {{"points/position", view(p)}}),
                       doctest::Contains("frame numbers must increase"), IoError);
  CHECK(s.frame_count() == 1);
  s.append_frame(2, 0.1, {{"points/position", view(p)}, {"points/velocity", view(p)}});
  w.commit();
  CacheReader r(path);
  auto seq = r.sequence("s");
  CHECK(seq.frame_count() == 2);
  CHECK(seq.shape("points/velocity") == Shape{2, 4, 3});
}

TEST_CASE("cache: a non-finite value is refused with its frame and item, and earlier frames stay") {
  // Caches store float32: NaN, inf and doubles beyond 3.4e38 (which would land as inf) are a
  // diverged run, refused before they reach a file a renderer or a fit would read.
  TempDir dir;
  const auto path = dir / "nan.h5";
  CacheWriter w(path, test_provenance());
  auto& s = w.add_sequence("s", {24.0, 3});
  const Points3 p = wave_points(0, 4);
  Points3 rest = p;
  rest(2, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(s.write_static("rest/position", view(rest)),
                       doctest::Contains("nan.h5: /sequences/s/rest/position: item 2 is inf"),
                       RunError);
  s.append_frame(1, 0.0, {{"points/position", view(p)}});
  Points3 bad = p;
  bad(3, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(s.append_frame(2, 0.1, {{"points/position", view(bad)}}),
                       doctest::Contains("/sequences/s/points/position: frame 2: item 3 is nan"),
                       RunError);
  bad(3, 0) = 1e300;
  CHECK_THROWS_WITH_AS(s.append_frame(2, 0.1, {{"points/position", view(bad)}}),
                       doctest::Contains("item 3 is 1e+300 (beyond float32)"), RunError);
  // 3e38 fits float32: refused only what the file cannot hold.
  bad(3, 0) = 3e38;
  s.append_frame(2, 0.1, {{"points/position", view(bad)}});
  GridSpec huge;
  huge.nx = huge.ny = huge.nz = 4;
  huge.voxel_size = 1e-3;
  huge.background = 1e300;
  CHECK_THROWS_WITH_AS(s.declare_grid("phi", huge),
                       doctest::Contains("the band (background x voxel_size) and every sample's "
                                         "position finite in float32"),
                       IoError);
  GridSpec far;
  far.nx = far.ny = far.nz = 4;
  far.origin = {0, 0, 1e300};
  CHECK_THROWS_AS(s.declare_grid("far", far), IoError);
  w.commit();
  CacheReader r(path);
  CHECK(r.sequence("s").frame_count() == 2);
  CHECK(r.sequence("s").positions(1)(3, 0) == doctest::Approx(3e38).epsilon(1e-6));
}

TEST_CASE("cache: writer rejects what breaks the layout") {
  TempDir dir;
  CacheWriter w(dir / "bad.h5", test_provenance());
  CHECK_THROWS_AS(w.add_sequence("a/b", {24.0, 3}), IoError);
  CHECK_THROWS_AS(w.add_sequence("x", {0.0, 3}), IoError);
  CHECK_THROWS_AS(w.add_sequence("x", {24.0, 4}), IoError);
  auto& s = w.add_sequence("s", {24.0, 3});
  CHECK_THROWS_AS(w.add_sequence("s", {24.0, 3}), IoError);
  Points2 flat = Points2::Zero(4, 2);
  CHECK_THROWS_WITH_AS(s.write_static("rest/position", view(flat)),
                       doctest::Contains("expected float [N, 3], got float64 [4, 2]"), IoError);
  const Points3 p = wave_points(0, 4);
  s.write_static("rest/position", view(p));
  Triangles t(1, 3);
  t << 0, 1, 9;
  CHECK_THROWS_WITH_AS(s.write_static("topology/triangles", view(t)), doctest::Contains("index 9"),
                       IoError);
  const Points3 p5 = wave_points(0, 5);
  CHECK_THROWS_WITH_AS(s.append_frame(0, 0.0, {{"points/position", view(p5)}}),
                       doctest::Contains("expected 4 points"), IoError);
  CHECK_THROWS_AS(w.write_array("/sequences/s/x", view(p)), IoError);
}

TEST_CASE("cache: face-varying texture coordinates round-trip and are checked on both sides") {
  TempDir dir;
  const auto path = dir / "uv.h5";
  // Two triangles sharing the edge 1-2, each with its own coordinates there (a seam).
  const Points3 x = wave_points(0, 4);
  Triangles tris(2, 3);
  tris << 0, 1, 2, 2, 1, 3;
  FaceVaryingUv uv;
  uv.coordinates.resize(6, 2);
  uv.coordinates << 0, 0, 0.5, 0, 0, 1, 0.6, 1, 0.6, 0, 1, 1.0 / 3;
  uv.corners.resize(2, 3);
  uv.corners << 0, 1, 2, 3, 4, 5;
  {
    CacheWriter w(path, test_provenance());
    auto& s = w.add_sequence("s", {24.0, 3});
    // Before the faces they index: refused, naming what is missing.
    CHECK_THROWS_WITH_AS(s.write_static("uv/triangles", view(uv.corners)),
                         doctest::Contains("uv/triangles: write uv/coordinates and "
                                           "topology/triangles first"),
                         IoError);
    s.write_static("topology/triangles", view(tris));
    const Points3 xyz = wave_points(0, 2);
    CHECK_THROWS_WITH_AS(s.write_static("uv/coordinates", view(xyz)),
                         doctest::Contains("expected float [M, 2], got float64 [2, 3]"), IoError);
    s.write_static("uv/coordinates", view(uv.coordinates));
    Triangles one = tris.topRows(1);
    CHECK_THROWS_WITH_AS(s.write_static("uv/triangles", view(one)),
                         doctest::Contains("expected int32 [2, 3] (one row per face of "
                                           "topology/triangles), got int32 [1, 3]"),
                         IoError);
    Triangles far = uv.corners;
    far(1, 2) = 6;
    CHECK_THROWS_WITH_AS(s.write_static("uv/triangles", view(far)),
                         doctest::Contains("index 6 at element 5 is outside [0, 6)"), IoError);
    CHECK_THROWS_WITH_AS(s.write_static("uv/normals", view(xyz)),
                         doctest::Contains("expected uv/coordinates, uv/triangles or uv/quads"),
                         IoError);
    s.write_static("uv/triangles", view(uv.corners));
    s.append_frame(1, 0.0, {{"points/position", view(x)}});
    w.commit();
  }
  {
    CacheReader r(path);
    const FaceVaryingUv got = read_face_uv(r.sequence("s"));
    CHECK(got.corners == uv.corners);
    // float32 in the file: 1/3 comes back to within 2^-25.
    CHECK((got.coordinates - uv.coordinates).cwiseAbs().maxCoeff() < 3e-8);
    // A sequence without them reads as empty.
    const auto plain = dir / "plain.h5";
    write_small_cache(plain, 2, 5);
    CHECK(read_face_uv(CacheReader(plain).sequence("s")).empty());
  }
  // Damage written by another program is named by the reader.
  const auto replace = [&](const char* name, const std::vector<std::int32_t>& values,
                           std::vector<hsize_t> dims) {
    const auto bad = dir / (std::string("bad_") + (name + 3) + ".h5");
    std::filesystem::copy_file(path, bad, std::filesystem::copy_options::overwrite_existing);
    hid_t f = H5Fopen(bad.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, (std::string("/sequences/s/") + name).c_str(), H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, dims.data(), nullptr);
    hid_t ds = H5Dcreate2(f, (std::string("/sequences/s/") + name).c_str(), H5T_STD_I32LE, space,
                          H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(f);
    return bad;
  };
  const auto out_of_range = replace("uv/triangles", {0, 1, 2, 3, 4, 9}, {2, 3});
  CHECK(io_error_message([&] { read_face_uv(CacheReader(out_of_range).sequence("s")); })
            .find("bad_triangles.h5: /sequences/s/uv/triangles: index 9 at element 5 outside "
                  "[0, 6) (the rows of uv/coordinates)") != std::string::npos);
  const auto no_faces = replace("uv/quads", {0, 1, 2, 3}, {1, 4});
  CHECK(io_error_message([&] {
          CacheReader(no_faces).sequence("s");
        }).find("bad_quads.h5: /sequences/s/uv/quads: the sequence has no topology/quads") !=
        std::string::npos);
}

TEST_CASE("cache: output directory that does not exist is a clear error") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(CacheWriter(dir / "no/such/dir/c.h5", test_provenance()),
                       doctest::Contains("does not exist"), IoError);
}

TEST_CASE("cache: storage follows docs/cache-format.md (chunks, filters, strings)") {
  // What other readers (h5py, Houdini's HDF5 SOPs, a plain HDF5 build) rely on: a per-frame
  // array is extendible in frames with one frame a chunk, shuffle then deflate at the writer's
  // level and no other filter; time and frame chunked by 1,024 without filters; strings
  // variable-length UTF-8.
  TempDir dir;
  const auto path = dir / "c.h5";
  const int n = 50, frames = 5;
  write_small_cache(path, frames, n);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  struct Layout {
    std::vector<hsize_t> dims, max_dims, chunk;
    std::vector<H5Z_filter_t> filters;
    std::vector<unsigned> deflate_level;
  };
  auto layout = [&](const char* name) {
    Layout l;
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    hid_t space = H5Dget_space(ds);
    const int rank = H5Sget_simple_extent_ndims(space);
    l.dims.resize(rank);
    l.max_dims.resize(rank);
    H5Sget_simple_extent_dims(space, l.dims.data(), l.max_dims.data());
    hid_t dcpl = H5Dget_create_plist(ds);
    if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
      l.chunk.resize(rank);
      H5Pget_chunk(dcpl, rank, l.chunk.data());
    }
    for (int i = 0; i < H5Pget_nfilters(dcpl); ++i) {
      unsigned flags = 0, values[4] = {0, 0, 0, 0};
      std::size_t n_values = 4;
      l.filters.push_back(H5Pget_filter2(dcpl, i, &flags, &n_values, values, 0, nullptr, nullptr));
      if (l.filters.back() == H5Z_FILTER_DEFLATE) l.deflate_level.push_back(values[0]);
    }
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(ds);
    return l;
  };
  const auto N = static_cast<hsize_t>(n);
  const Layout pos = layout("/sequences/s/points/position");
  CHECK(pos.dims == std::vector<hsize_t>{frames, N, 3});
  CHECK(pos.max_dims == std::vector<hsize_t>{H5S_UNLIMITED, N, 3});
  CHECK(pos.chunk == std::vector<hsize_t>{1, N, 3});
  CHECK(pos.filters == std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE});
  CHECK(pos.deflate_level == std::vector<unsigned>{1});
  for (const char* name : {"/sequences/s/time", "/sequences/s/frame"}) {
    INFO(name);
    const Layout l = layout(name);
    CHECK(l.dims == std::vector<hsize_t>{frames});
    CHECK(l.max_dims == std::vector<hsize_t>{H5S_UNLIMITED});
    CHECK(l.chunk == std::vector<hsize_t>{1024});
    CHECK(l.filters.empty());
  }
  for (const char* name : {"format", "generator", "config_json"}) {
    INFO(name);
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    REQUIRE(a >= 0);
    hid_t t = H5Aget_type(a);
    CHECK(H5Tget_class(t) == H5T_STRING);
    CHECK(H5Tis_variable_str(t) > 0);
    CHECK(H5Tget_cset(t) == H5T_CSET_UTF8);
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Fclose(f);
}

TEST_CASE("cache: reader errors name the file and the dataset") {
  TempDir dir;
  const auto good = dir / "good.h5";
  write_small_cache(good, 4, 12);

  SUBCASE("missing file") {
    CHECK(io_error_message([&] { CacheReader r(dir / "nope.h5"); }).find("nope.h5: no such file") !=
          std::string::npos);
  }
  SUBCASE("not a regular file, or not one that can be opened") {
    // A FIFO blocked HDF5's open for ever; a loop of links was "no such file".
    REQUIRE(::mkfifo((dir / "fifo.h5").c_str(), 0600) == 0);
    CHECK(io_error_message([&] { CacheReader r(dir / "fifo.h5"); }) ==
          (dir / "fifo.h5").string() +
              ": not a regular file (a pipe, socket or device): a cache is read from a file");
    CHECK(io_error_message([&] { CacheReader r("/dev/null"); }).find("/dev/null: not a regular") ==
          0);
    std::filesystem::create_symlink(dir / "b.h5", dir / "a.h5");
    std::filesystem::create_symlink(dir / "a.h5", dir / "b.h5");
    CHECK(io_error_message([&] { CacheReader r(dir / "a.h5"); }) ==
          (dir / "a.h5").string() + ": cannot open: a loop of symbolic links");
    CHECK(io_error_message([&] { CacheReader r(dir.path()); }) ==
          dir.path().string() + ": is a directory");
  }
  SUBCASE("not HDF5") {
    std::ofstream(dir / "text.h5") << "hello";
    CHECK(io_error_message([&] {
            CacheReader r(dir / "text.h5");
          }).find("text.h5: not an HDF5 file") != std::string::npos);
  }
  SUBCASE("truncated") {
    const auto cut = dir / "cut.h5";
    std::filesystem::copy_file(good, cut);
    std::filesystem::resize_file(cut, std::filesystem::file_size(good) / 2);
    const std::string m = io_error_message([&] {
      CacheReader r(cut);
      auto s = r.sequence("s");
      for (std::size_t f = 0; f < s.frame_count(); ++f) s.positions(f);
    });
    INFO(m);
    CHECK(m.find("cut.h5") != std::string::npos);
    CHECK(m != "(no IoError)");
  }
  SUBCASE("cut short and padded back with zeros: damaged, never a cache with fewer sequences") {
    // A copy that lost its tail to a full disk and was preallocated to size: the superblock
    // opens, but the groups' metadata are zeros. Listing the sequences must fail, naming the
    // file, rather than answer "none" (which the tools reported as "the cache has no sequence").
    const auto size = std::filesystem::file_size(good);
    int damaged = 0;
    for (int eighth = 1; eighth < 8; ++eighth) {
      const auto pad = dir / "pad.h5";
      std::filesystem::copy_file(good, pad, std::filesystem::copy_options::overwrite_existing);
      std::filesystem::resize_file(pad, size * static_cast<unsigned>(eighth) / 8);
      std::filesystem::resize_file(pad, size);
      std::vector<std::string> names;
      const std::string m = io_error_message([&] {
        CacheReader r(pad);
        names = r.sequence_names();
      });
      INFO("cut at ", eighth, "/8: ", m);
      if (m == "(no IoError)") {
        CHECK(names == std::vector<std::string>{"s"});
      } else {
        ++damaged;
        CHECK(m.find("pad.h5") != std::string::npos);
      }
    }
    CHECK(damaged > 0);  // the metadata sit within the file's first 7/8
  }
  SUBCASE("wrong format name") {
    const auto other = dir / "other.h5";
    hid_t f = H5Fcreate(other.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 5);
    hid_t a = H5Acreate2(f, "format", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, "other");
    H5Aclose(a);
    H5Tclose(type);
    H5Sclose(space);
    H5Fclose(f);
    const std::string m = io_error_message([&] { CacheReader r(other); });
    CHECK(m.find("other.h5: /: attribute format: expected \"datadyn-cache\", got \"other\"") !=
          std::string::npos);
  }
  SUBCASE("wrong shape") {
    // Rewrite the sequence's time with one entry too many: position's F no longer matches.
    const auto bad = dir / "shape.h5";
    std::filesystem::copy_file(good, bad);
    hid_t f = H5Fopen(bad.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/sequences/s/time", H5P_DEFAULT);
    hsize_t dims[1] = {5};
    hid_t space = H5Screate_simple(1, dims, nullptr);
    hid_t ds = H5Dcreate2(f, "/sequences/s/time", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    double t[5] = {0, 1, 2, 3, 4};
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t);
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(f);
    CacheReader r(bad);
    const std::string m = io_error_message([&] { r.sequence("s"); });
    INFO(m);
    CHECK(m.find("shape.h5: /sequences/s/frame: expected int64 [5]") != std::string::npos);
  }
  SUBCASE("a link that cannot be followed") {
    // A soft link in a loop, an external link to a missing file: "expected a dataset, got a
    // group or other object".
    const auto soft = dir / "soft.h5", external = dir / "external.h5";
    std::filesystem::copy_file(good, soft);
    std::filesystem::copy_file(good, external);
    hid_t f = H5Fopen(soft.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/sequences/s/rest/position", H5P_DEFAULT);
    H5Lcreate_soft("/sequences/s/rest/position", f, "/sequences/s/rest/position", H5P_DEFAULT,
                   H5P_DEFAULT);
    H5Fclose(f);
    f = H5Fopen(external.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/sequences/s/topology/triangles", H5P_DEFAULT);
    H5Lcreate_external("gone.h5", "/x", f, "/sequences/s/topology/triangles", H5P_DEFAULT,
                       H5P_DEFAULT);
    H5Fclose(f);
    CHECK(io_error_message([&] {
            (void)CacheReader(soft).sequence("s").read_static<float>("rest/position");
          }) == soft.string() +
                    ": /sequences/s/rest/position: a soft link that cannot be "
                    "followed (a loop, or a missing target)");
    CHECK(io_error_message([&] {
            (void)CacheReader(external).sequence("s").topology("triangles");
          }) == external.string() +
                    ": /sequences/s/topology/triangles: an external link that "
                    "cannot be followed (a loop, or a missing target)");
  }
  SUBCASE("unknown sequence") {
    CacheReader r(good);
    CHECK(io_error_message([&] {
            r.sequence("nope");
          }).find("no such sequence (the cache has: s)") != std::string::npos);
  }
}

TEST_CASE("cache: the same inputs give the same bytes (SOURCE_DATE_EPOCH pins created_utc)") {
  TempDir dir;
  setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  write_small_cache(dir / "a.h5", 5, 30);
  write_small_cache(dir / "b.h5", 5, 30);
  unsetenv("SOURCE_DATE_EPOCH");
  const auto bytes = datadyn::test::file_bytes;
  const std::string a = bytes(dir / "a.h5"), b = bytes(dir / "b.h5");
  CHECK(a.size() == b.size());
  CHECK(a == b);
  CHECK(CacheReader(dir / "a.h5").provenance().created_utc == "2023-11-14T22:13:20Z");
}

TEST_CASE("cache: attributes print as the shortest text that reads back the same") {
  CHECK(attribute_string(0.32) == "0.32");                      // not 0.32000000000000001
  CHECK(attribute_string(0.1 + 0.2) == "0.30000000000000004");  // a different double: all digits
  CHECK(attribute_string(std::vector<double>{0.025, 1e-300, -2.5}) == "[0.025, 1e-300, -2.5]");
  CHECK(attribute_string(std::int64_t{-7}) == "-7");
  CHECK(attribute_string(std::vector<std::string>{"a", "b"}) == "[\"a\", \"b\"]");
  for (const double v : {0.32, 1.0 / 3.0, 6.02214076e23, -1e-310})
    CHECK(std::strtod(attribute_string(v).c_str(), nullptr) == v);
}

TEST_CASE("cache: a file that cannot be created is named with the system's reason") {
  // /proc exists but takes no new files: the directory check passes and the create fails.
  const std::string m = io_error_message([] { CacheWriter w("/proc/x.h5", test_provenance()); });
  CHECK(m.rfind("/proc/x.h5: cannot create /proc/x.h5.tmp-", 0) == 0);
  CHECK(m.find(": No such file or directory") != std::string::npos);
  CHECK(m.find("o_flags") == std::string::npos);  // not HDF5's error stack
}
