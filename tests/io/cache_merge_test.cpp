// The canonical layout of committed caches and the merge of shard outputs (lib/io/cache_merge.hpp):
// the same content gives the same bytes whatever the order of writing, and shards merged equal the
// single run byte for byte.

#include "io/cache_merge.hpp"

#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "core/types.hpp"
#include "io/cache.hpp"
#include "support/file_bytes.hpp"
#include "support/h5_poke.hpp"
#include "support/io_error.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::file_bytes;
using datadyn::test::io_error_message;
using datadyn::test::TempDir;

namespace {

/// Pins created_utc for the duration of a test.
struct FixedClock {
  FixedClock() { setenv("SOURCE_DATE_EPOCH", "1700000000", 1); }
  ~FixedClock() { unsetenv("SOURCE_DATE_EPOCH"); }
};

Points3 points_at(int sequence, int frame, int n) {
  Points3 p(n, 3);
  for (int i = 0; i < n; ++i)
    p.row(i) << 0.01 * i + sequence, std::sin(0.1 * i + 0.05 * frame), -0.5 * i * frame;
  return p;
}

/// What one run of a tool writes: sequences "a" and "b" (frames `first`..`last` of 1..6, points,
/// a static rest pose and triangles), and a per-frame table /table (frame, values [F, 2]) outside
/// /sequences, as sm-example-sim writes its weights. `reverse` writes the same content in another
/// order: sequence b first, frames interleaved differently, statics after the frames.
void write_run(const std::filesystem::path& path, const std::string& command_line, int first,
               int last, bool reverse = false, const std::string& config = "{\"k\":1}") {
  CacheWriter w(path, {"tool 1.0", command_line, config, ""});
  const int n = 40;
  std::vector<std::string> names = {"a", "b"};
  if (reverse) std::swap(names[0], names[1]);
  auto statics = [&](SequenceWriter& s, int id) {
    s.set_attribute("id", std::int64_t{id});
    const Points3 rest = points_at(id, 0, n);
    s.write_static("rest/position", view(rest));
    Triangles tris(n - 2, 3);
    for (int i = 0; i < n - 2; ++i) tris.row(i) << i, i + 1, i + 2;
    s.write_static("topology/triangles", view(tris));
  };
  for (const auto& name : names) {
    auto& s = w.add_sequence(name, {30.0, 3});
    if (!reverse) statics(s, name == "a" ? 0 : 1);
  }
  for (int f = first; f <= last; ++f)
    for (const auto& name : names) {
      const Points3 p = points_at(name == "a" ? 0 : 1, f, n);
      w.sequence(name).append_frame(f, (f - 1) / 30.0, {{"points/position", view(p)}});
    }
  if (reverse)
    for (const auto& name : names) statics(w.sequence(name), name == "a" ? 0 : 1);
  std::vector<std::int64_t> frames;
  std::vector<double> values;
  for (int f = first; f <= last; ++f) {
    frames.push_back(f);
    values.push_back(0.1 * f);
    values.push_back(1.0 - 0.1 * f);
  }
  w.write_array("/table/values", view(values, {frames.size(), 2}));
  w.write_array("/table/frame", view(frames));
  w.set_attribute("/table", "columns", std::vector<std::string>{"x", "y"});
  w.commit();
}

}  // namespace

TEST_CASE("cache: the same content in another order of writing gives the same bytes") {
  FixedClock clock;
  TempDir dir;
  write_run(dir / "one.h5", "tool -o x.h5", 1, 6);
  write_run(dir / "two.h5", "tool -o x.h5", 1, 6, true);
  CHECK(file_bytes(dir / "one.h5") == file_bytes(dir / "two.h5"));
  // A content change shows (the check can fail).
  write_run(dir / "three.h5", "tool -o x.h5", 1, 5);
  CHECK(file_bytes(dir / "one.h5") != file_bytes(dir / "three.h5"));
}

