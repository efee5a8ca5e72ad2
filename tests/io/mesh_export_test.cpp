// mesh-export's orchestration (io::export_cache) on a cache with closed-form content
// (tests/support/export_caches.hpp): every format read back by an independent reader, sources
// (meshes, tetrahedra, particles, 2D particles, level-set grids), and bad input that must fail
// before any file is written.

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <regex>
#include <set>

#include "core/errors.hpp"
#include "core/mesh_topology.hpp"
#include "io/mesh_export.hpp"
#include "support/export_caches.hpp"
#include "support/format_readers.hpp"
#include "support/h5_poke.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::TempDir;

namespace {

const Provenance kProvenance{"mesh-export 0.1.0", "mesh-export -i in.h5", "{\"format\":\"obj\"}",
                             ""};

struct Fixture {
  TempDir dir;
  std::filesystem::path cache = dir / "in.h5";
  Fixture() { test::write_export_cache(cache, 4); }
  MeshExportParams params(const std::string& output, const std::string& sequence) const {
    MeshExportParams p;
    p.input = cache;
    p.output = dir / output;
    if (!sequence.empty()) p.sequences = {sequence};
    return p;
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().filename() != "in.h5") out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

// Positions are float32 in the cache; text formats write them exactly, binary ones as float32.
// 1e-6 m is our tolerance for round trips; the values here are below 1 m, where float32 steps are
// 6e-8.
constexpr double kTol = 1e-6;

double signed_volume(const std::vector<Eigen::Vector3d>& v,
                     const std::vector<std::vector<int>>& f) {
  double vol = 0;
  for (const auto& face : f)
    for (std::size_t k = 1; k + 1 < face.size(); ++k)
      vol += v[face[0]].dot(v[face[k]].cross(v[face[k + 1]])) / 6.0;
  return vol;
}

}  // namespace

TEST_CASE("export: an OBJ sequence keeps positions (1e-6), vertex order, faces and provenance") {
  Fixture fx;
  const auto r = export_cache(fx.params("cloth.####.obj", "cloth"), kProvenance);
  CHECK(r.frames == 4);
  CHECK(fx.files() == std::vector<std::string>{"cloth.0001.obj", "cloth.0002.obj", "cloth.0003.obj",
                                               "cloth.0004.obj"});
  const Triangles tris = test::cloth_triangles();
  for (int f = 1; f <= 4; ++f) {
    const auto obj = test::read_obj(fx.dir / ("cloth.000" + std::to_string(f) + ".obj"));
    REQUIRE(obj.v.size() == test::kClothNx * test::kClothNz);
    for (std::size_t i = 0; i < obj.v.size(); ++i)
      CHECK((obj.v[i] - test::cloth_position(static_cast<int>(i), f)).cwiseAbs().maxCoeff() <=
            kTol);
    REQUIRE(obj.f.size() == static_cast<std::size_t>(tris.rows()));
    CHECK(obj.f[5] == std::vector<int>{tris(5, 0), tris(5, 1), tris(5, 2)});
    // The cache's texture coordinates, one per vertex and in its order (exact: the shortest text
    // of a float32 reads back to it).
    REQUIRE(obj.vt.size() == obj.v.size());
    for (std::size_t i = 0; i < obj.vt.size(); ++i)
      CHECK(obj.vt[i].cast<float>() == test::cloth_uv(static_cast<int>(i)));
    CHECK(obj.ft == obj.f);
    CHECK(obj.comments.at(0) == "generator: mesh-export 0.1.0");
    CHECK(obj.comments.at(2) == "config: {\"format\":\"obj\"}");
    CHECK(obj.comments.at(3).find("/sequences/cloth frame " + std::to_string(f)) !=
          std::string::npos);
  }
}

TEST_CASE("export: PLY carries per-vertex attributes and a colour map of one of them") {
  Fixture fx;
  auto p = fx.params("cloth.####.ply", "cloth");
  p.attributes = {"stiffness", "velocity"};
  p.color.attribute = "stiffness";
  p.frames = {2, 3};
  export_cache(p, kProvenance);
  CHECK(fx.files() == std::vector<std::string>{"cloth.0002.ply", "cloth.0003.ply"});
  const auto ply = test::read_ply(fx.dir / "cloth.0003.ply");
  CHECK(ply.vertex_properties == std::vector<std::string>{"x", "y", "z", "nx", "ny", "nz", "s", "t",
                                                          "stiffness", "velocity_0", "velocity_1",
                                                          "velocity_2", "red", "green", "blue"});
  for (std::size_t i = 0; i < ply.vertex_count; ++i) {
    const Eigen::Vector3d x = test::cloth_position(static_cast<int>(i), 3);
    CHECK(std::abs(ply.vertex.at("x")[i] - x.x()) <= kTol);
    CHECK(std::abs(ply.vertex.at("y")[i] - x.y()) <= kTol);
    CHECK(ply.vertex.at("stiffness")[i] == 100.0 + 10.0 * static_cast<double>(i));
    CHECK(ply.vertex.at("velocity_1")[i] == 1.5);  // 0.5 * frame
    CHECK(ply.vertex.at("s")[i] == test::cloth_uv(static_cast<int>(i))[0]);
    CHECK(ply.vertex.at("t")[i] == test::cloth_uv(static_cast<int>(i))[1]);
  }
  // The colour range is the first exported frame's: the stiffest vertex is at the ramp's end.
  CHECK(ply.vertex.at("red").back() == 253);
  CHECK(ply.vertex.at("blue").front() == 84);
  CHECK(ply.comments.at(0) == "generator: mesh-export 0.1.0");
}

TEST_CASE("export: PC2 and MDD point caches with the frame-1 mesh") {
  Fixture fx;
  export_cache(fx.params("cloth.pc2", "cloth"), kProvenance);
  export_cache(fx.params("anim.mdd", "cloth"), kProvenance);
  CHECK(fx.files() == std::vector<std::string>{"anim.mdd", "anim.obj", "cloth.obj", "cloth.pc2"});
  const auto pc2 = test::read_pc2(fx.dir / "cloth.pc2");
  const auto mdd = test::read_mdd(fx.dir / "anim.mdd");
  CHECK(pc2.frames == 4);
  CHECK(pc2.start == 1.0f);
  CHECK(pc2.rate == 1.0f);
  CHECK(mdd.times.at(3) == doctest::Approx(3 / 24.0));
  for (int f = 0; f < 4; ++f)
    for (int i = 0; i < test::kClothNx * test::kClothNz; ++i) {
      const Eigen::Vector3d x = test::cloth_position(i, f + 1);
      CHECK((pc2.x[f][i] - x).cwiseAbs().maxCoeff() <= kTol);
      CHECK((mdd.x[f][i] - x).cwiseAbs().maxCoeff() <= kTol);
    }
  const auto mesh = test::read_obj(fx.dir / "cloth.obj");
  CHECK(mesh.v.size() == static_cast<std::size_t>(pc2.points));
  CHECK(mesh.vt.size() == mesh.v.size());  // the mesh a DCC tool textures carries the UVs
  CHECK(mesh.vt[7].cast<float>() == test::cloth_uv(7));
  CHECK((mesh.v[7] - test::cloth_position(7, 1)).cwiseAbs().maxCoeff() <= kTol);

  // Every 2nd frame: the PC2 sample rate says so; uneven frames cannot be a PC2.
  auto p = fx.params("every2.pc2", "cloth");
  p.frames = {1, 3};
  export_cache(p, kProvenance);
  CHECK(test::read_pc2(fx.dir / "every2.pc2").rate == 2.0f);
  p.frames = {1, 2, 4};
  p.output = fx.dir / "uneven.pc2";
  CHECK_THROWS_AS(export_cache(p, kProvenance), UsageError);
  CHECK_FALSE(std::filesystem::exists(fx.dir / "uneven.pc2"));
}

TEST_CASE("export: USDA with fixed topology is well formed and holds every frame") {
  Fixture fx;
  auto p = fx.params("cloth.usda", "cloth");
  p.attributes = {"stiffness"};
  export_cache(p, kProvenance);
  const auto layer = test::read_usda(fx.dir / "cloth.usda");
  CHECK(layer.metadata.at("startTimeCode").number == 1);
  CHECK(layer.metadata.at("endTimeCode").number == 4);
  CHECK(layer.metadata.at("framesPerSecond").number == 24);
  CHECK(layer.metadata.at("upAxis").text == "Y");
  const auto& custom = layer.metadata.at("customLayerData").dict;
  CHECK(custom.at(0).second.text == "mesh-export 0.1.0");
  const auto* mesh = layer.prims.at(0).child("cloth");
  REQUIRE(mesh);
  CHECK(mesh->attributes.at("subdivisionScheme").value.text == "none");
  // A sheet: both sides shown (USD culls the back of a single-sided mesh).
  CHECK(mesh->attributes.at("doubleSided").type == "uniform bool");
  CHECK(mesh->attributes.at("doubleSided").value.number == 1);
  CHECK(mesh->attributes.at("faceVertexCounts").value.items.size() ==
        static_cast<std::size_t>(test::cloth_triangles().rows()));
  const auto& samples = mesh->attributes.at("points").samples;
  REQUIRE(samples.size() == 4);
  for (int f = 0; f < 4; ++f) {
    CHECK(samples[f].first == f + 1);
    for (int i = 0; i < test::kClothNx * test::kClothNz; ++i)
      for (int d = 0; d < 3; ++d)
        CHECK(std::abs(samples[f].second.items[i].items[d].number -
                       test::cloth_position(i, f + 1)[d]) <= kTol);
  }
  // The cache holds the stiffness once: one value for all times, not four copies.
  const auto& stiffness = mesh->attributes.at("primvars:stiffness");
  CHECK(stiffness.samples.empty());
  REQUIRE(stiffness.has_default);
  CHECK(stiffness.metadata.at("interpolation").text == "vertex");
  REQUIRE(stiffness.value.items.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(stiffness.value.items[i].number == 100 + 10 * i);
  // Vertex normals in every frame, for smooth shading: the sheet is the surface
  // y = 0.05 sin(3x + 2t) + 0.01 f, whose upward unit normal is (-h', 1, 0)/|.|, h' = 0.15
  // cos(3x + 2t). Area-weighted normals of the triangulated grid (spacing 0.1) differ from it by
  // the slope's change over half a cell, at most 0.45 x 0.05 = 0.0225 rad at the border:
  // cos > 0.9997.
  const auto& normals = mesh->attributes.at("normals");
  CHECK(normals.type == "normal3f[]");
  CHECK(normals.metadata.at("interpolation").text == "vertex");
  REQUIRE(normals.samples.size() == 4);
  double worst = 1.0;
  for (int f = 0; f < 4; ++f)
    for (int i = 0; i < test::kClothNx * test::kClothNz; ++i) {
      const double x = 0.1 * (i % test::kClothNx), t = f / 24.0;
      const Eigen::Vector3d exact =
          Eigen::Vector3d(-0.15 * std::cos(3.0 * x + 2.0 * t), 1.0, 0.0).normalized();
      const auto& v = normals.samples[f].second.items[i].items;
      worst = std::min(worst, Eigen::Vector3d(v[0].number, v[1].number, v[2].number).dot(exact));
    }
  MESSAGE("smallest cosine between the written and the exact normals: " << worst);
  CHECK(worst > 0.9997);
  // Texture coordinates: static, under USD's name for them, one per vertex.
  const auto& st = mesh->attributes.at("primvars:st");
  CHECK(st.type == "texCoord2f[]");
  CHECK(st.metadata.at("interpolation").text == "vertex");
  REQUIRE(st.value.items.size() == static_cast<std::size_t>(test::kClothNx * test::kClothNz));
  for (int i = 0; i < test::kClothNx * test::kClothNz; ++i)
    for (int d = 0; d < 2; ++d)
      CHECK(static_cast<float>(st.value.items[i].items[d].number) == test::cloth_uv(i)[d]);
  CHECK(st.samples.empty());
}

TEST_CASE("export: uv=false leaves the texture coordinates out") {
  Fixture fx;
  auto p = fx.params("plain.####.obj", "cloth");
  p.uv = false;
  p.frames = {1};
  export_cache(p, kProvenance);
  const auto obj = test::read_obj(fx.dir / "plain.0001.obj");
  CHECK(obj.vt.empty());
  CHECK(obj.smoothing == "1");  // smooth shading is another key
  CHECK(obj.ft.at(0) == std::vector<int>{-1, -1, -1});
  p.output = fx.dir / "plain.####.ply";
  export_cache(p, kProvenance);
  CHECK(test::read_ply(fx.dir / "plain.0001.ply").vertex_properties ==
        std::vector<std::string>{"x", "y", "z", "nx", "ny", "nz"});
}

TEST_CASE("export: the automatic voxel size is the sequence's, whatever frames are exported") {
  // Particles whose spacing grows frame by frame (0.1 m, then 0.15, 0.2): a farm's shards export
  // other frames, and each took its own first frame's spacing, so the level sets of one
  // sequence changed voxel size and particle radius at every shard boundary.
  TempDir dir;
  const auto cache = dir / "spread.h5";
  const auto write = [&](const std::filesystem::path& path, double l0) {
    CacheWriter w(path, {"export-test 1", "export-test", "{}", ""});
    auto& s = w.add_sequence("spread", {24.0, 3});
    if (l0 > 0) s.set_attribute("l0", l0);
    for (int f = 1; f <= 3; ++f) {
      const Points3 p = test::jittered_block(5, 0.05 + 0.05 * f, 3);
      s.append_frame(f, (f - 1) / 24.0, {{"points/position", view(p)}});
    }
    w.commit();
  };
  write(cache, 0);
  MeshExportParams p;
  p.input = cache;
  p.source = ExportSource::Particles;
  const auto voxel_note = [&](std::vector<std::int64_t> frames, const std::string& out) {
    p.frames = std::move(frames);
    p.output = dir / out;
    std::vector<std::string> notes;
    export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
    for (const auto& n : notes)
      if (n.find("level_set.voxel_size = ") != std::string::npos) return n;
    return std::string("no note");
  };
  const std::string all = voxel_note({1, 2, 3}, "all.####.obj");
  // The frame named as a frame (it read "... of the sequence's first frame, 1)").
  CHECK(all.find("(half the mean particle spacing of frame 1, the sequence's first)") !=
        std::string::npos);
  CHECK(voxel_note({3}, "late.####.obj") == all);
  CHECK(voxel_note({2, 3}, "mid.####.obj") == all);
  // mps-gen's caches carry their lattice spacing as l0: half of it.
  write(cache, 0.03);
  const std::string l0 = voxel_note({3}, "l0.####.obj");
  CHECK(l0.find("level_set.voxel_size = 0.015 m (half the sequence's l0)") != std::string::npos);
  // A spacing of 3e-5 m gives 1.5e-5 m, below what OpenVDB takes: refused before any file is
  // written (it failed at the first frame, after the dry run had passed).
  write(cache, 3e-5);
  p.frames = {1, 2, 3};
  p.output = dir / "tiny.####.vdb";
  try {
    export_cache(p, kProvenance);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("/level_set/voxel_size: 0 (automatic) gives half the "
                                     "sequence's l0, 1.5e-05 m, below OpenVDB's smallest voxel "
                                     "size") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "tiny.0001.vdb"));
}

TEST_CASE("export: a level-set grid sequence to USDA has time-varying topology on the sphere") {
  Fixture fx;
  export_cache(fx.params("water.usda", "water"), kProvenance);
  const auto layer = test::read_usda(fx.dir / "water.usda");
  const auto& mesh = *layer.prims.at(0).child("water");
  const auto& counts = mesh.attributes.at("faceVertexCounts");
  CHECK_FALSE(counts.has_default);
  REQUIRE(counts.samples.size() == 4);
  const auto& points = mesh.attributes.at("points").samples;
  for (int f = 0; f < 4; ++f) {
    INFO("frame " << f + 1);
    double lo = 1e9, hi = 0;
    for (const auto& v : points[f].second.items) {
      const double r = std::hypot(v.items[0].number, v.items[1].number, v.items[2].number);
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    CHECK(lo >= test::water_radius(f + 1) - 0.05);  // one voxel
    CHECK(hi <= test::water_radius(f + 1) + 0.05);
  }
  // The sphere grows, so later frames have more polygons.
  CHECK(counts.samples[3].second.items.size() > counts.samples[0].second.items.size());
}

TEST_CASE("export: tetrahedra become their outward boundary surface") {
  Fixture fx;
  export_cache(fx.params("body.####.obj", "body"), kProvenance);
  const auto obj = test::read_obj(fx.dir / "body.0002.obj");
  CHECK(obj.v.size() == 8);
  CHECK(obj.f.size() == 12);                                   // 6 cube faces, 2 triangles each
  CHECK(signed_volume(obj.v, obj.f) == doctest::Approx(1.0));  // outward: +volume
  CHECK(obj.v[1].x() == doctest::Approx(1.2));                 // frame 2 shifts x by 0.2
  // A closed surface is single-sided in USD, as its default says.
  export_cache(fx.params("body.usda", "body"), kProvenance);
  const auto layer = test::read_usda(fx.dir / "body.usda");  // kept: `body` points into it
  const auto* body = layer.prims.at(0).child("body");
  REQUIRE(body);
  CHECK(body->attributes.count("doubleSided") == 0);
  CHECK(body->attributes.count("points") == 1);
}

TEST_CASE("export: VDB level sets from a grid, a mesh and particles, with provenance") {
  Fixture fx;
  std::vector<std::string> notes;
  auto note = [&](NoteLevel, const std::string& s) { notes.push_back(s); };
  export_cache(fx.params("water.####.vdb", "water"), kProvenance, {}, note);
  export_cache(fx.params("body.####.vdb", "body"), kProvenance, {}, note);
  auto p = fx.params("drops.%04d.vdb", "drops");
  p.frames = {1};
  export_cache(p, kProvenance, {}, note);
  CHECK(fx.files().size() == 9);
  for (const char* f : {"water.0003.vdb", "body.0001.vdb", "drops.0001.vdb"}) {
    const auto r = test::run_command("vdb_print -l -m " + (fx.dir / f).string());
    INFO(f << "\n" << r.out);
    CHECK(r.out.find("surface") != std::string::npos);
    CHECK(r.out.find("class: level set") != std::string::npos);
    CHECK(r.out.find("generator: mesh-export 0.1.0") != std::string::npos);
    CHECK(r.out.find("config: {\"format\":\"obj\"}") != std::string::npos);
  }
  // The voxel sizes: the grid's own; half the mean edge (cube edges 1 and sqrt 2); half the
  // particle spacing (0.1, jittered by up to 10%).
  const auto voxel = [&](const char* f) {
    const auto r = test::run_command("vdb_print -l " + (fx.dir / f).string());
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(voxel size: ([0-9.e-]+))")));
    return std::stod(m[1]);
  };
  CHECK(voxel("water.0001.vdb") == doctest::Approx(0.05));
  CHECK(voxel("body.0001.vdb") ==
        doctest::Approx((1 + std::sqrt(2.0) / 2 + 0.5) / 2 / 2).epsilon(0.2));
  CHECK(voxel("drops.0001.vdb") == doctest::Approx(0.05).epsilon(0.1));
  bool noted = false;
  for (const auto& n : notes) noted = noted || n.find("level_set.voxel_size") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("export: particles meshed through a level set, and 2D particles as a point cloud") {
  Fixture fx;
  auto p = fx.params("drops.####.obj", "drops");
  p.source = ExportSource::Particles;
  p.frames = {1};
  p.level_set.voxel_size = 0.025;
  p.level_set.radius = 0.1;  // one particle spacing: the spheres overlap into a solid block
  export_cache(p, kProvenance);
  const auto obj = test::read_obj(fx.dir / "drops.0001.obj");
  REQUIRE(obj.v.size() > 100);
  // The block of centres spans [0, 0.5]^3 (minus the y shift of frame 1), grown by the radius.
  for (const auto& v : obj.v) {
    CHECK(v.x() >= -0.11);
    CHECK(v.x() <= 0.61);
  }
  CHECK(signed_volume(obj.v, obj.f) > 0.5 * 0.5 * 0.5);

  export_cache(fx.params("wave.####.ply", "wave2d"), kProvenance);
  const auto ply = test::read_ply(fx.dir / "wave.0001.ply");
  CHECK(ply.vertex_count == 30);
  CHECK(ply.faces.empty());
  CHECK(ply.vertex.at("z")[5] == 0.0);
  CHECK(ply.vertex.at("x")[5] == doctest::Approx(0.25));
}

TEST_CASE("export: every sequence by default, named apart, and shards split the frames") {
  Fixture fx;
  auto p = fx.params("all.####.ply", "");  // every sequence
  p.frames = {1};
  const auto r = export_cache(p, kProvenance);
  CHECK(fx.files() == std::vector<std::string>{"all_body.0001.ply", "all_cloth.0001.ply",
                                               "all_drops.0001.ply", "all_water.0001.ply",
                                               "all_wave2d.0001.ply"});
  CHECK(r.files.size() == 5);

  std::vector<std::string> shards;
  for (int k = 1; k <= 3; ++k) {
    auto q = fx.params("s/{sequence}.####.obj", "cloth");
    std::filesystem::create_directories(fx.dir / "s");
    q.shard = {k, 3};
    for (const auto& f : export_cache(q, kProvenance).files) shards.push_back(f.filename());
  }
  CHECK(shards == std::vector<std::string>{"cloth.0001.obj", "cloth.0002.obj", "cloth.0003.obj",
                                           "cloth.0004.obj"});
}

TEST_CASE("export: an open mesh is refused as a level set, a closed one is not") {
  // The cloth has a border (14 edges of the 5 x 4 grid's outline), and a level set of it had no
  // inside: meshToLevelSet's grid came out with no negative value, written with exit 0. Every
  // sequence to VDB therefore stops before any file, naming the cloth; the closed tetrahedral
  // body alone is written.
  Fixture fx;
  auto p = fx.params("all.####.vdb", "");  // every sequence
  p.frames = {1};
  const std::string open = fx.cache.string() +
                           ": /sequences/cloth: its mesh is open (14 edges on one face only, the "
                           "first between points 0 and 1)";
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance), doctest::Contains(open.c_str()), UsageError);
  CHECK(fx.files().empty());
  CHECK(export_cache(fx.params("body.####.vdb", "body"), kProvenance).files.size() == 4);
}

TEST_CASE("export: particles too fine for level_set.max_voxels are refused before any file") {
  // 216 drops of radius 0.1 m at 2 mm voxels: each writes a shell of 4/3 pi (53^3 - 47^3) =
  // 1.887e5 voxels, 4.08e7 a frame. Such a run went on for minutes a frame without a word.
  Fixture fx;
  auto p = fx.params("d.####.vdb", "drops");
  p.source = ExportSource::Particles;
  p.level_set.voxel_size = 0.002;
  p.level_set.radius = 0.1;
  p.level_set.max_voxels = 1e6;
  std::string message;
  try {
    export_cache(p, kProvenance);
  } catch (const ConfigError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("/level_set/voxel_size: " + fx.cache.string() +
                     ": /sequences/drops: 216 particles of radius 0.1 m at a voxel size of "
                     "0.002 m write about 4.08e+07 narrow-band voxels a frame, more than "
                     "level_set.max_voxels (1e+06)") != std::string::npos);
  CHECK(fx.files().empty());
  // The voxel size it suggests, a little larger, passes and writes.
  const std::string key = "use a voxel size of at least ";
  const auto at = message.find(key);
  REQUIRE(at != std::string::npos);
  const double suggested = std::stod(message.substr(at + key.size()));
  CHECK(suggested > 0.002);
  CHECK(suggested < 0.1 / 1.5);
  p.level_set.voxel_size = suggested * 1.01;
  CHECK(export_cache(p, kProvenance).files.size() == 4);
}

TEST_CASE("export: a dry run plans the files and writes none") {
  Fixture fx;
  auto p = fx.params("cloth.mdd", "cloth");
  p.dry_run = true;
  const auto r = export_cache(p, kProvenance);
  CHECK(r.frames == 4);
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0] == fx.dir / "cloth.mdd");
  CHECK(r.files[1] == fx.dir / "cloth.obj");
  CHECK(fx.files().empty());
}

