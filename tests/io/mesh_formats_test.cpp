// The mesh writers (OBJ, binary PLY, PC2, MDD, USDA), each read back by an independent reader
// written from the format's description (tests/support/format_readers.hpp).

#include <doctest/doctest.h>

#include <numbers>
#include <random>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/mesh_formats.hpp"
#include "io/mesh_loaders.hpp"
#include "io/point_cache.hpp"
#include "io/usda_writer.hpp"
#include "support/format_readers.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::TempDir;

namespace {

/// A random mesh: n points in [-2, 2]^3 (float32 values and a few float64-only values), t
/// triangles and q quads.
PolygonMesh random_mesh(int n, int t, int q, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::uniform_int_distribution<int> idx(0, n - 1);
  PolygonMesh m;
  m.points.resize(n, 3);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      m.points(i, d) = i % 7 == 0 ? u(rng) : static_cast<double>(static_cast<float>(u(rng)));
  m.triangles.resize(t, 3);
  for (int i = 0; i < t; ++i) m.triangles.row(i) << idx(rng), idx(rng), idx(rng);
  m.quads.resize(q, 4);
  for (int i = 0; i < q; ++i) m.quads.row(i) << idx(rng), idx(rng), idx(rng), idx(rng);
  return m;
}

/// `text` written to `path` through an AtomicFile (held while a HeldCommits exists).
void write_atomic(const std::filesystem::path& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

std::size_t files_in(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

// Tolerances: OBJ and USDA text holds the shortest text of each value, so float32 values come
// back exactly and float64 values to 1 ulp of a double; binary formats hold float32, whose
// rounding of values in [-2, 2] is below 2.4e-7. 1e-6 covers both with margin.
constexpr double kTol = 1e-6;

}  // namespace

TEST_CASE("obj: vertices, faces (1-based), order and metadata read back") {
  TempDir dir;
  const PolygonMesh m = random_mesh(200, 50, 30, 1);
  write_obj(dir / "m.obj", m, "cloth", {{"generator", "test 1"}, {"config", "{\"a\": 1}"}});
  const auto d = test::read_obj(dir / "m.obj");
  REQUIRE(d.v.size() == 200);
  for (int i = 0; i < 200; ++i) {
    INFO("vertex " << i);
    CHECK((d.v[i] - m.points.row(i).transpose()).cwiseAbs().maxCoeff() <= kTol);
    if (i % 7 != 0) CHECK(d.v[i].cast<float>() == m.points.row(i).transpose().cast<float>());
  }
  REQUIRE(d.f.size() == 80);
  for (int i = 0; i < 50; ++i)
    CHECK(d.f[i] == std::vector<int>{m.triangles(i, 0), m.triangles(i, 1), m.triangles(i, 2)});
  for (int i = 0; i < 30; ++i)
    CHECK(d.f[50 + i] ==
          std::vector<int>{m.quads(i, 0), m.quads(i, 1), m.quads(i, 2), m.quads(i, 3)});
  CHECK(d.object == "cloth");
  CHECK(d.comments == std::vector<std::string>{"generator: test 1", "config: {\"a\": 1}"});
  CHECK(d.smoothing.empty());        // flat unless asked
  CHECK(files_in(dir.path()) == 1);  // no temporary file left
  write_obj(dir / "s.obj", m, "cloth", {}, true);
  CHECK(test::read_obj(dir / "s.obj").smoothing == "1");
}

TEST_CASE("box_projection_uv: unmirrored tiles at one scale, on a cube and a sphere") {
  // Signed area in UV and the area of the face's projection along its axis, for every face: the
  // map is unmirrored (positive areas for outward counter-clockwise faces) and at one scale
  // (0.3 over the largest extent, squared, for areas).
  const auto check = [](const Points3& x, PolygonMesh& m, double extent) {
    box_projection_uv(x, m);
    const double ratio = 0.09 / (extent * extent);
    double worst = 0.0;
    int mirrored = 0;
    const auto face = [&](const std::vector<int>& v, const std::vector<int>& t) {
      double uv_area = 0.0;
      Eigen::Vector3d vector_area = Eigen::Vector3d::Zero();
      for (std::size_t k = 1; k + 1 < v.size(); ++k) {
        const Eigen::RowVector2d a = m.uv.row(t[0]).cast<double>(),
                                 b = m.uv.row(t[k]).cast<double>(),
                                 c = m.uv.row(t[k + 1]).cast<double>();
        uv_area += 0.5 * ((b - a).x() * (c - a).y() - (c - a).x() * (b - a).y());
        vector_area += 0.5 * (x.row(v[k]) - x.row(v[0]))
                                 .transpose()
                                 .cross((x.row(v[k + 1]) - x.row(v[0])).transpose());
      }
      if (uv_area <= 0) ++mirrored;
      const double projected = vector_area.cwiseAbs().maxCoeff();
      worst = std::max(worst, std::abs(uv_area / (ratio * projected) - 1.0));
    };
    for (Eigen::Index t = 0; t < m.triangles.rows(); ++t)
      face({m.triangles(t, 0), m.triangles(t, 1), m.triangles(t, 2)},
           {m.uv_triangles(t, 0), m.uv_triangles(t, 1), m.uv_triangles(t, 2)});
    for (Eigen::Index q = 0; q < m.quads.rows(); ++q)
      face({m.quads(q, 0), m.quads(q, 1), m.quads(q, 2), m.quads(q, 3)},
           {m.uv_quads(q, 0), m.uv_quads(q, 1), m.uv_quads(q, 2), m.uv_quads(q, 3)});
    CHECK(mirrored == 0);
    // float32 values: relative area errors of 1e-5 on the sphere's smallest faces.
    CHECK(worst < 1e-4);
    CHECK(m.uv.minCoeff() > 0.0f);
    CHECK(m.uv.maxCoeff() < 1.0f);
  };
  // A box 2 x 1 x 0.5 of outward quads: six faces on six tiles, no value shared between them.
  PolygonMesh box;
  box.points.resize(8, 3);
  for (int k = 0; k < 8; ++k)
    box.points.row(k) << 2.0 * (k & 1), (k >> 1) & 1, 0.5 * ((k >> 2) & 1);
  box.quads.resize(6, 4);
  box.quads << 0, 2, 3, 1, 4, 5, 7, 6, 0, 1, 5, 4, 2, 6, 7, 3, 0, 4, 6, 2, 1, 3, 7, 5;
  check(box.points, box, 2.0);
  CHECK(box.uv.rows() == 24);  // each corner of each face its own value: six islands
  // The +x face (1, 3, 7, 5) is on the first tile, u along -z: its corner at z = 0.5 is left.
  CHECK(box.uv(box.uv_quads(5, 3), 0) < box.uv(box.uv_quads(5, 0), 0));  // vertex 5 (z = 0.5)
  CHECK(box.uv(box.uv_quads(5, 0), 0) < 1.0f / 3);
  // A closed sphere of triangles (data/meshes/icosphere.obj, radius 0.5): faces in every
  // direction, all unmirrored, at one scale.
  const SurfaceMesh sphere = load_obj(std::string(DATADYN_DATA_DIR) + "/meshes/icosphere.obj");
  PolygonMesh m;
  m.points = sphere.vertices;
  m.triangles = sphere.triangles;
  check(sphere.vertices, m, 1.0);
}

TEST_CASE("vertex_normals: a cube's corners, a flat sheet, and vertices on no face") {
  // The unit cube as 6 outward quads (bit 0: x, bit 1: y, bit 2: z): every corner's normal is
  // the diagonal away from the centre, (±1, ±1, ±1)/sqrt(3) (the three faces have equal area).
  PolygonMesh cube;
  cube.points.resize(9, 3);  // vertex 8 is on no face
  for (int k = 0; k < 8; ++k) cube.points.row(k) << (k & 1), (k >> 1) & 1, (k >> 2) & 1;
  cube.points.row(8) << 5, 5, 5;
  cube.quads.resize(6, 4);
  cube.quads << 0, 2, 3, 1,  // z = 0, seen from -z
      4, 5, 7, 6,            // z = 1
      0, 1, 5, 4,            // y = 0
      2, 6, 7, 3,            // y = 1
      0, 4, 6, 2,            // x = 0
      1, 3, 7, 5;            // x = 1
  const Points3 n = vertex_normals(cube);
  for (int k = 0; k < 8; ++k) {
    const Eigen::Vector3d outward =
        (cube.points.row(k).transpose() - Eigen::Vector3d::Constant(0.5)).normalized();
    CHECK((n.row(k).transpose() - outward).norm() < 1e-15);
  }
  CHECK(n.row(8) == Eigen::RowVector3d(0, 1, 0));
  // Triangles of a sheet in the xz-plane, counter-clockwise seen from +y: every normal +y, also
  // on a sheet of triangles of very different areas.
  PolygonMesh sheet;
  sheet.points.resize(4, 3);
  sheet.points << 0, 0, 0, 1e-3, 0, 0, 0, 0, 1e3, 1e-3, 0, 1e3;
  sheet.triangles.resize(2, 3);
  sheet.triangles << 0, 2, 1, 1, 2, 3;
  const Points3 s = vertex_normals(sheet);
  for (int k = 0; k < 4; ++k) CHECK((s.row(k) - Eigen::RowVector3d(0, 1, 0)).norm() < 1e-15);
}

TEST_CASE("ply: binary little-endian vertices, attributes, colours and faces read back") {
  TempDir dir;
  const PolygonMesh m = random_mesh(100, 20, 10, 2);
  VertexAttribute stiffness{"stiffness", {}};
  stiffness.values.resize(100, 1);
  VertexAttribute normal{"normal", {}};
  normal.values.resize(100, 3);
  for (int i = 0; i < 100; ++i) {
    stiffness.values(i, 0) = 10.0f * i;
    normal.values.row(i) << 0.0f, 1.0f, static_cast<float>(i);
  }
  const VertexColors colors = colors_from_scalar(stiffness.values.col(0), 0.0, 990.0);
  write_ply(dir / "m.ply", m, {stiffness, normal}, &colors, {{"generator", "test 1"}});
  const auto d = test::read_ply(dir / "m.ply");
  REQUIRE(d.vertex_count == 100);
  CHECK(d.vertex_properties == std::vector<std::string>{"x", "y", "z", "stiffness", "nx", "ny",
                                                        "nz", "red", "green", "blue"});
  for (int i = 0; i < 100; ++i) {
    INFO("vertex " << i);
    CHECK(std::abs(d.vertex.at("x")[i] - m.points(i, 0)) <= kTol);
    CHECK(std::abs(d.vertex.at("y")[i] - m.points(i, 1)) <= kTol);
    CHECK(std::abs(d.vertex.at("z")[i] - m.points(i, 2)) <= kTol);
    CHECK(d.vertex.at("stiffness")[i] == 10.0 * i);
    CHECK(d.vertex.at("nz")[i] == i);
    CHECK(d.vertex.at("red")[i] == colors(i, 0));
  }
  // The ramp's ends: viridis dark blue at the minimum, yellow at the maximum.
  CHECK(d.vertex.at("blue")[0] == 84);
  CHECK(d.vertex.at("red")[99] == 253);
  REQUIRE(d.faces.size() == 30);
  CHECK(d.faces[0] == std::vector<int>{m.triangles(0, 0), m.triangles(0, 1), m.triangles(0, 2)});
  CHECK(d.faces[29] ==
        std::vector<int>{m.quads(9, 0), m.quads(9, 1), m.quads(9, 2), m.quads(9, 3)});
  CHECK(d.comments == std::vector<std::string>{"generator: test 1"});
}

namespace {

/// Six vertices (5 on no face), two triangles and a quad whose corners give vertex 2 and
/// vertex 1 a second texture coordinate each (seams), and vertex 1 its first one again through
/// another row of `uv` with the same value (not a seam).
PolygonMesh seam_mesh() {
  PolygonMesh m;
  m.points.resize(6, 3);
  m.points << 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 2, 1, 0, 9, 9, 9;
  m.triangles.resize(2, 3);
  m.triangles << 0, 1, 2, 2, 1, 3;
  m.quads.resize(1, 4);
  m.quads << 1, 3, 4, 2;
  m.uv.resize(9, 2);
  //      A        B        C        D        E        C2       B2       B (again) unused
  m.uv << 0, 0, 0.5f, 0, 0, 0.5f, 0.5f, 0.5f, 1, 0.5f, 0, 0.75f, 0.25f, 0, 0.5f, 0, 0.1f, 0.2f;
  m.uv_triangles.resize(2, 3);
  m.uv_triangles << 0, 1, 2, 5, 7, 3;
  m.uv_quads.resize(1, 4);
  m.uv_quads << 6, 3, 4, 5;
  return m;
}

}  // namespace

TEST_CASE("split_uv_seams: one vertex per value, copies after the mesh's in corner order") {
  const PolygonMesh m = seam_mesh();
  const SeamSplit s = split_uv_seams(m, 6);
  // Triangle 1 meets vertex 2 with C2 (copy 6), the quad vertex 1 with B2 (copy 7) and vertex 2
  // with C2 again (copy 6 once more); B through row 7 is B.
  CHECK(s.copied == std::vector<Eigen::Index>{2, 1});
  CHECK(s.seam_vertices == 2);
  Triangles t(2, 3);
  t << 0, 1, 2, 6, 1, 3;
  Quads q(1, 4);
  q << 7, 3, 4, 6;
  CHECK(s.triangles == t);
  CHECK(s.quads == q);
  TextureCoordinates uv(8, 2);
  uv << 0, 0, 0.5f, 0, 0, 0.5f, 0.5f, 0.5f, 1, 0.5f, 0, 0, 0, 0.75f, 0.25f, 0;
  CHECK(s.uv == uv);
  CHECK(s.original(7, 6) == 1);
  CHECK(s.original(4, 6) == 4);
  // Every corner reads its own value through the split faces.
  for (Eigen::Index i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c) CHECK(s.uv.row(t(i, c)) == m.uv.row(m.uv_triangles(i, c)));
  for (int c = 0; c < 4; ++c) CHECK(s.uv.row(q(0, c)) == m.uv.row(m.uv_quads(0, c)));
}

TEST_CASE("ply: seams are split, a copy repeats its original, with normals when smooth") {
  TempDir dir;
  const PolygonMesh m = seam_mesh();
  VertexAttribute stiffness{"stiffness", {}};
  stiffness.values.resize(6, 1);
  stiffness.values << 10, 11, 12, 13, 14, 15;
  const VertexColors colors = colors_from_scalar(stiffness.values.col(0), 10.0, 15.0);
  write_ply(dir / "s.ply", m, {stiffness}, &colors, {}, true);
  const auto d = test::read_ply(dir / "s.ply");
  REQUIRE(d.vertex_count == 8);
  CHECK(d.vertex_properties == std::vector<std::string>{"x", "y", "z", "nx", "ny", "nz", "s", "t",
                                                        "stiffness", "red", "green", "blue"});
  const Points3 normals = vertex_normals(m);
  const SeamSplit s = split_uv_seams(m, 6);
  for (Eigen::Index r = 0; r < 8; ++r) {
    INFO("PLY vertex " << r);
    const Eigen::Index i = s.original(r, 6);
    for (int k = 0; k < 3; ++k) {
      CHECK(d.vertex.at(std::string(1, "xyz"[k]))[r] == static_cast<float>(m.points(i, k)));
      CHECK(d.vertex.at(std::string("n") + "xyz"[k])[r] == static_cast<float>(normals(i, k)));
    }
    CHECK(d.vertex.at("s")[r] == s.uv(r, 0));
    CHECK(d.vertex.at("t")[r] == s.uv(r, 1));
    CHECK(d.vertex.at("stiffness")[r] == stiffness.values(i, 0));
    CHECK(d.vertex.at("red")[r] == colors(i, 0));
  }
  REQUIRE(d.faces.size() == 3);
  CHECK(d.faces[1] == std::vector<int>{6, 1, 3});
  CHECK(d.faces[2] == std::vector<int>{7, 3, 4, 6});
  // The mesh's own normals stand for the computed ones; without smooth shading there are none.
  VertexAttribute own{"normal", Eigen::MatrixXf::Zero(6, 3)};
  write_ply(dir / "own.ply", m, {own}, nullptr, {}, true);
  CHECK(test::read_ply(dir / "own.ply").vertex_properties ==
        std::vector<std::string>{"x", "y", "z", "s", "t", "nx", "ny", "nz"});
  write_ply(dir / "flat.ply", m);
  CHECK(test::read_ply(dir / "flat.ply").vertex_properties ==
        std::vector<std::string>{"x", "y", "z", "s", "t"});
}

TEST_CASE("ply: a point cloud has no face element") {
  TempDir dir;
  PolygonMesh m = random_mesh(10, 0, 0, 3);
  write_ply(dir / "p.ply", m);
  const std::string text = test::file_bytes(dir / "p.ply");
  CHECK(text.find("element face") == std::string::npos);
  CHECK(test::read_ply(dir / "p.ply").vertex_count == 10);
}

TEST_CASE("obj/ply: a face index outside the points is an IoError and leaves no file") {
  TempDir dir;
  PolygonMesh m = random_mesh(10, 2, 0, 4);
  m.triangles(1, 2) = 10;
  CHECK_THROWS_AS(write_obj(dir / "bad.obj", m, "m"), IoError);
  CHECK_THROWS_AS(write_ply(dir / "bad.ply", m), IoError);
  CHECK(files_in(dir.path()) == 0);
}

TEST_CASE("obj/ply: faces follow the mesh's face order, and one that is no permutation fails") {
  TempDir dir;
  PolygonMesh m = random_mesh(10, 2, 2, 5);  // triangles 0-1, quads 2-3 in face_order's numbers
  m.face_order = {2, 0, 3, 1};
  write_obj(dir / "m.obj", m, "m");
  write_ply(dir / "m.ply", m);
  const auto obj = test::read_obj(dir / "m.obj");
  const auto ply = test::read_ply(dir / "m.ply");
  const auto row = [](const auto& f, Eigen::Index i) {
    std::vector<int> r;
    for (Eigen::Index j = 0; j < f.cols(); ++j) r.push_back(f(i, j));
    return r;
  };
  const std::vector<std::vector<int>> expected{row(m.quads, 0), row(m.triangles, 0),
                                               row(m.quads, 1), row(m.triangles, 1)};
  CHECK(obj.f == expected);
  CHECK(ply.faces == expected);
  for (const std::vector<Eigen::Index>& bad :
       {std::vector<Eigen::Index>{0, 1, 2}, {0, 1, 2, 2}, {0, 1, 2, 4}, {-1, 0, 1, 2}}) {
    m.face_order = bad;
    CHECK_THROWS_WITH_AS(write_obj(dir / "bad.obj", m, "m"),
                         doctest::Contains("face order: expected each of the 4 faces once"),
                         IoError);
    CHECK_THROWS_AS(write_ply(dir / "bad.ply", m), IoError);
  }
  CHECK(files_in(dir.path()) == 2);
}

TEST_CASE("polygons: a hexagon stays one face in OBJ and PLY, with its normal, edges and seams") {
  // A regular hexagon of radius 1 in the xz-plane, counter-clockwise seen from +y, and a
  // triangle on its edge 0-1 (below it in y, so that vertices 0 and 1 get a tilted normal);
  // written hexagon first.
  TempDir dir;
  PolygonMesh m;
  m.points.resize(7, 3);
  for (int k = 0; k < 6; ++k) {
    const double a = -k * std::numbers::pi / 3;  // clockwise in (x, z) is counter-clockwise from +y
    m.points.row(k) << std::cos(a), 0, std::sin(a);
  }
  m.points.row(6) << 0.75, -1, -0.45;
  m.polygons = {{6}, {0, 1, 2, 3, 4, 5}};
  m.triangles.resize(1, 3);
  m.triangles << 1, 0, 6;
  m.face_order = {1, 0};
  // Newell's normal of the hexagon: +y, length twice its area (3 sqrt(3) / 2 for radius 1), so
  // its four vertices on no other face have the normal +y.
  const Points3 n = vertex_normals(m);
  for (int k = 2; k < 6; ++k) CHECK((n.row(k) - Eigen::RowVector3d(0, 1, 0)).norm() < 1e-15);
  CHECK(n(0, 1) < 1.0);
  CHECK(n(0, 1) > 0.0);
  // The hexagon's 6 edges and the triangle's 3 share one: 7 on the border.
  CHECK(border_edges(m).count == 7);
  write_obj(dir / "h.obj", m, "h");
  write_ply(dir / "h.ply", m);
  const std::vector<std::vector<int>> faces{{0, 1, 2, 3, 4, 5}, {1, 0, 6}};
  CHECK(test::read_obj(dir / "h.obj").f == faces);
  CHECK(test::read_ply(dir / "h.ply").faces == faces);
  // Face-varying values, a seam at vertices 0 and 1: the PLY's copies carry the triangle's.
  m.uv.resize(9, 2);
  for (int k = 0; k < 9; ++k) m.uv.row(k) << 0.1f * static_cast<float>(k), 0.5f;
  m.uv_polygons = {0, 1, 2, 3, 4, 5};
  m.uv_triangles.resize(1, 3);
  m.uv_triangles << 6, 7, 8;
  const SeamSplit split = split_uv_seams(m, 7);
  CHECK(split.copied == std::vector<Eigen::Index>{1, 0});
  CHECK(split.polygon_corners == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(split.triangles.row(0) == Eigen::RowVector3i(7, 8, 6));
  write_ply(dir / "seams.ply", m);
  CHECK(test::read_ply(dir / "seams.ply").faces ==
        std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5}, {7, 8, 6}});
  write_obj(dir / "seams.obj", m, "h");
  CHECK(test::read_obj(dir / "seams.obj").ft ==
        std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5}, {6, 7, 8}});
  // Box projection: the hexagon faces +y, so all its corners come from the +y tile (the third
  // of the bottom row: u in [2/3, 1], v in [0, 1/2]).
  box_projection_uv(m.points, m);
  REQUIRE(m.uv_polygons.size() == 6u);
  for (const int t : m.uv_polygons) {
    CHECK(m.uv(t, 0) > 2.0f / 3.0f);
    CHECK(m.uv(t, 1) < 0.5f);
  }
  // Bad polygons: an index outside the points, sizes that do not add up, and a face PLY's uchar
  // count cannot hold; each an IoError that leaves no file.
  TempDir bad;
  PolygonMesh outside = m;
  outside.polygons.corners[3] = 7;
  CHECK_THROWS_WITH_AS(write_obj(bad / "o.obj", outside, "o"),
                       doctest::Contains("polygon index outside [0, 7)"), IoError);
  PolygonMesh short_sizes = m;
  short_sizes.polygons.sizes = {5};
  CHECK_THROWS_WITH_AS(write_ply(bad / "s.ply", short_sizes),
                       doctest::Contains("their sizes add up to 5 corners, 6 given"), IoError);
  PolygonMesh large;
  large.points = Points3::Zero(300, 3);
  large.polygons.sizes = {300};
  for (int k = 0; k < 300; ++k) large.polygons.corners.push_back(k);
  CHECK_THROWS_WITH_AS(write_ply(bad / "l.ply", large),
                       doctest::Contains("a face of 300 corners; PLY's face lists"), IoError);
  write_obj(bad / "l.obj", large, "l");  // OBJ has no such limit
  CHECK(test::read_obj(bad / "l.obj").f.at(0).size() == 300u);
  CHECK(files_in(bad.path()) == 1);
}

