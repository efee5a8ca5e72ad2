#include "io/tetrahedralize.hpp"

#include <tetgen.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {

namespace {

// Shortest decimal that reads back to the same double (TetGen's switch parser accepts exponents).
std::string shortest(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  DATADYN_CHECK(ec == std::errc());
  return std::string(buffer, end);
}

// A length for messages: "0.5", "1e+308".
std::string approx(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

const char* const kWhere = "cannot fill the surface with tetrahedra: ";
// A million kilometres: far beyond any scene, far below where TetGen's products overflow.
constexpr double kLargestCoordinate = 1e9;

// Throws IoError unless the surface is a valid closed edge-manifold triangle mesh. Triangles and
// vertices are counted from 1 in its messages, as an OBJ file counts them (a triangle of an OBJ
// of triangles is its face of that number).
void check_closed_surface(const SurfaceMesh& surface) {
  const Eigen::Index V = surface.vertices.rows(), T = surface.triangles.rows();
  if (V < 4 || T < 4)
    throw IoError(std::string(kWhere) + "the surface has " + std::to_string(V) + " vertices and " +
                  std::to_string(T) + " triangles, expected a closed surface (at least 4 of each)");
  if (!surface.vertices.allFinite())
    throw IoError(std::string(kWhere) + "the surface has a non-finite vertex coordinate");
  std::vector<std::pair<int, int>> edges;
  edges.reserve(static_cast<std::size_t>(T) * 3);
  for (Eigen::Index t = 0; t < T; ++t) {
    for (int c = 0; c < 3; ++c) {
      const int v = surface.triangles(t, c);
      if (v < 0 || v >= V)
        throw IoError(std::string(kWhere) + "triangle " + std::to_string(t + 1) +
                      " has vertex index " + std::to_string(v + 1) + ", expected 1.." +
                      std::to_string(V));
    }
    for (int c = 0; c < 3; ++c) {
      const int a = surface.triangles(t, c), b = surface.triangles(t, (c + 1) % 3);
      if (a == b)
        throw IoError(std::string(kWhere) + "triangle " + std::to_string(t + 1) +
                      " is degenerate (vertex " + std::to_string(a + 1) + " twice)");
      edges.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  std::sort(edges.begin(), edges.end());
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i + 1;
    while (j < edges.size() && edges[j] == edges[i]) ++j;
    if (j - i != 2)
      throw IoError(std::string(kWhere) + "the surface is not closed: edge (" +
                    std::to_string(edges[i].first + 1) + ", " +
                    std::to_string(edges[i].second + 1) + ") belongs to " + std::to_string(j - i) +
                    " triangle" + (j - i == 1 ? "" : "s") + ", expected 2 (" +
                    (j - i == 1 ? "a hole or crack" : "a non-manifold edge") + ")");
    i = j;
  }
  // TetGen's predicates multiply coordinates (a 1e308 overflows to infinity and crashed it) and
  // need a solid (all vertices at one point, or in one plane, crashed it too).
  const double largest = surface.vertices.cwiseAbs().maxCoeff();
  if (largest > kLargestCoordinate)
    throw IoError(std::string(kWhere) + "the surface has a vertex coordinate of " +
                  approx(largest) + " m, expected at most " + approx(kLargestCoordinate) +
                  " m in magnitude");
  const Eigen::Vector3d extent =
      surface.vertices.colwise().maxCoeff() - surface.vertices.colwise().minCoeff();
  if (!(extent.minCoeff() > 1e-9 * extent.maxCoeff()))
    throw IoError(std::string(kWhere) + "the surface is flat (its bounding box is " +
                  approx(extent.x()) + " x " + approx(extent.y()) + " x " + approx(extent.z()) +
                  " m), expected a closed surface around a solid");
}

[[noreturn]] void rethrow_tetgen_code(int code, const std::string& switches) {
  const std::string prefix = std::string(kWhere) + "TetGen (switches \"" + switches +
                             "\") failed with code " + std::to_string(code) + ": ";
  switch (code) {
    case 1:
      throw RunError(prefix + "out of memory (lower the refinement: a larger max_volume)");
    case 2:
      throw RunError(prefix + "internal error in TetGen");
    case 3:
      throw IoError(prefix +
                    "the surface intersects itself; expected a non-self-intersecting "
                    "closed surface (repair it, e.g. in Blender's 3D-Print toolbox)");
    case 4:
      throw IoError(prefix +
                    "a very small input feature (a vertex or edge almost touching a "
                    "triangle); expected a clean surface");
    case 5:
      throw IoError(prefix +
                    "two surface triangles are almost touching; expected a clean "
                    "surface (or set preserve_surface)");
    case 10:
      throw IoError(prefix + "invalid input (bad switches or surface)");
    default:
      throw RunError(prefix + "unknown error");
  }
}

// Copies the surface into a TetGen PLC: the points and one triangle facet per triangle. tetgenio
// frees its arrays with delete[] in its destructor, so they are allocated with new[].
void fill_tetgen_input(const SurfaceMesh& surface, tetgenio& in) {
  in.firstnumber = 0;
  in.numberofpoints = static_cast<int>(surface.vertices.rows());
  in.pointlist = new REAL[static_cast<std::size_t>(in.numberofpoints) * 3];
  for (int v = 0; v < in.numberofpoints; ++v)
    for (int d = 0; d < 3; ++d) in.pointlist[3 * v + d] = surface.vertices(v, d);
  in.numberoffacets = static_cast<int>(surface.triangles.rows());
  in.facetlist = new tetgenio::facet[static_cast<std::size_t>(in.numberoffacets)];
  for (int t = 0; t < in.numberoffacets; ++t) {
    tetgenio::facet& f = in.facetlist[t];
    tetgenio::init(&f);
    f.numberofpolygons = 1;
    f.polygonlist = new tetgenio::polygon[1];
    tetgenio::init(&f.polygonlist[0]);
    f.polygonlist[0].numberofvertices = 3;
    f.polygonlist[0].vertexlist = new int[3];
    for (int c = 0; c < 3; ++c) f.polygonlist[0].vertexlist[c] = surface.triangles(t, c);
  }
}

/// Removes the points after the first `kept` that no tet uses, renumbering the tets. With J
/// TetGen keeps every point, and quality refinement can leave an added point in no tet: a vertex
/// without mass or stiffness, which makes a simulation's system singular.
void drop_unused_steiner_points(TetMesh& mesh, Eigen::Index kept) {
  const Eigen::Index n = mesh.vertices.rows();
  std::vector<char> used(static_cast<std::size_t>(n), 0);
  for (Eigen::Index t = 0; t < mesh.tets.rows(); ++t)
    for (int c = 0; c < 4; ++c) used[static_cast<std::size_t>(mesh.tets(t, c))] = 1;
  std::vector<int> index(static_cast<std::size_t>(n), -1);
  Eigen::Index next = 0;
  for (Eigen::Index v = 0; v < n; ++v)
    if (v < kept || used[static_cast<std::size_t>(v)]) {
      index[static_cast<std::size_t>(v)] = static_cast<int>(next);
      mesh.vertices.row(next++) = mesh.vertices.row(v);
    }
  if (next == n) return;
  mesh.vertices.conservativeResize(next, 3);
  for (Eigen::Index t = 0; t < mesh.tets.rows(); ++t)
    for (int c = 0; c < 4; ++c) mesh.tets(t, c) = index[static_cast<std::size_t>(mesh.tets(t, c))];
}

}  // namespace

std::string tetgen_switches(const TetrahedralizeOptions& options) {
  std::string s = "pzJ";
  if (options.radius_edge_ratio > 0.0) s += "q" + shortest(options.radius_edge_ratio);
  if (options.max_volume > 0.0) s += "a" + shortest(options.max_volume);
  if (options.preserve_surface) s += "Y";
  if (options.quiet) s += "Q";
  return s;
}

TetMesh tetrahedralize_surface(const SurfaceMesh& surface, const TetrahedralizeOptions& options) {
  DATADYN_CHECK_GE(options.max_volume, 0.0);
  DATADYN_CHECK(options.radius_edge_ratio == 0.0 || options.radius_edge_ratio >= 1.0);
  check_closed_surface(surface);

  // TetGen 1.5.0 can crash (not throw) on a self-intersecting surface, so its detection pass
  // (switch d) runs first: it reports the intersecting triangles in trifacelist, or none.
  {
    tetgenio in, out;
    fill_tetgen_input(surface, in);
    char detect[] = "pzJdQ";
    try {
      tetrahedralize(detect, &in, &out);
    } catch (int code) {
      rethrow_tetgen_code(code, detect);
    }
    if (out.numberoftrifaces > 0) {
      const int* t = out.trifacelist;
      const int base = out.firstnumber;
      throw IoError(std::string(kWhere) + "the surface intersects or touches itself (" +
                    std::to_string(out.numberoftrifaces) +
                    " triangles involved, e.g. the one with vertices (" +
                    std::to_string(t[0] - base) + ", " + std::to_string(t[1] - base) + ", " +
                    std::to_string(t[2] - base) +
                    ")); expected a non-self-intersecting closed surface (repair it, e.g. with "
                    "Blender's 3D-Print toolbox)");
    }
  }

  tetgenio in;
  fill_tetgen_input(surface, in);
  const std::string switches = tetgen_switches(options);
  std::vector<char> buffer(switches.begin(), switches.end());
  buffer.push_back('\0');
  tetgenio out;
  try {
    tetrahedralize(buffer.data(), &in, &out);
  } catch (int code) {
    rethrow_tetgen_code(code, switches);
  }

  if (out.numberoftetrahedra <= 0 || out.numberofpoints < in.numberofpoints)
    throw RunError(std::string(kWhere) + "TetGen (switches \"" + switches + "\") returned " +
                   std::to_string(out.numberoftetrahedra) + " tetrahedra on " +
                   std::to_string(out.numberofpoints) + " points, expected at least one tet on " +
                   "at least the " + std::to_string(in.numberofpoints) + " input points");
  TetMesh mesh;
  mesh.vertices.resize(out.numberofpoints, 3);
  for (int v = 0; v < out.numberofpoints; ++v)
    for (int d = 0; d < 3; ++d) mesh.vertices(v, d) = out.pointlist[3 * v + d];
  mesh.tets.resize(out.numberoftetrahedra, 4);
  for (int t = 0; t < out.numberoftetrahedra; ++t)
    for (int c = 0; c < 4; ++c)
      mesh.tets(t, c) = out.tetrahedronlist[t * out.numberofcorners + c] - out.firstnumber;
  drop_unused_steiner_points(mesh, in.numberofpoints);
  mesh.tets = orient_tets_positive(mesh.vertices, mesh.tets);
  const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
  Eigen::Index flat = 0;
  if (volumes.minCoeff(&flat) <= 0.0)
    throw RunError(std::string(kWhere) + "TetGen (switches \"" + switches + "\") returned tet " +
                   std::to_string(flat) + " with zero volume, expected positive volumes");
  return mesh;
}

}  // namespace datadyn