TEST_CASE("export: bad input fails before any file is written, naming file, dataset, frame") {
  Fixture fx;
  const std::string cache = fx.cache.string();
  // Particles asked for a mesh format.
  CHECK_THROWS_WITH_AS(
      export_cache(fx.params("d.####.obj", "drops"), kProvenance),
      doctest::Contains(
          (cache + ": /sequences/drops/topology: the sequence has no topology").c_str()),
      IoError);
  CHECK_THROWS_AS(export_cache(fx.params("d.pc2", "drops"), kProvenance), IoError);
  // An unknown sequence: the message lists the ones there are.
  CHECK_THROWS_WITH_AS(export_cache(fx.params("x.obj", "clothes"), kProvenance),
                       doctest::Contains("cloth"), IoError);
  // A frame outside the cache.
  auto p = fx.params("c.####.obj", "cloth");
  p.frames = {2, 9};
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("/sequences/cloth/frame: frame 9 is not in the cache "
                                         "(it has 1-4)"),
                       UsageError);
  // An attribute that is not there.
  p = fx.params("c.####.ply", "cloth");
  p.attributes = {"stifness"};
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("points/stifness: no such point array (attributes in "
                                         "the config); the sequence has: "),
                       IoError);
  // The colour's attribute is named by its own key.
  p.attributes.clear();
  p.color.attribute = "nope";
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("points/nope: no such point array (color.attribute in "
                                         "the config)"),
                       IoError);
  // A level-set grid that is not there: none in the sequence, or not the one named.
  p = fx.params("c.####.obj", "cloth");
  p.source = ExportSource::Grid;
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("/sequences/cloth/grids: no level-set grid"), IoError);
  p = fx.params("w.####.vdb", "water");
  p.grid = "foam";
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("/sequences/water/grids/foam: no such grid"), IoError);
  // An output directory that cannot be written.
  CHECK_THROWS_AS(export_cache(fx.params("no/dir/c.####.obj", "cloth"), kProvenance), IoError);
  // Usage: a format and an extension that disagree, pc2 split by shards, frame tokens in a
  // one-file format, no format at all.
  p = fx.params("c.obj", "cloth");
  p.format = ExportFormat::Ply;
  CHECK_THROWS_AS(export_cache(p, kProvenance), UsageError);
  p = fx.params("c.pc2", "cloth");
  p.shard.count = 2;
  CHECK_THROWS_AS(export_cache(p, kProvenance), UsageError);
  CHECK_THROWS_AS(export_cache(fx.params("c.####.usda", "cloth"), kProvenance), UsageError);
  CHECK_THROWS_AS(export_cache(fx.params("c.txt", "cloth"), kProvenance), UsageError);
  // Particles smaller than OpenVDB's 1.5 voxels.
  p = fx.params("d.vdb", "drops");
  p.level_set.radius = 0.01;
  CHECK_THROWS_AS(export_cache(p, kProvenance), ConfigError);
  CHECK(fx.files().empty());
}

