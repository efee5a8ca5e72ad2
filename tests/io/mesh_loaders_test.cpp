#include "io/mesh_loaders.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

#include "core/errors.hpp"
#include "core/mesh_invariants.hpp"
#include "core/mesh_topology.hpp"
#include "support/io_error.hpp"

namespace datadyn {
namespace {

namespace fs = std::filesystem;
using test::io_error_message;

// A fresh directory under the system temp dir, removed with its content at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("datadyn_mesh_loaders_" + std::to_string(::getpid()) +
                                         "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ------------------------------------------------------------------------------------------
// OBJ

TEST_CASE("load_obj: vertices, face corner forms, negative indices, polygons, ignored lines") {
  TempDir dir;
  const fs::path p = dir.write("cube.obj",
                               "# a unit cube, quads, with every corner syntax\n"
                               "mtllib cube.mtl\n"
                               "o cube\n"
                               "v 0 0 0\n"
                               "v 1 0 0  # trailing comment\n"
                               "v 1 1 0\r\n"  // CRLF line
                               "v 0 1 0\n"
                               "v 0 0 1\n"
                               "v 1 0 1 1.0\n"           // homogeneous w ignored
                               "v +1 1 1 0.5 0.5 0.5\n"  // vertex colour ignored
                               "v 0 1 \\\n"              // continuation line
                               "  1\n"
                               "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                               "vn 0 0 -1\n"
                               "g sides\ns off\nusemtl red\n"
                               "f 1 4 3 2\n"                  // bottom (z = 0), outward -z
                               "f 5/1 6/2 7/3 8/4\n"          // top
                               "f 1/1/1 2/2/1 6/3/1 5/4/1\n"  // y = 0
                               "f 2//1 3//1 7//1 6//1\n"      // x = 1
                               "f -5 -1 -2 -6\n"              // y = 1: 4 8 7 3
                               "f -8 -4 -1 -5\n"              // x = 0: 1 5 8 4
                               "l 1 2\n");
  const SurfaceMesh mesh = load_obj(p, ObjTexture::Read);
  REQUIRE(mesh.vertices.rows() == 8);
  REQUIRE(mesh.triangles.rows() == 12);
  // Exact: decimal integers are represented exactly.
  CHECK(mesh.vertices.row(1) == Eigen::RowVector3d(1, 0, 0));
  CHECK(mesh.vertices.row(2) == Eigen::RowVector3d(1, 1, 0));
  CHECK(mesh.vertices.row(5) == Eigen::RowVector3d(1, 0, 1));
  CHECK(mesh.vertices.row(6) == Eigen::RowVector3d(1, 1, 1));
  CHECK(mesh.vertices.row(7) == Eigen::RowVector3d(0, 1, 1));
  // Fan triangulation (c0, c_i, c_i+1), 0-based.
  CHECK(mesh.triangles.row(0) == Eigen::RowVector3i(0, 3, 2));
  CHECK(mesh.triangles.row(1) == Eigen::RowVector3i(0, 2, 1));
  CHECK(mesh.triangles.row(8) == Eigen::RowVector3i(3, 7, 6));  // from negative indices
  CHECK(mesh.triangles.row(10) == Eigen::RowVector3i(0, 4, 7));
  // A closed, outward surface of the unit cube: the divergence theorem gives volume 1 (exact
  // up to a few roundings of thirds: 1e-15).
  const test::SurfaceEdgeReport e = test::surface_edges(mesh.triangles);
  CHECK(e.non_two == 0);
  CHECK(e.unpaired_directed == 0);
  CHECK(test::divergence_volume(mesh.vertices, mesh.triangles) ==
        doctest::Approx(1.0).epsilon(1e-15));
  // Without ObjTexture::Read, only the geometry.
  CHECK(load_obj(p).uv.empty());
  // Faces with and without `vt`: those without get (0, 0), appended after the file's four, as
  // Blender gives them; the fan of the textured top quad keeps its indices.
  REQUIRE_FALSE(mesh.uv.empty());
  REQUIRE(mesh.uv.coordinates.rows() == 5);
  CHECK(mesh.uv.coordinates.row(4) == Eigen::RowVector2d(0, 0));
  CHECK(mesh.uv.corners.row(0) == Eigen::RowVector3i(4, 4, 4));  // bottom: `f 1 4 3 2`
  CHECK(mesh.uv.corners.row(2) == Eigen::RowVector3i(0, 1, 2));  // top: `f 5/1 6/2 7/3 8/4`
  CHECK(mesh.uv.corners.row(3) == Eigen::RowVector3i(0, 2, 3));
  CHECK(mesh.uv.corners.row(6) == Eigen::RowVector3i(4, 4, 4));  // x = 1: `f 2//1 ...`
}

TEST_CASE("load_obj: texture coordinates per corner, with seams, negative indices and fans") {
  TempDir dir;
  // Two quads folded along the edge 2-3 (x = 1), each its own texture island: vertices 2 and 3
  // have one coordinate in each quad (a seam). The second quad's corners use relative indices.
  const fs::path p = dir.write("islands.obj",
                               "v 0 0 0\nv 0 1 0\nv 1 0 0\nv 1 1 0\nv 1 0 -1\nv 1 1 -1\n"
                               "vt 0 0\nvt 0.5 0\nvt 0.5 1\nvt 0 1\n"
                               "f 1/1 3/2 4/3 2/4\n"
                               "vt 0.5 0\nvt 1 0\nvt 1 1\nvt 0.5\n"  // v defaults to 0
                               "f 3/-4 5/-3 6/-2 4/-1\n");
  const SurfaceMesh mesh = load_obj(p, ObjTexture::Read);
  REQUIRE(mesh.triangles.rows() == 4);
  REQUIRE_FALSE(mesh.uv.empty());
  REQUIRE(mesh.uv.coordinates.rows() == 8);
  REQUIRE(mesh.uv.corners.rows() == 4);
  CHECK(mesh.uv.coordinates.row(2) == Eigen::RowVector2d(0.5, 1));
  CHECK(mesh.uv.coordinates.row(7) == Eigen::RowVector2d(0.5, 0));
  // The fan of each quad takes its corners' texture indices with it.
  CHECK(mesh.uv.corners.row(0) == Eigen::RowVector3i(0, 1, 2));
  CHECK(mesh.uv.corners.row(1) == Eigen::RowVector3i(0, 2, 3));
  CHECK(mesh.uv.corners.row(2) == Eigen::RowVector3i(4, 5, 6));
  CHECK(mesh.uv.corners.row(3) == Eigen::RowVector3i(4, 6, 7));
  // Vertex 2 (0-based) is corner 1 of triangle 0 and corner 0 of triangle 2: two coordinates.
  CHECK(mesh.triangles(0, 1) == 2);
  CHECK(mesh.triangles(2, 0) == 2);
  CHECK(mesh.uv.coordinates.row(mesh.uv.corners(0, 1)) == Eigen::RowVector2d(0.5, 0));
  CHECK(mesh.uv.coordinates.row(mesh.uv.corners(2, 0)) == Eigen::RowVector2d(0.5, 0));
  CHECK(mesh.uv.corners(0, 1) != mesh.uv.corners(2, 0));
}

TEST_CASE("load_obj: forward references, pentagon fan, numbers with exponents") {
  TempDir dir;
  const fs::path p = dir.write("fan.obj",
                               "f 1 2 3 4 5\n"  // refers to vertices defined below
                               "v 1e0 0 0\nv 0.30901699437494745 0.95105651629515353 0\n"
                               "v -8.0901699437494734E-1 5.8778525229247325e-1 0\n"
                               "v -0.80901699437494734 -0.58778525229247336 0\n"
                               "v 3.0901699437494745e-01 -9.5105651629515353e-01 -0\n");
  const SurfaceMesh mesh = load_obj(p);
  REQUIRE(mesh.triangles.rows() == 3);
  CHECK(mesh.triangles.row(0) == Eigen::RowVector3i(0, 1, 2));
  CHECK(mesh.triangles.row(1) == Eigen::RowVector3i(0, 2, 3));
  CHECK(mesh.triangles.row(2) == Eigen::RowVector3i(0, 3, 4));
  // Regular pentagon on the unit circle, 17 digits: radius 1 to 1e-15.
  for (Eigen::Index v = 0; v < 5; ++v)
    CHECK(mesh.vertices.row(v).norm() == doctest::Approx(1.0).epsilon(1e-15));
}

// Signed area in the xy plane of triangle t of `mesh`.
double xy_area(const SurfaceMesh& mesh, Eigen::Index t) {
  const auto a = mesh.vertices.row(mesh.triangles(t, 0)),
             b = mesh.vertices.row(mesh.triangles(t, 1)),
             c = mesh.vertices.row(mesh.triangles(t, 2));
  return 0.5 * ((b.x() - a.x()) * (c.y() - a.y()) - (b.y() - a.y()) * (c.x() - a.x()));
}

TEST_CASE("load_obj: concave faces are cut inside their outline, and the faces are kept") {
  // A fan from the first corner covered the notch of a concave face: a triangle outside it,
  // turned over. Ear clipping keeps every triangle inside, so their areas are all positive (the
  // face is counter-clockwise in z) and add up to the face's.
  TempDir dir;
  // An arrowhead whose first corner's fan crosses the notch at (1, 0).
  SurfaceMesh mesh = load_obj(dir.write("dart.obj",
                                        "v 2 -1 0\nv 1 0 0\nv 2 1 0\nv 0 0 0\n"
                                        "f 1 2 3 4\n"));
  REQUIRE(mesh.triangles.rows() == 2);
  CHECK(xy_area(mesh, 0) > 0);
  CHECK(xy_area(mesh, 1) > 0);
  CHECK(xy_area(mesh, 0) + xy_area(mesh, 1) == doctest::Approx(1.0));
  CHECK(mesh.polygons.sizes == std::vector<int>{4});
  CHECK(mesh.polygons.corners == std::vector<int>{0, 1, 2, 3});

  // A comb of 5 teeth 2 m tall on a 1 m strip (22 corners, 20 m²), tilted out of the xy plane
  // so that the cut works in the face's own plane; then a convex quad and a triangle, which keep
  // the fan.
  std::string obj;
  std::vector<Eigen::Vector2d> outline{{0, 0}, {10, 0}};
  for (int x = 10; x > 0; x -= 2)
    for (const Eigen::Vector2d& q : {Eigen::Vector2d(x, 3), Eigen::Vector2d(x - 1, 3),
                                     Eigen::Vector2d(x - 1, 1), Eigen::Vector2d(x - 2, 1)})
      outline.push_back(q);
  const double area = 20.0;
  const double tilt = 0.3;  // rotation about x
  for (const auto& q : outline)
    obj += "v " + std::to_string(q.x()) + " " + std::to_string(q.y() * std::cos(tilt)) + " " +
           std::to_string(q.y() * std::sin(tilt)) + "\n";
  obj += "f";
  for (std::size_t i = 1; i <= outline.size(); ++i) obj += " " + std::to_string(i);
  obj += "\nv 20 0 0\nv 21 0 0\nv 21 1 0\nv 20 1 0\nf -4 -3 -2 -1\nf -4 -3 -2\n";
  mesh = load_obj(dir.write("comb.obj", obj));
  const auto n = static_cast<Eigen::Index>(outline.size());
  REQUIRE(mesh.triangles.rows() == n - 2 + 2 + 1);
  double sum = 0;
  for (Eigen::Index t = 0; t < n - 2; ++t) {
    // Back in the face's plane: y / cos(tilt) (the areas scale by cos(tilt)).
    const double a = xy_area(mesh, t) / std::cos(tilt);
    CHECK(a > 0);
    sum += a;
  }
  CHECK(sum == doctest::Approx(area).epsilon(1e-6));  // 6 printed digits of the corners
  CHECK(mesh.triangles.row(n - 2) == Eigen::RowVector3i(n, n + 1, n + 2));
  CHECK(mesh.triangles.row(n - 1) == Eigen::RowVector3i(n, n + 2, n + 3));
  CHECK(mesh.triangles.row(n) == Eigen::RowVector3i(n, n + 1, n + 2));
  CHECK(mesh.polygons.sizes == std::vector<int>{static_cast<int>(n), 4, 3});
}

TEST_CASE("load_obj: the shipped icosphere is a closed sphere of radius 0.5") {
  const SurfaceMesh mesh = load_obj(fs::path(DATADYN_DATA_DIR) / "meshes" / "icosphere.obj");
  CHECK(mesh.vertices.rows() == 42);
  CHECK(mesh.triangles.rows() == 80);
  // Written with 17 significant digits: radius 0.5 to a few ulps.
  for (Eigen::Index v = 0; v < mesh.vertices.rows(); ++v)
    CHECK(mesh.vertices.row(v).norm() == doctest::Approx(0.5).epsilon(1e-15));
  const test::SurfaceEdgeReport e = test::surface_edges(mesh.triangles);
  CHECK(e.non_two == 0);
  CHECK(e.unpaired_directed == 0);
  CHECK(e.vertices - e.edges + mesh.triangles.rows() == 2);  // sphere
  // Outward: the enclosed volume is positive and lies between that of the inscribed icosahedron,
  // (5/12)(3 + √5) a^3 with edge a = r / sin(2π/5), and that of the ball, (4/3) π r^3 (the
  // subdivided polytope contains the icosahedron and is inscribed in the sphere).
  const double r = 0.5;
  const double a = r / std::sin(2.0 * std::numbers::pi / 5.0);
  const double volume = test::divergence_volume(mesh.vertices, mesh.triangles);
  CHECK(volume > 5.0 / 12.0 * (3.0 + std::sqrt(5.0)) * a * a * a);
  CHECK(volume < 4.0 / 3.0 * std::numbers::pi * r * r * r);
}

TEST_CASE("load_obj: malformed files give IoError with file, line, text and expectation") {
  TempDir dir;
  struct Case {
    const char* name;
    const char* text;
    const char* line;      // "file:line:" part
    const char* expected;  // a substring of the message
  };
  const Case cases[] = {
      {"range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n# c\nf 1 2 57\n",
       ":6:", "face index 57 out of range (file has 4 vertices)"},
      {"zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", ":4:", "face index 0 is invalid"},
      {"number.obj", "v 0 0 0\nv 1 abc 0\n", ":2:", "expected a number for vertex y, got 'abc'"},
      {"short.obj", "v 0 0\n", ":1:", "vertex has 2 coordinates, expected 'v x y z'"},
      {"nan.obj", "v 0 nan 0\n", ":1:", "expected a finite number for vertex y, got 'nan'"},
      {"two.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n", ":3:", "face has 2 corners, expected at least 3"},
      {"relative.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n",
       ":4:", "relative face index -4 points before the first vertex (3 vertices read so far)"},
      {"corner.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n",
       ":4:", "expected a face corner 'v', 'v/vt', 'v/vt/vn' or 'v//vn', got '1/1/1/1'"},
      {"texture.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/x 2 3\n",
       ":4:", "expected an integer for a texture index, got 'x'"},
      {"overflow.obj", "v 0 0 0\nf 1 1 99999999999999999999\n", ":2:", "out of range"},
      {"vt_range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/1 3/2\n",
       ":5:", "texture index 2 out of range (file has 1 texture coordinates)"},
      {"vt_zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/0 2/1 3/1\n",
       ":5:", "texture index 0 is invalid"},
      {"vt_relative.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/-2 2/1 3/1\n", ":5:",
       "relative texture index -2 points before the first texture coordinate (1 texture "
       "coordinates read so far)"},
      {"vt_empty.obj", "v 0 0 0\nvt\n", ":2:", "texture coordinate without a value"},
      {"vt_number.obj", "v 0 0 0\nvt 0 y\n",
       ":2:", "expected a number for texture coordinate v, got 'y'"},
      {"vt_float.obj", "v 0 0 0\nvt 1e39 0\n",
       ":2:", "expected texture coordinate u within float32's range, got '1e39'"},
      {"empty.obj", "# nothing\n\n", ":2:", "end of file without a vertex"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const fs::path p = dir.write(c.name, c.text);
    const std::string message = io_error_message([&] { load_obj(p, ObjTexture::Read); });
    INFO("message: " << message);
    CHECK(contains(message, p.string() + c.line));
    CHECK(contains(message, c.expected));
    // A body or a pose reads only the geometry: bad texture coordinates do not stop it.
    if (std::string(c.name).rfind("vt_", 0) == 0) CHECK(load_obj(p).vertices.rows() >= 1);
  }
  // The line number is that of the face, also when the range check happens at the end.
  const fs::path late = dir.write("late.obj", "f 1 2 3\nf 1 2 9\nv 0 0 0\nv 1 0 0\nv 0 1 0\n");
  CHECK(contains(io_error_message([&] { load_obj(late); }),
                 late.string() + ":2: face index 9 out of range (file has 3 vertices)"));
}

TEST_CASE("load_obj: a missing file names the file") {
  TempDir dir;
  const fs::path p = dir.path() / "missing.obj";
  const std::string message = io_error_message([&] { load_obj(p); });
  CHECK(contains(message, p.string()));
  CHECK(contains(message, "no such file"));
  CHECK(contains(io_error_message([&] { load_obj(dir.path()); }),
                 dir.path().string() + ": is a directory"));
}

// ------------------------------------------------------------------------------------------
// TetGen

// Two tets filling the triangular prism-free "double tet" of the unit corner, written in TetGen
// syntax with the given first index, attributes and markers.
constexpr const char* kNode1 =
    "# two tets glued on a face\n"
    "5 3 1 1  # points dim attrs markers\n"
    "1  0 0 0   7.5 1\n"
    "2  1 0 0   7.5 1\n"
    "\n"
    "3  0 1 0   7.5 1\n"
    "4  0 0 1   7.5 0\n"
    "5  1 1 1   7.5 1\n"
    "# Generated by hand\n";
constexpr const char* kEle1 =
    "2 4 1\n"
    "1  1 2 3 4  10\n"
    "2  5 2 3 4  20  # inverted in the file: 5 2 3 4 has negative volume\n";

TEST_CASE("load_tetgen: 1-based with attributes and markers, read by stem, .node or .ele path") {
  TempDir dir;
  dir.write("pair.node", kNode1);
  dir.write("pair.ele", kEle1);
  for (const fs::path& p :
       {dir.path() / "pair", dir.path() / "pair.node", dir.path() / "pair.ele"}) {
    INFO(p.string());
    const TetMesh mesh = load_tetgen(p);
    REQUIRE(mesh.vertices.rows() == 5);
    REQUIRE(mesh.tets.rows() == 2);
    CHECK(mesh.vertices.row(4) == Eigen::RowVector3d(1, 1, 1));
    CHECK(mesh.tets.row(0) == Eigen::RowVector4i(0, 1, 2, 3));
    // Second tet (4, 1, 2, 3) has negative volume: vertices 2 and 3 swapped.
    CHECK(mesh.tets.row(1) == Eigen::RowVector4i(4, 1, 3, 2));
    const Eigen::VectorXd v = tet_volumes(mesh.vertices, mesh.tets);
    // Exact data: 1/6 for the corner tet, (1 1 1)-tet over the face x + y + z = 1: 2 * 1/6.
    CHECK(v(0) == doctest::Approx(1.0 / 6.0).epsilon(1e-15));
    CHECK(v(1) == doctest::Approx(2.0 / 6.0).epsilon(1e-15));
  }
}

TEST_CASE("load_tetgen: 0-based numbering and second-order elements") {
  TempDir dir;
  dir.write("zero.node", "4 3 0 0\n0 0 0 0\n1 2 0 0\n2 0 2 0\n3 0 0 2\n");
  // 10 nodes per tet: the 6 edge nodes (here any valid indices) are skipped.
  dir.write("zero.ele", "1 10 0\n0 0 1 2 3 0 1 2 3 0 1\n");
  const TetMesh mesh = load_tetgen(dir.path() / "zero");
  CHECK(mesh.tets.row(0) == Eigen::RowVector4i(0, 1, 2, 3));
  CHECK(tet_volumes(mesh.vertices, mesh.tets)(0) == doctest::Approx(8.0 / 6.0).epsilon(1e-15));
}

TEST_CASE("load_tetgen: the shipped TetGen cube fills the unit cube") {
  const TetMesh mesh = load_tetgen(fs::path(DATADYN_DATA_DIR) / "meshes" / "cube.ele");
  CHECK(mesh.vertices.rows() == 75);
  CHECK(mesh.tets.rows() == 153);
  const Eigen::VectorXd v = tet_volumes(mesh.vertices, mesh.tets);
  CHECK(v.minCoeff() > 0.0);
  // TetGen prints 16 significant digits: coordinates to ~1e-16, a 153-term sum to ~1e-14.
  CHECK(v.sum() == doctest::Approx(1.0).epsilon(1e-12));
  const Triangles boundary = boundary_triangles(mesh.tets);
  CHECK(test::surface_edges(boundary).non_two == 0);
  CHECK(test::divergence_volume(mesh.vertices, boundary) == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("load_tetgen: malformed files give IoError with file, line, text and expectation") {
  TempDir dir;
  struct Case {
    const char* stem;
    const char* node;
    const char* ele;
    const char* file;  // which file the message names: "node" or "ele"
    const char* line;
    const char* expected;
  };
  const char* good_node = "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n";
  const char* good_ele = "1 4 0\n1 1 2 3 4\n";
  const Case cases[] = {
      {"dim", "4 2 0 0\n", good_ele, "node", ":1:", "dimension 2, expected 3"},
      {"count", "4 3 0 0\n1 0 0 0\n2 1 0\n", good_ele, "node",
       ":3:", "found 3 numbers, expected 4 (<index> x y z)"},
      {"attrs", "4 3 1 0\n1 0 0 0\n", good_ele, "node",
       ":2:", "found 4 numbers, expected 5 (<index> x y z <attributes>)"},
      {"coord", "4 3 0 0\n1 0 0 0\n2 1 0 zero\n", good_ele, "node",
       ":3:", "expected a number for point z, got 'zero'"},
      {"first", "4 3 0 0\n5 0 0 0\n", good_ele, "node",
       ":2:", "first point index 5, expected 0 or 1"},
      {"gap", "4 3 0 0\n1 0 0 0\n3 1 0 0\n", good_ele, "node",
       ":3:", "point index 3, expected 2 (indices must be consecutive)"},
      {"truncated", "4 3 0 0\n1 0 0 0\n2 1 0 0\n", good_ele, "node",
       ":3:", "file ends after 2 points, the header says 4"},
      {"extra", "2 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n", good_ele, "node",
       ":4:", "unexpected data '3 0 1 0' after the last point"},
      {"markers", "4 3 0 2\n", good_ele, "node", ":1:", "boundary marker flag 2, expected 0 or 1"},
      {"nodes", good_node, "1 6 0\n", "ele", ":1:", "nodes per tet 6, expected 4 or 10"},
      {"index", good_node, "# tets\n1 4 0\n1 1 2 3 57\n", "ele",
       ":3:", "node index 57 out of range (index.node has 4 points numbered 1..4)"},
      {"zero_based_ele", good_node, "1 4 0\n1 0 1 2 3\n", "ele",
       ":2:", "node index 0 out of range (zero_based_ele.node has 4 points numbered 1..4)"},
      {"tetindex", good_node, "1 4 0\n0 1 2 3 4\n", "ele",
       ":2:", "tetrahedron index 0, expected 1"},
      {"flat", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n", good_ele, "ele",
       ":2:", "tetrahedron 1 has zero volume"},
      {"emptyele", good_node, "# no data\n", "ele",
       ":1:", "no data in the file, expected the header"},
  };
  for (const Case& c : cases) {
    INFO(c.stem);
    const fs::path node = dir.write(std::string(c.stem) + ".node", c.node);
    const fs::path ele = dir.write(std::string(c.stem) + ".ele", c.ele);
    const std::string message = io_error_message([&] { load_tetgen(dir.path() / c.stem); });
    INFO("message: " << message);
    const fs::path& named = std::string(c.file) == "node" ? node : ele;
    CHECK(contains(message, named.string() + c.line));
    CHECK(contains(message, c.expected));
  }
}

TEST_CASE("load_tetgen: a missing .node or .ele names the file") {
  TempDir dir;
  CHECK(contains(io_error_message([&] { load_tetgen(dir.path() / "none.ele"); }),
                 (dir.path() / "none.node").string()));
  dir.write("half.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n");
  const std::string message = io_error_message([&] { load_tetgen(dir.path() / "half.node"); });
  CHECK(contains(message, (dir.path() / "half.ele").string()));
  CHECK(contains(message, "no such file"));
}

}  // namespace
}  // namespace datadyn