TEST_CASE("pc2 and mdd: streamed frames read back, headers as specified") {
  TempDir dir;
  std::vector<Points3> frames;
  for (int f = 0; f < 5; ++f) frames.push_back(random_mesh(37, 0, 0, 10 + f).points);
  {
    Pc2Writer pc2(dir / "c.pc2", 37, 5, 3.0, 2.0);
    MddWriter mdd(dir / "c.mdd", 37, {0.0, 1 / 24.0, 2 / 24.0, 3 / 24.0, 4 / 24.0});
    for (const auto& x : frames) {
      pc2.write_frame(x);
      mdd.write_frame(x);
    }
    pc2.commit();
    mdd.commit();
  }
  const auto pc2 = test::read_pc2(dir / "c.pc2");
  const auto mdd = test::read_mdd(dir / "c.mdd");
  CHECK(pc2.points == 37);
  CHECK(pc2.frames == 5);
  CHECK(pc2.start == 3.0f);
  CHECK(pc2.rate == 2.0f);
  CHECK(mdd.points == 37);
  CHECK(mdd.frames == 5);
  CHECK(mdd.times[4] == doctest::Approx(4 / 24.0).epsilon(1e-7));
  // File sizes as the layouts say: 32-byte PC2 header; MDD 8 bytes + 4 per frame time.
  CHECK(std::filesystem::file_size(dir / "c.pc2") == 32 + 5 * 37 * 12);
  CHECK(std::filesystem::file_size(dir / "c.mdd") == 8 + 5 * 4 + 5 * 37 * 12);
  for (int f = 0; f < 5; ++f)
    for (int i = 0; i < 37; ++i) {
      CHECK((pc2.x[f][i] - frames[f].row(i).transpose()).cwiseAbs().maxCoeff() <= kTol);
      CHECK((mdd.x[f][i] - frames[f].row(i).transpose()).cwiseAbs().maxCoeff() <= kTol);
    }
}