TEST_CASE("export: a tetrahedral mesh's files hold its surface vertices only, in cache order") {
  // Blender's OBJ importer drops vertices no face uses: an OBJ that kept the interior ones had
  // fewer vertices in Blender than its PC2 ("Vertex count mismatch", no animation).
  TempDir dir;
  const auto cache = dir / "core.h5";
  test::write_core_cache(cache, 3);
  const Points3 rest = test::core_rest();
  REQUIRE(tet_volumes(rest, CacheReader(cache).sequence("core").topology("tetrahedra")).minCoeff() >
          0);
  MeshExportParams p;
  p.input = cache;
  p.output = dir / "core.pc2";
  std::vector<std::string> notes;
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  const std::vector<int>& kept = test::kCoreSurface;
  const auto pc2 = test::read_pc2(dir / "core.pc2");
  const auto obj = test::read_obj(dir / "core.obj");
  REQUIRE(pc2.points == 8);
  REQUIRE(obj.v.size() == 8);
  CHECK(obj.f.size() == 12);
  CHECK(signed_volume(obj.v, obj.f) == doctest::Approx(1.0));  // closed and outward
  for (int f = 0; f < 3; ++f)
    for (std::size_t k = 0; k < kept.size(); ++k) {
      Eigen::Vector3d x = rest.row(kept[k]).transpose();
      x.x() += 0.1 * (f + 1);
      CHECK((pc2.x[f][k] - x).cwiseAbs().maxCoeff() <= kTol);
      if (f == 0) CHECK((obj.v[k] - x).cwiseAbs().maxCoeff() <= kTol);
    }
  // Per-vertex attributes follow the same vertices.
  p.output = dir / "core.####.ply";
  p.attributes = {"mass"};
  p.frames = {2};
  export_cache(p, kProvenance);
  const auto ply = test::read_ply(dir / "core.0002.ply");
  REQUIRE(ply.vertex_count == 8);
  for (std::size_t k = 0; k < kept.size(); ++k) CHECK(ply.vertex.at("mass")[k] == 10.0 * kept[k]);
  CHECK(std::find(notes.begin(), notes.end(),
                  "/sequences/core: the files hold the 8 vertices of the boundary surface, in the "
                  "cache's order; the 1 that no boundary face uses (inside the tetrahedral "
                  "mesh) are left out") != notes.end());
}