TEST_CASE("cache merge: three shards equal the single run byte for byte") {
  FixedClock clock;
  TempDir dir;
  std::filesystem::create_directories(dir / "single");
  std::filesystem::create_directories(dir / "merged");
  write_run(dir / "single" / "out.h5", "tool -c x.json -o out.h5", 1, 6);
  // Shards of 6 frames into 3: frames 1-2, 3-4, 5-6, each named after its shard.
  for (int k = 1; k <= 3; ++k)
    write_run(
        dir / ("part" + std::to_string(k) + ".h5"),
        "tool -c x.json --shard " + std::to_string(k) + "/3 -o part" + std::to_string(k) + ".h5",
        2 * k - 1, 2 * k, k == 2);
  // The tool gives the single run's command line; here the test strips the shard by hand.
  const auto line = [](const std::string& shard_line) {
    CHECK(shard_line == "tool -c x.json --shard 1/3 -o part1.h5");  // the first input's
    return std::string("tool -c x.json -o out.h5");
  };
  // Inputs in any order: the frame numbers decide.
  const MergeResult r = merge_caches({dir / "part1.h5", dir / "part3.h5", dir / "part2.h5"},
                                     dir / "merged" / "out.h5", line);
  CHECK(r.sequences == 2);
  CHECK(r.frames == 12);
  CHECK(r.split_sequences == 2);
  CHECK(r.gaps.empty());
  CHECK(file_bytes(dir / "merged" / "out.h5") == file_bytes(dir / "single" / "out.h5"));
  CacheReader merged(dir / "merged" / "out.h5");
  CHECK(merged.sequence("b").frames() == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(merged.read_array<double>("/table/values").shape == Shape{6, 2});
  for (const auto& e : std::filesystem::directory_iterator(dir / "merged"))
    CHECK(e.path().filename() == "out.h5");  // no temporary file left
}

TEST_CASE("cache merge: shards that overlap or disagree are refused, naming files and dataset") {
  FixedClock clock;
  TempDir dir;
  const auto same = [](const std::string& l) { return l; };
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 3, 6);
  std::string m = io_error_message([&] {
    merge_caches({dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5", same);
  });
  CHECK(m.find("frame 3") != std::string::npos);
  CHECK(m.find("p1.h5") != std::string::npos);
  CHECK(m.find("p2.h5") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));

  write_run(dir / "p3.h5", "tool", 4, 6, false, "{\"k\":2}");
  m = io_error_message([&] { merge_caches({dir / "p1.h5", dir / "p3.h5"}, dir / "m.h5", same); });
  CHECK(m.find("config_json") != std::string::npos);
  // A long config differs at a place named with a little text around it, not both in full.
  std::string big = "{\"scene\":{\"l0\":0.0125,\"pad\":\"" + std::string(300, 'x') + "\"}}";
  write_run(dir / "p4.h5", "tool", 4, 6, false, big);
  big.replace(big.find("0.0125"), 6, "0.0250");
  write_run(dir / "p5.h5", "tool", 1, 3, false, big);
  m = io_error_message([&] { merge_caches({dir / "p4.h5", dir / "p5.h5"}, dir / "m.h5", same); });
  INFO(m);
  CHECK(m.find("attribute config_json differs at character 19 (...{\"scene\":{\"l0\":0.0250,") !=
        std::string::npos);
  CHECK(m.size() < 400);
  // Files of two tools: the generators are compared first.
  {
    CacheWriter w(dir / "other.h5", {"other 1.0", "other", "{\"z\":0}", ""});
    w.commit();
  }
  m = io_error_message([&] {
    merge_caches({dir / "p1.h5", dir / "other.h5"}, dir / "m.h5", same);
  });
  CHECK(m.find("attribute generator = \"other 1.0\" differs from " + (dir / "p1.h5").string() +
               "'s \"tool 1.0\"") != std::string::npos);

  // A damaged input names itself.
  std::ofstream(dir / "bad.h5") << "not a cache";
  m = io_error_message([&] { merge_caches({dir / "p1.h5", dir / "bad.h5"}, dir / "m.h5", same); });
  CHECK(m.find("bad.h5") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
}

TEST_CASE(
    "cache merge: a shard with a damaged chunk or a NaN is refused, naming it and the frame") {
  // The copy moves chunks undecoded: both went into a merged cache that took its name, exit 0.
  FixedClock clock;
  TempDir dir;
  const auto same = [](const std::string& l) { return l; };
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 4, 6);
  datadyn::test::damage_chunk(dir / "p2.h5", "/sequences/b/points/position", 1);
  std::string m = io_error_message([&] {
    merge_caches({dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5", same);
  });
  INFO(m);
  CHECK(m.find((dir / "p2.h5").string() + ": /sequences/b/points/position: cannot read frame 5") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
  write_run(dir / "p2.h5", "tool", 4, 6);
  datadyn::test::poke_float(dir / "p2.h5", "/sequences/a/points/position", 3 * 40 * 2 + 5,
                            std::numeric_limits<double>::quiet_NaN());
  m = io_error_message([&] { merge_caches({dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5", same); });
  CHECK(m.find((dir / "p2.h5").string() +
               ": /sequences/a/points/position: frame 6 holds NaN or infinity") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
  // The sound shards merge.
  write_run(dir / "p2.h5", "tool", 4, 6);
  CHECK_NOTHROW(merge_caches({dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5", same));
}

TEST_CASE("cache merge: static arrays must agree between shards") {
  FixedClock clock;
  TempDir dir;
  write_run(dir / "p1.h5", "tool", 1, 3);
  {
    // Frames 4-6 of a run whose rest pose differs: not a shard of the same run.
    CacheWriter w(dir / "p2.h5", {"tool 1.0", "tool", "{\"k\":1}", ""});
    auto& s = w.add_sequence("a", {30.0, 3});
    s.set_attribute("id", std::int64_t{0});
    Points3 rest = points_at(0, 0, 40);
    rest(7, 1) += 1e-3;
    s.write_static("rest/position", view(rest));
    for (int f = 4; f <= 6; ++f) {
      const Points3 p = points_at(0, f, 40);
      s.append_frame(f, (f - 1) / 30.0, {{"points/position", view(p)}});
    }
    w.commit();
  }
  const std::string m = io_error_message([&] {
    merge_caches({dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5",
                 [](const std::string& l) { return l; });
  });
  CHECK(m.find("/sequences/a/rest/position") != std::string::npos);
  CHECK(m.find("differs") != std::string::npos);
}

TEST_CASE("cache merge: progress counts every per-frame chunk against the inputs' total") {
  // Two shards of sequences a and b, three frames each, one per-frame array (points/position):
  // 12 chunks. The count only grows, ends at the total, and the total never changes.
  FixedClock clock;
  TempDir dir;
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 4, 6);
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  merge_caches(
      {dir / "p1.h5", dir / "p2.h5"}, dir / "m.h5", [](const std::string& l) { return l; },
      [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); });
  REQUIRE(!calls.empty());
  CHECK(calls.back() == std::pair<std::size_t, std::size_t>{12, 12});
  for (std::size_t k = 0; k < calls.size(); ++k) {
    CHECK(calls[k].second == 12);
    if (k > 0) CHECK(calls[k].first >= calls[k - 1].first);
  }
  // Every chunk is a call of its own (between datasets the count repeats).
  std::set<std::size_t> counts;
  for (const auto& c : calls) counts.insert(c.first);
  CHECK(counts.size() == 13);  // 0 to 12
}

TEST_CASE("cache merge: an interruption part way leaves neither the output nor a temporary file") {
  FixedClock clock;
  TempDir dir;
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 4, 6);
  std::filesystem::create_directories(dir / "out");
  int calls = 0;
  const auto stop_at_fifth = [&](std::size_t, std::size_t) {
    if (++calls == 5) throw RunError("interrupted");
  };
  CHECK_THROWS_AS(merge_caches(
                      {dir / "p1.h5", dir / "p2.h5"}, dir / "out" / "m.h5",
                      [](const std::string& l) { return l; }, stop_at_fifth),
                  RunError);
  CHECK(calls == 5);
  CHECK(std::filesystem::is_empty(dir / "out"));
}

TEST_CASE("cache merge: a link cycle or a malformed per_frame mark is named, not followed") {
  // A hard link back to a group above it: the merge copied the loop until killed (2 GB in 15 s).
  FixedClock clock;
  TempDir dir;
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 4, 6);
  {
    const hid_t file = H5Fopen((dir / "p2.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    REQUIRE(H5Lcreate_hard(file, "/table", file, "/table/loop", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(file);
  }
  const auto merge = [&](const std::filesystem::path& second) {
    return io_error_message([&] {
      merge_caches({dir / "p1.h5", second}, dir / "m.h5", [](const std::string& l) { return l; });
    });
  };
  CHECK(merge(dir / "p2.h5") == (dir / "p2.h5").string() +
                                    ": /table/loop: a second link to a group already merged (a "
                                    "link back to a group above it?); a cache links each group "
                                    "once");
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
  // per_frame as a string: "std::get: wrong index for variant", naming nothing. The mark's
  // presence is what the cache reader goes by, and the merge now does the same; the shards'
  // marks then disagree, which names both files.
  write_run(dir / "p3.h5", "tool", 4, 6);
  {
    const hid_t file = H5Fopen((dir / "p3.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    const hid_t ds = H5Dopen2(file, "/sequences/a/points/position", H5P_DEFAULT);
    REQUIRE(H5Adelete(ds, "per_frame") >= 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 1);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(ds, "per_frame", type, space, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Awrite(attr, type, "1") >= 0);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(ds);
    H5Fclose(file);
  }
  CHECK(merge(dir / "p3.h5") ==
        (dir / "p3.h5").string() +
            ": /sequences/a/points/position: attribute per_frame = \"1\" "
            "differs from " +
            (dir / "p1.h5").string() +
            "'s 1 (shards of one run agree on everything but their frames)");
}

TEST_CASE("cache merge: frames missing between shards are reported, not hidden") {
  FixedClock clock;
  TempDir dir;
  // Shard 2 of 3 (frames 3-4) failed: only 1-2 and 5-6 arrive.
  write_run(dir / "p1.h5", "tool", 1, 2);
  write_run(dir / "p3.h5", "tool", 5, 6);
  const MergeResult r = merge_caches({dir / "p1.h5", dir / "p3.h5"}, dir / "m.h5",
                                     [](const std::string& l) { return l; });
  CHECK(r.frames == 8);
  CHECK(r.gaps == std::vector<std::string>{"a: frames 1-2,5-6", "b: frames 1-2,5-6"});
}

TEST_CASE("cache merge: an output that is not a regular file is refused before any work") {
  // The merged file was renamed over whatever was at -o: `dd-cache merge -o /dev/null` replaced
  // the device with a regular file. A directory and a link stand in for the device here.
  FixedClock clock;
  TempDir dir;
  write_run(dir / "p1.h5", "tool", 1, 3);
  write_run(dir / "p2.h5", "tool", 4, 6);
  std::filesystem::create_directories(dir / "adir");
  std::ofstream(dir / "target.txt") << "kept";
  std::filesystem::create_symlink(dir / "target.txt", dir / "link.h5");
  int calls = 0;
  const auto count = [&](std::size_t, std::size_t) { ++calls; };
  for (const char* name : {"adir", "link.h5"}) {
    INFO(name);
    const auto message = io_error_message([&] {
      merge_caches(
          {dir / "p1.h5", dir / "p2.h5"}, dir / name, [](const std::string& l) { return l; },
          count);
    });
    CHECK(message.find("exists and is not a regular file") != std::string::npos);
  }
  CHECK(calls == 0);  // refused before reading anything
  CHECK(std::filesystem::is_directory(dir / "adir"));
  CHECK(std::filesystem::is_symlink(dir / "link.h5"));
  CHECK(std::filesystem::is_empty(dir / "adir"));
  const auto message = io_error_message([&] {
    merge_caches(
        {dir / "p1.h5"}, dir / "nodir" / "m.h5", [](const std::string& l) { return l; }, count);
  });
  CHECK(message.find("directory " + (dir / "nodir").string() + " does not exist") !=
        std::string::npos);
}