TEST_CASE("pc2 and mdd: a short or ragged stream fails and leaves no file") {
  TempDir dir;
  const Points3 x = random_mesh(5, 0, 0, 1).points;
  {
    Pc2Writer pc2(dir / "short.pc2", 5, 3, 1, 1);
    pc2.write_frame(x);
    CHECK_THROWS_AS(pc2.commit(), IoError);  // 1 of 3 frames
  }
  {
    MddWriter mdd(dir / "ragged.mdd", 5, {0, 1});
    CHECK_THROWS_AS(mdd.write_frame(random_mesh(6, 0, 0, 1).points), IoError);
  }
  CHECK(files_in(dir.path()) == 0);
}

TEST_CASE("usda: fixed topology parses, with time-sampled points, extents and metadata") {
  TempDir dir;
  UsdaStage stage;
  stage.start_time_code = 1;
  stage.end_time_code = 3;
  stage.time_codes_per_second = 30;
  stage.metadata = {{"generator", "test 1"}, {"config", "{\"quote\": \"a \\\"b\\\"\"}\nline 2"}};
  const PolygonMesh m0 = random_mesh(40, 10, 5, 7);
  std::vector<PolygonMesh> frames;
  {
    UsdaWriter w(dir / "m.usda", stage, "my-cloth", false);
    for (int f = 1; f <= 3; ++f) {
      PolygonMesh m = m0;
      m.points = random_mesh(40, 0, 0, 20 + f).points;
      VertexAttribute s{"stiffness", Eigen::MatrixXf::Constant(40, 1, float(f))};
      w.write_frame(f, m, {s});
      frames.push_back(m);
    }
    w.commit();
  }
  CHECK(files_in(dir.path()) == 1);  // the spools are gone
  const auto layer = test::read_usda(dir / "m.usda");
  CHECK(layer.metadata.at("defaultPrim").text == "root");
  CHECK(layer.metadata.at("upAxis").text == "Y");
  CHECK(layer.metadata.at("timeCodesPerSecond").number == 30);
  CHECK(layer.metadata.at("startTimeCode").number == 1);
  CHECK(layer.metadata.at("endTimeCode").number == 3);
  const auto& custom = layer.metadata.at("customLayerData").dict;
  REQUIRE(custom.size() == 2);
  CHECK(custom[0].first == "string generator");
  CHECK(custom[1].second.text == stage.metadata[1].second);  // escapes round-trip
  REQUIRE(layer.prims.size() == 1);
  const auto* mesh = layer.prims[0].child("my_cloth");
  REQUIRE(mesh);
  CHECK(mesh->type == "Mesh");
  CHECK(mesh->attributes.at("subdivisionScheme").value.text == "none");
  CHECK(mesh->attributes.at("subdivisionScheme").type == "uniform token");
  const auto& counts = mesh->attributes.at("faceVertexCounts");
  REQUIRE(counts.has_default);
  REQUIRE(counts.value.items.size() == 15);
  CHECK(counts.value.items[0].number == 3);
  CHECK(counts.value.items[14].number == 4);
  CHECK(mesh->attributes.at("faceVertexIndices").value.items.size() == 10 * 3 + 5 * 4);
  CHECK(mesh->attributes.at("faceVertexIndices").value.items[3].number == m0.triangles(1, 0));
  const auto& points = mesh->attributes.at("points");
  CHECK(points.type == "point3f[]");
  REQUIRE(points.samples.size() == 3);
  for (int f = 0; f < 3; ++f) {
    CHECK(points.samples[f].first == f + 1);
    const auto& items = points.samples[f].second.items;
    REQUIRE(items.size() == 40);
    for (int i = 0; i < 40; ++i)
      for (int d = 0; d < 3; ++d)
        CHECK(std::abs(items[i].items[d].number - frames[f].points(i, d)) <= kTol);
    const auto& ext = mesh->attributes.at("extent").samples[f].second.items;
    for (int d = 0; d < 3; ++d) {
      CHECK(ext[0].items[d].number ==
            doctest::Approx(frames[f].points.col(d).minCoeff()).epsilon(1e-6));
      CHECK(ext[1].items[d].number ==
            doctest::Approx(frames[f].points.col(d).maxCoeff()).epsilon(1e-6));
    }
  }
  const auto& primvar = mesh->attributes.at("primvars:stiffness");
  CHECK(primvar.metadata.at("interpolation").text == "vertex");
  CHECK(primvar.samples[2].second.items[0].number == 3);
}