TEST_CASE("export: a grid with a voxel below OpenVDB's smallest is named before any file") {
  // Its level set failed at the first frame with OpenVDB's "Non-zero scale values required".
  Fixture fx;
  test::poke_double_attribute(fx.cache, "/sequences/water/grids/surface", "voxel_size", 1e-6);
  CHECK_THROWS_WITH_AS(export_cache(fx.params("water.####.vdb", "water"), kProvenance),
                       doctest::Contains("in.h5: /sequences/water/grids/surface: attribute "
                                         "voxel_size 1e-06 m is below OpenVDB's smallest"),
                       IoError);
  CHECK(fx.files().empty());
}

TEST_CASE("export: an XDMF sidecar points into the cache, one grid per exported frame") {
  Fixture fx;
  auto p = fx.params("cloth.xmf", "cloth");
  p.frames = {2, 3, 4};
  p.attributes = {"stiffness", "velocity"};
  export_cache(p, kProvenance);
  export_cache(fx.params("water.xmf", "water"), kProvenance);
  const std::string x = test::file_bytes(fx.dir / "cloth.xmf");
  auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
  };
  CHECK(count(x, "<Time Value=") == 3);
  CHECK(count(x, "<Grid ") == 4);  // the temporal collection and one grid per frame
  CHECK(count(x, "</Grid>") == 4);
  CHECK(x.find("<Topology TopologyType=\"Triangle\" NumberOfElements=\"24\">") !=
        std::string::npos);
  // Frame 3 is index 2 of the [4, 20, 3] positions: start 2 0 0, stride 1, count 1 20 3.
  CHECK(x.find("<DataItem Dimensions=\"1 20 3\" NumberType=\"Float\" Precision=\"4\" "
               "Format=\"HDF\">in.h5:/sequences/cloth/points/position|2 0 0:1 1 1:1 20 3:4 20 3"
               "</DataItem>") != std::string::npos);
  CHECK(x.find("<Attribute Name=\"velocity\" AttributeType=\"Vector\"") != std::string::npos);
  CHECK(x.find("Name=\"generator\" Value=\"mesh-export 0.1.0\"") != std::string::npos);
  // Every dataset the sidecar names exists in the cache (h5ls reads it independently).
  std::smatch m;
  std::string rest = x;
  std::size_t paths = 0;
  while (std::regex_search(rest, m, std::regex(R"(in\.h5:(/[^<|]+)[<|])"))) {
    const auto r = test::run_command("h5ls " + fx.cache.string() + m[1].str());
    INFO(m[1].str());
    CHECK(r.exit_code == 0);
    rest = m.suffix();
    ++paths;
  }
  CHECK(paths > 6);
  const std::string w = test::file_bytes(fx.dir / "water.xmf");
  CHECK(count(w, "<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"24 24 24\"/>") == 4);
  CHECK(w.find(">-0.6 -0.6 -0.6</DataItem>") != std::string::npos);
}

TEST_CASE("export: texture coordinates of another shape are left out with a note") {
  TempDir dir;
  const auto cache = dir / "other_uv.h5";
  {
    CacheWriter w(cache, {"export-test 1", "export-test", "{}", ""});
    auto& s = w.add_sequence("sheet", {24.0, 3});
    s.write_static("topology/triangles", view(test::cloth_triangles()));
    const Eigen::Matrix<float, Eigen::Dynamic, 3, Eigen::RowMajor> uvw =
        Eigen::Matrix<float, Eigen::Dynamic, 3, Eigen::RowMajor>::Zero(
            test::kClothNx * test::kClothNz, 3);
    s.write_static("points/uv", view(uvw));
    s.append_frame(1, 0.0, {{"points/position", view(test::cloth_frame(1))}});
    w.commit();
  }
  MeshExportParams p;
  p.input = cache;
  p.output = dir / "sheet.####.obj";
  std::vector<std::string> notes;
  // A warning, shown under -q: it was an information line while the OBJ lost its UV map.
  CHECK(export_cache(p, kProvenance, {}, [&](NoteLevel level, const std::string& n) {
          if (level == NoteLevel::Warning) notes.push_back(n);
        }).frames == 1);
  CHECK(test::read_obj(dir / "sheet.0001.obj").vt.empty());
  CHECK(std::find(notes.begin(), notes.end(),
                  cache.string() +
                      ": /sequences/sheet/points/uv: not written, expected static texture "
                      "coordinates [20, 2], got [20, 3]") != notes.end());
}

TEST_CASE("export: face-varying texture coordinates go to OBJ and USDA as they are, seams kept") {
  TempDir dir;
  const auto cache = dir / "seams.h5";
  test::write_seam_cache(cache, 1.0f);
  const Triangles tris = test::cloth_triangles();
  MeshExportParams p;
  p.input = cache;
  p.output = dir / "sheet.####.obj";
  export_cache(p, kProvenance);
  const auto obj = test::read_obj(dir / "sheet.0002.obj");
  // Each corner's vt is the cache's value for that corner (exact: float32 text), so a vertex on
  // the seam has one value in each half.
  REQUIRE(obj.vt.size() == static_cast<std::size_t>(3 * tris.rows()));
  REQUIRE(obj.ft.size() == static_cast<std::size_t>(tris.rows()));
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      CHECK(obj.f[t][c] == tris(t, c));
      CHECK(obj.vt[obj.ft[t][c]].cast<float>() == test::seam_uv(t, c, 1.0f).cast<float>());
    }
  // The USD layer: indexed faceVarying values, one index per entry of faceVertexIndices.
  p.output = dir / "sheet.usda";
  export_cache(p, kProvenance);
  const auto layer = test::read_usda(dir / "sheet.usda");
  const auto* mesh = layer.prims.at(0).child("sheet");
  REQUIRE(mesh);
  const auto& st = mesh->attributes.at("primvars:st");
  CHECK(st.type == "texCoord2f[]");
  CHECK(st.metadata.at("interpolation").text == "faceVarying");
  const auto& indices = mesh->attributes.at("primvars:st:indices");
  CHECK(indices.type == "int[]");
  const auto& fvi = mesh->attributes.at("faceVertexIndices").value.items;
  REQUIRE(indices.value.items.size() == fvi.size());
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      const auto k = static_cast<std::size_t>(3 * t + c);
      CHECK(fvi[k].number == tris(t, c));
      const auto& value =
          st.value.items.at(static_cast<std::size_t>(indices.value.items[k].number));
      CHECK(Eigen::Vector2d(value.items[0].number, value.items[1].number).cast<float>() ==
            test::seam_uv(t, c, 1.0f).cast<float>());
    }
  // The OBJ beside a point cache is what a DCC tool textures: it keeps them too.
  p.output = dir / "sheet.pc2";
  export_cache(p, kProvenance);
  CHECK(test::read_obj(dir / "sheet.obj").vt.size() == obj.vt.size());
}

TEST_CASE("export: PLY takes face-varying texture coordinates per vertex, copying seam vertices") {
  TempDir dir;
  const Triangles tris = test::cloth_triangles();
  const int n = test::kClothNx * test::kClothNz;
  MeshExportParams p;
  p.output = dir / "sheet.####.ply";
  p.frames = {1};
  std::vector<std::string> notes;
  const auto collect = [&](NoteLevel, const std::string& m) { notes.push_back(m); };

  // Without a seam every vertex has one value at all its corners: PLY's s, t, and no copies.
  p.input = dir / "seamless.h5";
  test::write_seam_cache(p.input, 0.0f);
  export_cache(p, kProvenance, {}, collect);
  CHECK(notes.empty());
  const auto ply = test::read_ply(dir / "sheet.0001.ply");
  REQUIRE(ply.vertex_count == static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    CHECK(ply.vertex.at("s")[i] == test::cloth_uv(i)[0]);
    CHECK(ply.vertex.at("t")[i] == test::cloth_uv(i)[1]);
  }

  // With one, the vertices the two halves of the triangles share are written once more, after
  // the cache's: each corner then reads its own value, at its own vertex's position and normal.
  p.input = dir / "seams.h5";
  test::write_seam_cache(p.input, 1.0f);
  std::set<int> first, shared;
  for (Eigen::Index t = 0; 2 * t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) first.insert(tris(t, c));
  for (Eigen::Index t = (tris.rows() + 1) / 2; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c)
      if (first.count(tris(t, c))) shared.insert(tris(t, c));
  REQUIRE_FALSE(shared.empty());
  export_cache(p, kProvenance, {}, collect);
  const auto split = test::read_ply(dir / "sheet.0001.ply");
  REQUIRE(split.vertex_count == n + shared.size());
  CHECK(split.vertex_properties ==
        std::vector<std::string>{"x", "y", "z", "nx", "ny", "nz", "s", "t"});
  PolygonMesh welded;
  welded.points = test::cloth_frame(1).cast<float>().cast<double>();  // as the cache holds it
  welded.triangles = tris;
  const Points3 normals = vertex_normals(welded);
  REQUIRE(split.faces.size() == static_cast<std::size_t>(tris.rows()));
  std::set<int> copies;
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      INFO("triangle " << t << " corner " << c);
      const int r = split.faces[static_cast<std::size_t>(t)][static_cast<std::size_t>(c)];
      const int v = tris(t, c);
      if (r != v) {
        CHECK(shared.count(v) == 1);  // only a seam vertex has a copy
        CHECK(r >= n);
        copies.insert(r);
      }
      CHECK(split.vertex.at("s")[r] == static_cast<float>(test::seam_uv(t, c, 1.0f)[0]));
      CHECK(split.vertex.at("t")[r] == static_cast<float>(test::seam_uv(t, c, 1.0f)[1]));
      for (int k = 0; k < 3; ++k) {
        CHECK(split.vertex.at(std::string(1, "xyz"[k]))[r] ==
              static_cast<float>(welded.points(v, k)));
        CHECK(split.vertex.at(std::string("n") + "xyz"[k])[r] == static_cast<float>(normals(v, k)));
      }
    }
  CHECK(copies.size() == shared.size());
  for (int i = 0; i < n; ++i)
    CHECK(split.vertex.at("x")[i] == static_cast<float>(welded.points(i, 0)));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == p.input.string() + ": /sequences/sheet/uv: " + std::to_string(shared.size()) +
                        " vertices lie on a seam and PLY holds one texture coordinate per vertex: "
                        "the " +
                        std::to_string(shared.size()) + " copies they need follow the cache's " +
                        std::to_string(n) + " vertices");
}

TEST_CASE("export: smooth_shading=false leaves OBJ's smoothing group and USDA's normals out") {
  Fixture fx;
  auto p = fx.params("cloth.####.obj", "cloth");
  p.frames = {1};
  export_cache(p, kProvenance);
  CHECK(test::read_obj(fx.dir / "cloth.0001.obj").smoothing == "1");
  p.smooth_shading = false;
  p.output = fx.dir / "flat.####.obj";
  export_cache(p, kProvenance);
  CHECK(test::read_obj(fx.dir / "flat.0001.obj").smoothing.empty());
  p.output = fx.dir / "flat.usda";
  export_cache(p, kProvenance);
  const auto flat = test::read_usda(fx.dir / "flat.usda");
  const auto* mesh = flat.prims.at(0).child("cloth");
  REQUIRE(mesh);
  CHECK(mesh->attributes.count("normals") == 0);
  CHECK(mesh->attributes.count("points") == 1);
}