TEST_CASE("usda: a static attribute is one unsampled value, and one that changes kind is refused") {
  TempDir dir;
  const PolygonMesh m = random_mesh(10, 4, 0, 1);
  const VertexAttribute mass{"mass", Eigen::MatrixXf::Constant(10, 1, 2.5f), true};
  const VertexAttribute heat{"heat", Eigen::MatrixXf::Constant(10, 1, 1.0f), false};
  {
    UsdaWriter w(dir / "s.usda", UsdaStage{}, "m", false);
    w.write_frame(1, m, {mass, heat});
    w.write_frame(2, m, {mass, heat});
    w.commit();
  }
  const auto layer = test::read_usda(dir / "s.usda");
  const auto& mesh = *layer.prims[0].child("m");
  const auto& a = mesh.attributes.at("primvars:mass");
  CHECK(a.type == "float[]");
  REQUIRE(a.has_default);
  CHECK(a.samples.empty());
  REQUIRE(a.value.items.size() == 10);
  CHECK(a.value.items[9].number == 2.5);
  CHECK(a.metadata.at("interpolation").text == "vertex");
  CHECK(mesh.attributes.at("primvars:heat").samples.size() == 2);

  // An attribute that is static in one frame and per frame in another is no attribute of a cache.
  const auto refused = [&](const VertexAttribute& first, const char* message) {
    UsdaWriter w(dir / "k.usda", UsdaStage{}, "m", false);
    w.write_frame(1, m, {first});
    VertexAttribute later = first;
    later.is_static = !first.is_static;
    CHECK_THROWS_WITH_AS(w.write_frame(2, m, {later}), doctest::Contains(message), IoError);
  };
  refused(mass, "primvars:mass: static in the first frame");
  refused(heat, "primvars:heat: per frame in the first frame");
}