TEST_CASE("export: uv_projection box gives a mesh without texture coordinates the rest pose's") {
  Fixture fx;
  // "body": a unit cube of tetrahedra moving along x, exported as its boundary, without UVs.
  auto p = fx.params("body.####.obj", "body");
  export_cache(p, kProvenance);
  CHECK(test::read_obj(fx.dir / "body.0001.obj").vt.empty());
  p.uv_projection = UvProjection::Box;
  p.output = fx.dir / "boxed.####.obj";
  export_cache(p, kProvenance);
  const auto first = test::read_obj(fx.dir / "boxed.0001.obj");
  const auto last = test::read_obj(fx.dir / "boxed.0004.obj");
  // 12 boundary triangles on 6 tiles: 4 values a face, 24 in all, every corner with one.
  REQUIRE(first.f.size() == 12);
  CHECK(first.vt.size() == 24);
  for (const auto& t : first.ft)
    for (int k : t) CHECK(k >= 0);
  // From the rest pose: the same on every frame while the cube moves, and the same from a
  // shard that starts later (a farm's frame ranges must agree).
  CHECK(last.vt == first.vt);
  CHECK(last.ft == first.ft);
  CHECK(last.v[0] != first.v[0]);
  p.output = fx.dir / "late.####.obj";
  p.frames = {3, 4};
  export_cache(p, kProvenance);
  CHECK(test::read_obj(fx.dir / "late.0004.obj").vt == first.vt);
  // USDA takes them face-varying; PLY copies the vertices on the seams (a note says so): each
  // corner of the cube is on three tiles, so 24 vertices carry the same 24 values as the OBJ.
  p.frames = {};
  p.output = fx.dir / "boxed.usda";
  export_cache(p, kProvenance);
  const auto boxed = test::read_usda(fx.dir / "boxed.usda");
  const auto* mesh = boxed.prims.at(0).child("body");
  REQUIRE(mesh);
  CHECK(mesh->attributes.at("primvars:st").metadata.at("interpolation").text == "faceVarying");
  std::vector<std::string> notes;
  p.output = fx.dir / "boxed.####.ply";
  p.frames = {1};
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  const auto ply = test::read_ply(fx.dir / "boxed.0001.ply");
  REQUIRE(ply.vertex_count == 24);
  REQUIRE(ply.faces.size() == first.f.size());
  for (std::size_t t = 0; t < ply.faces.size(); ++t)
    for (std::size_t c = 0; c < 3; ++c) {
      const int r = ply.faces[t][c];
      const auto& vt = first.vt[static_cast<std::size_t>(first.ft[t][c])];
      CHECK(ply.vertex.at("s")[r] == static_cast<float>(vt[0]));
      CHECK(ply.vertex.at("t")[r] == static_cast<float>(vt[1]));
      CHECK(ply.vertex.at("x")[r] ==
            static_cast<float>(first.v[static_cast<std::size_t>(first.f[t][c])][0]));
    }
  // With the counts, as for the cache's own seams (the note gave none): the cube's 8 corners
  // are each on three tiles, so each needs two copies.
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("/sequences/body: uv_projection box: 8 vertices lie on the projection's "
                      "seams and PLY holds one texture coordinate per vertex: the 16 copies they "
                      "need follow the 8 vertices of the mesh") != std::string::npos);
  // A level set's mesh has new faces every frame: the projection is not applied, and a note
  // says so (it was ignored silently).
  notes.clear();
  auto w = fx.params("water.####.obj", "water");
  w.uv_projection = UvProjection::Box;
  w.frames = {1};
  export_cache(w, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  CHECK(test::read_obj(fx.dir / "water.0001.obj").vt.empty());
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("/sequences/water: uv_projection box: not applied to the mesh of a level "
                      "set") != std::string::npos);
  // A mesh with its own texture coordinates keeps them.
  auto q = fx.params("cloth.####.obj", "cloth");
  q.uv_projection = UvProjection::Box;
  q.frames = {1};
  export_cache(q, kProvenance);
  const auto cloth = test::read_obj(fx.dir / "cloth.0001.obj");
  REQUIRE(cloth.vt.size() == cloth.v.size());
  CHECK(cloth.vt[7].cast<float>() == test::cloth_uv(7));
}

TEST_CASE("export: a box projection asked of a level set's mesh is a warning, not silence") {
  Fixture fx;
  auto p = fx.params("w.####.obj", "water");
  p.frames = {1};
  p.uv_projection = UvProjection::Box;
  std::vector<std::pair<NoteLevel, std::string>> notes;
  export_cache(p, kProvenance, {},
               [&](NoteLevel level, const std::string& n) { notes.emplace_back(level, n); });
  CHECK(test::read_obj(fx.dir / "w.0001.obj").vt.empty());
  CHECK(std::count_if(notes.begin(), notes.end(), [](const auto& n) {
          return n.first == NoteLevel::Warning &&
                 n.second.find(
                     "/sequences/water: uv_projection box: not applied to the mesh of "
                     "a level set") != std::string::npos;
        }) == 1);
}

TEST_CASE("export: damaged or incomplete face-varying texture coordinates are named") {
  TempDir dir;
  // NaN in uv/coordinates (another program's damage: the writer refuses it): every mesh format
  // stops naming the row, PLY too (it did read as a seam and the file was written without).
  const auto nan = dir / "nan.h5";
  test::write_seam_cache(nan, 0.0f);
  test::poke_float(nan, "/sequences/sheet/uv/coordinates", 2 * 5 + 1,
                   std::numeric_limits<double>::quiet_NaN());
  MeshExportParams p;
  p.input = nan;
  for (const char* out : {"n.####.ply", "n.####.obj", "n.usda"}) {
    INFO(out);
    p.output = dir / out;
    CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                         doctest::Contains("nan.h5: /sequences/sheet/uv/coordinates: row 5 is "
                                           "not finite"),
                         IoError);
  }
  // Triangles and quads with the triangles' corners only: left out, the note naming the quads.
  const auto half = dir / "half.h5";
  {
    CacheWriter w(half, {"export-test 1", "export-test", "{}", ""});
    auto& s = w.add_sequence("mixed", {24.0, 3});
    Triangles t(1, 3);
    t << 0, 1, 2;
    Quads q(1, 4);
    q << 1, 3, 4, 2;
    s.write_static("topology/triangles", view(t));
    s.write_static("topology/quads", view(q));
    FaceVaryingUv uv;
    uv.coordinates = Eigen::Matrix<double, 3, 2, Eigen::RowMajor>::Identity(3, 2);
    uv.corners = t;
    write_face_uv(s, uv);
    s.append_frame(1, 0.0, {{"points/position", view(test::cube_points(0).topRows(5).eval())}});
    w.commit();
  }
  std::vector<std::string> notes;
  p.input = half;
  p.output = dir / "half.####.obj";
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  CHECK(test::read_obj(dir / "half.0001.obj").vt.empty());
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == half.string() +
                        ": /sequences/mixed/uv: not written, it has no uv/quads for the "
                        "sequence's topology/quads");
}

namespace {

/// The cloth's export to `output` matched to write_cloth_reference's OBJ (Z up, centimetres),
/// written into the fixture's directory as ref.obj.
MeshExportParams matched_cloth(const Fixture& fx, const std::string& output) {
  test::write_cloth_reference(fx.dir / "ref.obj");
  auto p = fx.params(output, "cloth");
  p.match.file = fx.dir / "ref.obj";
  p.match.scale = 100;
  p.match.up_axis = "Z";
  return p;
}

}  // namespace

TEST_CASE("export: match.file gives the files its vertices, faces and texture coordinates") {
  // The cloth as a DCC tool holds it: another vertex order, a seam split, quads, Z up, in
  // centimetres. Every file takes its vertices, each moved as the cloth vertex it lies on.
  Fixture fx;
  auto p = matched_cloth(fx, "cloth.pc2");
  std::vector<std::string> notes;
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  const auto expected = [](int j, std::int64_t f) {
    return test::reference_coordinates(test::cloth_position(test::cloth_vertex(j), f));
  };
  // Centimetres: 100 times the metre tolerance.
  constexpr double kCm = 100 * kTol;
  const auto pc2 = test::read_pc2(fx.dir / "cloth.pc2");
  REQUIRE(pc2.points == test::kReferenceVertices);
  REQUIRE(pc2.frames == 4);
  for (int f = 0; f < 4; ++f)
    for (int j = 0; j < pc2.points; ++j) {
      INFO("frame " << f + 1 << " vertex " << j);
      CHECK((pc2.x[f][j] - expected(j, f + 1)).cwiseAbs().maxCoeff() <= kCm);
    }
  // The OBJ beside it: the file's vertices and its faces, quads as they are, corner for corner,
  // with its own texture coordinates (the copies on the seam their island's).
  const auto obj = test::read_obj(fx.dir / "cloth.obj");
  const auto file = test::read_obj(fx.dir / "ref.obj");
  REQUIRE(obj.v.size() == static_cast<std::size_t>(test::kReferenceVertices));
  CHECK(obj.f.size() == std::size_t{(test::kClothNx - 1) * (test::kClothNz - 1)});
  CHECK(obj.f == file.f);
  std::set<int> used;
  for (std::size_t t = 0; t < obj.f.size(); ++t)
    for (std::size_t c = 0; c < obj.f[t].size(); ++c) {
      const int j = obj.f[t][c];
      used.insert(j);
      CHECK((obj.vt.at(static_cast<std::size_t>(obj.ft[t][c])) - test::reference_uv(j))
                .cwiseAbs()
                .maxCoeff() <= 1e-6);
    }
  CHECK(used.size() == static_cast<std::size_t>(test::kReferenceVertices));
  CHECK((obj.v[21] - expected(21, 1)).cwiseAbs().maxCoeff() <= kCm);
  const auto said = [&](const std::string& text) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  CHECK(said("the files take the 24 vertices and 12 quads of "));

  // Other formats follow: an OBJ sequence, and a PLY whose attribute is the matched vertex's.
  p.output = fx.dir / "frame.####.obj";
  p.frames = {3};
  export_cache(p, kProvenance);
  const auto third = test::read_obj(fx.dir / "frame.0003.obj");
  CHECK((third.v[5] - expected(5, 3)).cwiseAbs().maxCoeff() <= kCm);
  // Velocity arrives in the file's frame and units (centimetres per second, Z up), the normal
  // in its frame only (still of length 1); "drift", a 3-component array of no known meaning, as
  // the cache holds it, with a warning.
  {
    io::CacheWriter w(fx.dir / "drift.h5", {"export-test 1", "export-test", "{}", ""});
    auto& s = w.add_sequence("cloth", {24.0, 3});
    s.write_static("rest/position", io::view(test::cloth_frame(1)));
    s.write_static("topology/triangles", io::view(test::cloth_triangles()));
    const Points3 drift = Points3::Constant(test::kClothNx * test::kClothNz, 3, 0.25);
    s.write_static("points/drift", io::view(drift));
    s.append_frame(1, 0.0, {{"points/position", io::view(test::cloth_frame(1))}});
    w.commit();
  }
  p.output = fx.dir / "frame.####.ply";
  p.attributes = {"stiffness", "velocity", "normal"};
  notes.clear();
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  CHECK(
      said("/sequences/cloth: velocity, normal turned into match.file's frame (Z up, 100 "
           "units per metre)"));
  const auto ply = test::read_ply(fx.dir / "frame.0003.ply");
  for (int j : {0, 7, 20, 23}) {
    INFO("vertex " << j);
    const auto k = static_cast<std::size_t>(j);
    CHECK(ply.vertex.at("stiffness").at(k) == 100.0 + 10.0 * test::cloth_vertex(j));
    const Eigen::Vector3d v(ply.vertex.at("velocity_0").at(k), ply.vertex.at("velocity_1").at(k),
                            ply.vertex.at("velocity_2").at(k));
    // float32 values of up to 150 cm/s: a relative 1e-6.
    CHECK((v - test::reference_coordinates(test::cloth_velocity(test::cloth_vertex(j), 3)))
              .cwiseAbs()
              .maxCoeff() <= 2e-4);
    const Eigen::Vector3d n(ply.vertex.at("nx").at(k), ply.vertex.at("ny").at(k),
                            ply.vertex.at("nz").at(k));
    // Exact: the turn to Z up only moves and negates components, and a normal is not scaled.
    CHECK((n - Eigen::Vector3d(0, 0, 1)).cwiseAbs().maxCoeff() == 0.0);
  }
  {
    auto q = p;
    q.input = fx.dir / "drift.h5";
    q.output = fx.dir / "drift.####.ply";
    q.attributes = {"drift"};
    q.frames.clear();
    notes.clear();
    export_cache(q, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
    CHECK(
        said("/sequences/cloth: drift written as the cache holds it (metres, Y up), not in "
             "match.file's frame (Z up, 100 units per metre): only velocity and normal are "
             "known to be vectors"));
    const auto drift = test::read_ply(fx.dir / "drift.0001.ply");
    for (const char* c : {"drift_0", "drift_1", "drift_2"}) CHECK(drift.vertex.at(c).at(3) == 0.25);
  }

  // A file of part of the mesh: the rest of the cache's vertices are in no file, with a warning.
  {
    std::ofstream part(fx.dir / "part.obj");
    part.precision(9);
    for (int i : {0, 1, 5}) {
      const Eigen::Vector3d x = test::reference_coordinates(test::cloth_position(i, 1));
      part << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << '\n';
    }
    part << "f 1 2 3\n";
    part.close();
    auto q = fx.params("part.pc2", "cloth");
    q.match.file = fx.dir / "part.obj";
    q.match.scale = 100;
    q.match.up_axis = "Z";
    notes.clear();
    export_cache(q, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
    CHECK(test::read_pc2(fx.dir / "part.pc2").points == 3);
    CHECK(said("/sequences/cloth: 17 of the 20 vertices of its faces lie under no vertex of "));
  }

  // The export of frame 2 to `output` matched to an OBJ `name` of the cloth's vertices at rest,
  // in the reference's frame and units, with the further lines `faces`.
  const auto matched_to = [&](const std::string& name, const std::string& faces,
                              const std::string& output) {
    std::ofstream rest(fx.dir / name);
    rest.precision(9);
    for (int i = 0; i < test::kClothNx * test::kClothNz; ++i) {
      const Eigen::Vector3d x = test::reference_coordinates(test::cloth_position(i, 1));
      rest << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << '\n';
    }
    rest << faces;
    rest.close();
    auto q = fx.params(output, "cloth");
    q.frames = {2};
    q.match.file = fx.dir / name;
    q.match.scale = 100;
    q.match.up_axis = "Z";
    return q;
  };

  // A triangle, a pentagon and a quad with a vertex twice: the triangle and the pentagon as they
  // are, the quad as the two triangles it is cut into, each corner still on its cloth vertex.
  {
    notes.clear();
    export_cache(matched_to("mixed.obj", "f 1 6 2\nf 2 7 8 9 3\nf 14 19 20 20\n", "mixed.####.obj"),
                 kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
    const auto out = test::read_obj(fx.dir / "mixed.0002.obj");
    REQUIRE(out.f.size() == 4u);
    CHECK(out.f[0] == std::vector<int>{0, 5, 1});
    CHECK(out.f[1] == std::vector<int>{1, 6, 7, 8, 2});
    CHECK(out.f[2].size() == 3u);
    CHECK(out.f[3].size() == 3u);
    CHECK(said("the files take the 20 vertices, 3 triangles and 1 polygon of "));
    for (std::size_t i = 0; i < out.v.size(); ++i)
      CHECK((out.v[i] - test::reference_coordinates(test::cloth_position(static_cast<int>(i), 2)))
                .cwiseAbs()
                .maxCoeff() <= kCm);
  }

  // Quads and a triangle interleaved, each corner with a texture coordinate of its own (a seam
  // at every vertex two faces share): every format keeps the file's order of faces, so that its
  // face numbers (a face set, a material by face) hold; they came triangles first.
  {
    std::string lines;
    for (int k = 0; k < 16; ++k) lines += "vt " + std::to_string(0.05 * k) + " 0.5\n";
    lines += "f 1/1 6/2 7/3 2/4\nf 2/5 7/6 3/7\nf 3/8 8/9 9/10 4/11\n";
    lines += "f 13/12 19/13 15/14 9/15 8/16\n";  // a pentagon, kept as it is
    const std::vector<std::vector<int>> faces{
        {0, 5, 6, 1}, {1, 6, 2}, {2, 7, 8, 3}, {12, 18, 14, 8, 7}};
    auto q = matched_to("interleaved.obj", lines, "interleaved.####.obj");
    export_cache(q, kProvenance);
    const auto out_obj = test::read_obj(fx.dir / "interleaved.0002.obj");
    CHECK(out_obj.f == faces);
    CHECK(out_obj.ft == std::vector<std::vector<int>>{
                            {0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9, 10}, {11, 12, 13, 14, 15}});
    // PLY: the vertices split at the seams, each face on copies at the same positions.
    q.output = fx.dir / "interleaved.####.ply";
    export_cache(q, kProvenance);
    const auto out_ply = test::read_ply(fx.dir / "interleaved.0002.ply");
    REQUIRE(out_ply.faces.size() == faces.size());
    for (std::size_t k = 0; k < faces.size(); ++k) {
      REQUIRE(out_ply.faces[k].size() == faces[k].size());
      for (std::size_t c = 0; c < faces[k].size(); ++c) {
        const auto at = static_cast<std::size_t>(out_ply.faces[k][c]);
        const Eigen::Vector3d at_file =
            test::reference_coordinates(test::cloth_position(faces[k][c], 2));
        CHECK(std::abs(out_ply.vertex.at("x")[at] - at_file.x()) <= kCm);
        CHECK(std::abs(out_ply.vertex.at("y")[at] - at_file.y()) <= kCm);
      }
    }
    q.output = fx.dir / "interleaved.usda";
    q.frames.clear();
    export_cache(q, kProvenance);
    const auto layer = test::read_usda(fx.dir / "interleaved.usda");
    const auto& usd = *layer.prims.at(0).child("cloth");
    std::vector<int> counts, indices, st;
    for (const auto& c : usd.attributes.at("faceVertexCounts").value.items)
      counts.push_back(int(c.number));
    for (const auto& c : usd.attributes.at("faceVertexIndices").value.items)
      indices.push_back(int(c.number));
    for (const auto& c : usd.attributes.at("primvars:st:indices").value.items)
      st.push_back(int(c.number));
    CHECK(counts == std::vector<int>{4, 3, 4, 5});
    CHECK(indices == std::vector<int>{0, 5, 6, 1, 1, 6, 2, 2, 7, 8, 3, 12, 18, 14, 8, 7});
    CHECK(st == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  }

  // USDA says the file's frame and unit, which the points are in: Z up, centimetres.
  p.output = fx.dir / "matched.usda";
  p.frames.clear();
  p.attributes.clear();
  export_cache(p, kProvenance);
  const auto layer = test::read_usda(fx.dir / "matched.usda");
  CHECK(layer.metadata.at("upAxis").text == "Z");
  CHECK(layer.metadata.at("metersPerUnit").number == doctest::Approx(0.01).epsilon(1e-12));
}

TEST_CASE("export: match.file on a tetrahedral mesh takes its boundary, and names coincidences") {
  // The core cube of tetrahedra: 8 surface vertices around an interior one. The artist's mesh
  // is its surface, in reverse order; the interior vertex, on no face, is no candidate and no
  // cause for a warning.
  TempDir dir;
  test::write_core_cache(dir / "core.h5", 3);
  {
    std::ofstream obj(dir / "cube.obj");
    for (int k = 7; k >= 0; --k) {
      const Eigen::Vector3d x =
          test::core_rest().row(test::kCoreSurface[static_cast<std::size_t>(k)]);
      obj << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << '\n';
    }
  }
  MeshExportParams p;
  p.input = dir / "core.h5";
  p.output = dir / "cube.pc2";
  p.match.file = dir / "cube.obj";
  std::vector<std::string> notes;
  export_cache(p, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  CHECK(notes.size() == 1);  // the match's information line, no warning
  const auto pc2 = test::read_pc2(dir / "cube.pc2");
  REQUIRE(pc2.points == 8);
  for (int j = 0; j < 8; ++j) {  // moved 0.1 f along x at frame f
    const Eigen::Vector3d rest =
        test::core_rest().row(test::kCoreSurface[static_cast<std::size_t>(7 - j)]);
    CHECK((pc2.x[2][static_cast<std::size_t>(j)] - rest - Eigen::Vector3d(0.3, 0, 0))
              .cwiseAbs()
              .maxCoeff() <= kTol);
  }
  // A VDB has no vertices to order: refused, before any file.
  p.output = dir / "cube.vdb";
  CHECK_THROWS_WITH_AS(export_cache(p, kProvenance),
                       doctest::Contains("vdb holds a level set, which has no vertices to order"),
                       UsageError);
  // Two cache vertices at one place (an unwelded cache): the file's vertex there follows one,
  // and a warning says the other's motion is in no file.
  {
    io::CacheWriter w(dir / "twins.h5", {"export-test 1", "export-test", "{}", ""});
    auto& seq = w.add_sequence("twins", {24.0, 3});
    Points3 x(4, 3);
    x << 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0;  // 1 and 3 coincide
    Triangles t(2, 3);
    t << 0, 1, 2, 2, 3, 0;
    seq.write_static("rest/position", io::view(x));
    seq.write_static("topology/triangles", io::view(t));
    seq.append_frame(1, 0.0, {{"points/position", io::view(x)}});
    w.commit();
  }
  std::ofstream(dir / "tri.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  MeshExportParams q;
  q.input = dir / "twins.h5";
  q.output = dir / "tri.pc2";
  q.match.file = dir / "tri.obj";
  notes.clear();
  export_cache(q, kProvenance, {}, [&](NoteLevel, const std::string& n) { notes.push_back(n); });
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find(
               "tri.obj: 1 of its vertices (the first: vertex 2 at (1, 0, 0)) lie within "
               "match.tolerance of two or more vertices of ") != std::string::npos;
  }));
}

TEST_CASE("export: a match.file that does not fit names its vertex and what would fit it") {
  Fixture fx;
  auto p = matched_cloth(fx, "cloth.pc2");
  const auto message = [&](const MeshExportParams& q) {
    try {
      export_cache(q, kProvenance);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // Centimetres read as metres: the size says what the scale would be.
  auto q = p;
  q.match.scale = 1;
  std::string m = message(q);
  CHECK(m.find("ref.obj: vertex 1 at (40, -30, 5.6602) lies on no vertex of ") !=
        std::string::npos);
  CHECK(m.find("in.h5: /sequences/cloth/rest/position: the nearest is ") != std::string::npos);
  CHECK(m.find("24 of the file's 24 vertices lie on none; every vertex lies on one with "
               "match.scale = 100 and match.up_axis = Z") != std::string::npos);
  // Z up read as Y up: the extents say which axis is up.
  q = p;
  q.match.up_axis = "Y";
  CHECK(message(q).find("every vertex lies on one with match.scale = 100 and match.up_axis = Z") !=
        std::string::npos);
  // Centimetres read as inches.
  q = p;
  q.match.scale = 1 / 0.0254;
  CHECK(message(q).find("with match.scale = 100 and match.up_axis = Z") != std::string::npos);
  // Another pose than the rest pose: frame 3 is not the file's (it shows frame 1).
  q = p;
  q.match.frame = 3;
  m = message(q);
  CHECK(m.find("/points/position: frame 3: the nearest is ") != std::string::npos);
  INFO(m);
  CHECK(std::regex_search(m, std::regex(R"(\(at match.scale 100 and match.up_axis Z the file's )"
                                        R"(mesh is [01]\.\d+ times the size of the cache's; check )"
                                        R"(that it shows the cache's pose)")));
  q.match.frame = 9;
  CHECK(message(q).find("/frame: frame 9 (match.frame) is not in the cache (it has 1-4)") !=
        std::string::npos);
  // What cannot take another mesh's vertices.
  q = p;
  q.sequences.clear();
  CHECK_THROWS_WITH_AS(
      export_cache(q, kProvenance),
      doctest::Contains("is one mesh, and the export has 5 sequences (body, cloth, "
                        "drops, water, wave2d): choose its sequence"),
      UsageError);
  q = p;
  q.output = fx.dir / "cloth.xmf";
  CHECK_THROWS_WITH_AS(export_cache(q, kProvenance),
                       doctest::Contains("xdmf describes the cache as it is"), UsageError);
  q = fx.params("drops.####.obj", "drops");
  q.match = p.match;
  q.source = ExportSource::Particles;
  CHECK_THROWS_WITH_AS(export_cache(q, kProvenance),
                       doctest::Contains("source \"particles\" has none"), UsageError);
  // No rest pose to match against at match.frame 0.
  test::write_seam_cache(fx.dir / "sheet.h5", 0.0f);
  q = p;
  q.input = fx.dir / "sheet.h5";
  q.sequences = {"sheet"};
  CHECK_THROWS_WITH_AS(export_cache(q, kProvenance),
                       doctest::Contains("sheet.h5: /sequences/sheet/rest/position: no such "
                                         "dataset, whose rest pose match.frame = 0 matches "),
                       IoError);
  std::filesystem::remove(fx.dir / "sheet.h5");
  CHECK(fx.files() == std::vector<std::string>{"ref.obj"});
}