TEST_CASE("usda: varying topology time-samples the faces, and a fixed one rejects a new count") {
  TempDir dir;
  {
    UsdaWriter w(dir / "v.usda", UsdaStage{}, "water", true);
    w.write_frame(1, random_mesh(10, 4, 0, 1));
    w.write_frame(2, random_mesh(20, 0, 7, 2));
    w.commit();
  }
  const auto layer = test::read_usda(dir / "v.usda");
  const auto& mesh = *layer.prims[0].child("water");
  const auto& counts = mesh.attributes.at("faceVertexCounts");
  CHECK_FALSE(counts.has_default);
  REQUIRE(counts.samples.size() == 2);
  CHECK(counts.samples[0].second.items.size() == 4);
  CHECK(counts.samples[1].second.items.size() == 7);
  CHECK(mesh.attributes.at("points").samples[1].second.items.size() == 20);

  UsdaWriter fixed(dir / "f.usda", UsdaStage{}, "m", false);
  fixed.write_frame(1, random_mesh(10, 4, 0, 1));
  CHECK_THROWS_AS(fixed.write_frame(2, random_mesh(11, 4, 0, 1)), IoError);
}

TEST_CASE("usda: the test's parser rejects malformed layers (it can fail)") {
  CHECK_THROWS(test::UsdaParser("#usda 1.0\ndef Mesh \"m\" {\n int[] a = [1, 2\n}\n").parse());
  CHECK_THROWS(test::UsdaParser("def Mesh \"m\" {}\n").parse());
  CHECK_THROWS(test::UsdaParser("#usda 1.0\ndef Mesh \"m\" {\n point3f[] points.timeSamples = "
                                "{ 1: [(0, 0, 0)] 2: [] }\n}\n")
                   .parse());
  CHECK_NOTHROW(test::UsdaParser("#usda 1.0\ndef Mesh \"m\" {\n point3f[] points.timeSamples = "
                                 "{ 1: [(0, 0, 0)], 2: [], }\n}\n")
                    .parse());
}

TEST_CASE("usda: identifiers and strings are escaped") {
  CHECK(usda_identifier("my-mesh 2") == "my_mesh_2");
  CHECK(usda_identifier("2x") == "_2x");
  CHECK(usda_quote("a \"b\"\\\n") == "\"a \\\"b\\\"\\\\\\n\"");
}

TEST_CASE("atomic file: nothing under the real name until commit, and removed when abandoned") {
  TempDir dir;
  {
    AtomicFile f(dir / "a.txt");
    f.write("hello");
    CHECK_FALSE(std::filesystem::exists(dir / "a.txt"));
    CHECK(std::filesystem::exists(f.temporary_path()));
  }
  CHECK(files_in(dir.path()) == 0);
  AtomicFile g(dir / "b.txt");
  g.write("hi");
  g.commit();
  CHECK(test::file_bytes(dir / "b.txt") == "hi");
  CHECK(files_in(dir.path()) == 1);
  CHECK_THROWS_AS(AtomicFile(dir / "no" / "c.txt"), IoError);
}

TEST_CASE("held commits: a scope's files take their names together, or not at all") {
  TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    write_atomic(dir / name, text);
  };
  write("a.txt", "old a");
  write("b.h5.txt", "old b");
  {
    // Abandoned (the run failed): the old files stay, the finished temporaries go.
    HeldCommits held;
    write("a.txt", "new a");
    CacheWriter w(dir / "c.h5", Provenance{"test", "", "{}", ""});
    w.commit();
    CHECK(test::file_bytes(dir / "a.txt") == "old a");
    CHECK_FALSE(std::filesystem::exists(dir / "c.h5"));
    CHECK(files_in(dir.path()) == 4);  // two old files, two held temporaries
  }
  CHECK(files_in(dir.path()) == 2);
  CHECK(test::file_bytes(dir / "a.txt") == "old a");
  {
    // An inner scope hands its files to the outer one, which puts them all in place.
    HeldCommits outer;
    write("a.txt", "new a");
    {
      HeldCommits inner;
      write("b.h5.txt", "new b");
      inner.commit();
    }
    CHECK(test::file_bytes(dir / "b.h5.txt") == "old b");
    outer.commit();
  }
  CHECK(test::file_bytes(dir / "a.txt") == "new a");
  CHECK(test::file_bytes(dir / "b.h5.txt") == "new b");
  {
    // commit_held_files: in place now, whatever the scope does afterwards.
    HeldCommits held;
    write("a.txt", "kept a");
    commit_held_files();
    write("b.h5.txt", "dropped b");
  }
  CHECK(test::file_bytes(dir / "a.txt") == "kept a");
  CHECK(test::file_bytes(dir / "b.h5.txt") == "new b");
  CHECK(files_in(dir.path()) == 2);
}

TEST_CASE("check_writable_directory: missing, a file, or an unwritable directory fail") {
  TempDir dir;
  CHECK_NOTHROW(check_writable_directory(dir / "x.obj"));
  CHECK_THROWS_WITH_AS(check_writable_directory(dir / "no/x.obj"),
                       doctest::Contains("does not exist"), IoError);
  // The message names the first missing part, not a path with ".." in it that the reader would
  // have to resolve.
  const std::string missing_message = (dir / "no/deeper/../x.obj").string() +
                                      ": cannot write: directory " + (dir / "no").string() +
                                      " does not exist";
  CHECK_THROWS_WITH_AS(check_writable_directory(dir / "no/deeper/../x.obj"),
                       missing_message.c_str(), IoError);
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_WITH_AS(check_writable_directory(dir / "file/x.obj"),
                       doctest::Contains("is not a directory"), IoError);
  const std::string file_message = (dir / "file/sub/x.obj").string() +
                                   ": cannot write: " + (dir / "file").string() +
                                   " is not a directory";
  CHECK_THROWS_WITH_AS(check_writable_directory(dir / "file/sub/x.obj"), file_message.c_str(),
                       IoError);
  // /proc takes no new files, even from root.
  CHECK_THROWS_AS(check_writable_directory("/proc/x.obj"), IoError);
  CHECK(files_in(dir.path()) == 1);
}

TEST_CASE("an output path holding a directory, a device or a link is refused, not replaced") {
  // The finished file is renamed over the path: as root, `-o /dev/null` used to turn the device
  // into a regular file.
  TempDir dir;
  std::filesystem::create_directory(dir / "d.obj");
  std::ofstream(dir / "target") << "keep";
  std::filesystem::create_symlink(dir / "target", dir / "link.obj");
  for (const auto& p : {dir / "d.obj", dir / "link.obj", std::filesystem::path("/dev/null")}) {
    CAPTURE(p);
    CHECK_THROWS_WITH_AS(check_writable_directory(p),
                         doctest::Contains("exists and is not a regular file"), IoError);
    CHECK_THROWS_WITH_AS(AtomicFile{p}, doctest::Contains("exists and is not a regular file"),
                         IoError);
    CHECK_THROWS_WITH_AS(CacheWriter(p, Provenance{}),
                         doctest::Contains("exists and is not a regular file"), IoError);
  }
  CHECK(std::filesystem::is_directory(dir / "d.obj"));
  CHECK(std::filesystem::is_symlink(dir / "link.obj"));
  CHECK(std::filesystem::is_character_file("/dev/null"));
  CHECK(files_in(dir.path()) == 3);  // nothing else, no temporary file
  std::ofstream(dir / "plain.obj") << "old";
  CHECK_NOTHROW(check_writable_directory(dir / "plain.obj"));  // a file is replaced as before
}

TEST_CASE("same_file: relative names of a file not yet written compare equal") {
  // weakly_canonical("y.h5") stayed relative while "./y.h5" became absolute, so a report named
  // ./y.h5 was not seen to be the cache y.h5 and replaced it.
  TempDir dir;
  struct InDirectory {  // back to the old working directory however the test ends
    std::filesystem::path old = std::filesystem::current_path();
    explicit InDirectory(const std::filesystem::path& d) { std::filesystem::current_path(d); }
    ~InDirectory() { std::filesystem::current_path(old); }
  } in_dir(dir.path());
  CHECK(same_file("y.h5", "./y.h5"));
  CHECK(same_file("y.h5", "sub/../y.h5"));
  CHECK(same_file((dir / "y.h5").string(), "y.h5"));
  CHECK_FALSE(same_file("y.h5", "z.h5"));
  CHECK_FALSE(same_file("y.h5", "sub/y.h5"));
}

TEST_CASE("held commits: a group whose file cannot take its name puts the earlier ones back") {
  // The files of a run were renamed one by one: a failure at the second left the first new and
  // the second old, the mix HeldCommits is there to prevent.
  TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    write_atomic(dir / name, text);
  };
  write("a.txt", "old a");
  take_committed();
  for (const bool directory : {true, false}) {
    CAPTURE(directory);
    {
      HeldCommits held;
      write("a.txt", "new a");  // replaces a file
      write("n.txt", "new n");  // takes a free name
      write("b.txt", "new b");
      if (directory)  // found before any file is renamed
        std::filesystem::create_directories(dir / "b.txt" / "inside");
      else  // found only as its rename fails, after the other two were renamed
        std::filesystem::remove(temporary_path_for(dir / "b.txt"));
      CHECK_THROWS_WITH_AS(held.commit(), doctest::Contains("b.txt"), IoError);
    }
    CHECK(test::file_bytes(dir / "a.txt") == "old a");
    CHECK_FALSE(std::filesystem::exists(dir / "n.txt"));
    CHECK(take_committed().empty());  // the closing line names none of them
    // Nothing else is left: no temporary, no second name of the old a.txt.
    CHECK(files_in(dir.path()) == (directory ? 2 : 1));
    std::filesystem::remove_all(dir / "b.txt");
  }
  {
    HeldCommits held;
    write("a.txt", "new a");
    write("n.txt", "new n");
    held.commit();
  }
  CHECK(test::file_bytes(dir / "a.txt") == "new a");
  CHECK(test::file_bytes(dir / "n.txt") == "new n");
  CHECK(take_committed() == std::vector<std::filesystem::path>{dir / "a.txt", dir / "n.txt"});
  CHECK(files_in(dir.path()) == 2);
}

TEST_CASE("held commits: a rename that failed and was caught is not tried again") {
  // wave-edit stores its features cache with commit_held_files and goes on when that fails;
  // the failed file stayed held, and the run's own commit failed on its missing temporary.
  TempDir dir;
  std::filesystem::create_directories(dir / "blocked");
  HeldCommits held;
  {
    AtomicFile f(dir / "blocked" / "x.txt");
    f.write("x");
    f.commit();
  }
  // The target turns into a directory after the file was finished: its rename fails.
  std::filesystem::remove(dir / "blocked" / "x.txt");
  std::filesystem::create_directories(dir / "blocked" / "x.txt" / "inside");
  CHECK_THROWS_AS(commit_held_files(), IoError);
  {
    AtomicFile g(dir / "y.txt");
    g.write("y");
    g.commit();
  }
  // The same file finished twice in one scope is renamed once, with its last content (the
  // earlier entry renamed the same temporary, then failed on it).
  for (const char* text : {"1", "2"}) {
    AtomicFile twice(dir / "z.txt");
    twice.write(text);
    twice.commit();
  }
  held.commit();
  CHECK(test::file_bytes(dir / "y.txt") == "y");
  CHECK(test::file_bytes(dir / "z.txt") == "2");
}
