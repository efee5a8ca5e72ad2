#include "io/mesh_loaders.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "core/mesh_topology.hpp"

namespace datadyn {

namespace {

// Reads a text file line by line, strips '\r' and '#' comments, and builds error messages of the
// form `file:line: message`.
class LineReader {
 public:
  explicit LineReader(std::filesystem::path path) : path_(std::move(path)), in_(path_) {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec))
      throw IoError(path_.string() + ": is a directory, expected a mesh file");
    if (!in_) {
      const bool exists = std::filesystem::exists(path_, ec);
      throw IoError(path_.string() + ": cannot open for reading (" +
                    (exists ? "permission denied or not a regular file" : "no such file") + ")");
    }
  }

  // Next line (comment stripped), joining lines that end in a backslash when `continuation`.
  // line() is then the number of its first physical line.
  bool next(std::string& out, bool continuation = false) {
    out.clear();
    std::string physical;
    bool first = true;
    while (std::getline(in_, physical)) {
      ++physical_line_;
      if (first) line_ = physical_line_;
      first = false;
      if (!physical.empty() && physical.back() == '\r') physical.pop_back();
      if (const auto hash = physical.find('#'); hash != std::string::npos) physical.resize(hash);
      if (continuation && !physical.empty() && physical.back() == '\\') {
        physical.back() = ' ';
        out += physical;
        continue;
      }
      out += physical;
      return true;
    }
    if (in_.bad()) fail("read error");
    return !first;
  }

  int line() const { return line_; }
  // Number of the last physical line read (at end of file: the file's line count).
  int last_line() const { return physical_line_; }
  const std::filesystem::path& path() const { return path_; }

  [[noreturn]] void fail(const std::string& message) const { fail_at(line_, message); }
  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw IoError(path_.string() + ":" + std::to_string(line) + ": " + message);
  }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  int line_ = 0;
  int physical_line_ = 0;
};

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\v' || s[i] == '\f')) ++i;
    std::size_t j = i;
    while (j < s.size() && !(s[j] == ' ' || s[j] == '\t' || s[j] == '\v' || s[j] == '\f')) ++j;
    if (j > i) tokens.push_back(s.substr(i, j - i));
    i = j;
  }
  return tokens;
}

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

double parse_double(const LineReader& reader, std::string_view token, const std::string& what) {
  double value = 0.0;
  std::string_view t = token;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);  // from_chars rejects a leading '+'
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty())
    reader.fail("expected a number for " + what + ", got " + in_quotes(token));
  if (!std::isfinite(value))
    reader.fail("expected a finite number for " + what + ", got " + in_quotes(token));
  return value;
}

long long parse_integer(const LineReader& reader, std::string_view token, const std::string& what) {
  long long value = 0;
  std::string_view t = token;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec == std::errc::result_out_of_range)
    reader.fail("integer " + in_quotes(token) + " for " + what + " is out of range");
  if (ec != std::errc() || end != t.data() + t.size() || t.empty())
    reader.fail("expected an integer for " + what + ", got " + in_quotes(token));
  return value;
}

// ---------------------------------------------------------------------------------------------
// OBJ

struct PendingFace {
  std::size_t first = 0, count = 0;  // its corners in the pending corner lists
  int line = 0;
};

/// The triangles of a polygon with corners p[0..n) (n >= 3) as corner positions in it, three per
/// triangle. A convex polygon is fanned from its first corner. A concave one is cut by ear
/// clipping in the plane of its Newell normal, so that no triangle lies outside it (a fan covers
/// the outside of a concave corner, as Blender's importer does not); the ears are tried in fan
/// order, which gives the fan again wherever it fits. A polygon with no ear left (self-crossing
/// or degenerate) is fanned for the rest.
std::vector<std::size_t> triangulate_polygon(const std::vector<Eigen::Vector3d>& p) {
  const std::size_t n = p.size();
  std::vector<std::size_t> out;
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();
  for (std::size_t i = 0; i < n; ++i) normal += p[i].cross(p[(i + 1) % n]);
  // Projection: drop the normal's largest axis, keep the orientation.
  int drop = 0;
  normal.cwiseAbs().maxCoeff(&drop);
  const int a = (drop + 1) % 3, b = (drop + 2) % 3;
  const double sign = normal[drop] < 0 ? -1.0 : 1.0;
  const auto cross2 = [&](std::size_t i, std::size_t j, std::size_t k) {
    return sign *
           ((p[j][a] - p[i][a]) * (p[k][b] - p[i][b]) - (p[j][b] - p[i][b]) * (p[k][a] - p[i][a]));
  };
  bool convex = true;
  for (std::size_t i = 0; i < n && convex; ++i)
    convex = cross2((i + n - 1) % n, i, (i + 1) % n) >= 0;
  std::vector<std::size_t> left(n);
  for (std::size_t i = 0; i < n; ++i) left[i] = i;
  if (!convex) {
    while (left.size() > 3) {
      bool clipped = false;
      for (std::size_t k = 1; k < left.size() && !clipped; ++k) {
        const std::size_t i = left[k - 1], j = left[k], l = left[(k + 1) % left.size()];
        if (!(cross2(i, j, l) > 0)) continue;  // a reflex or flat corner is no ear
        bool empty = true;
        for (const std::size_t m : left) {
          if (m == i || m == j || m == l || p[m] == p[i] || p[m] == p[j] || p[m] == p[l]) continue;
          if (cross2(i, j, m) >= 0 && cross2(j, l, m) >= 0 && cross2(l, i, m) >= 0) empty = false;
        }
        if (!empty) continue;
        out.insert(out.end(), {i, j, l});
        left.erase(left.begin() + static_cast<long>(k));
        clipped = true;
      }
      if (!clipped) break;
    }
  }
  for (std::size_t k = 1; k + 1 < left.size(); ++k)
    out.insert(out.end(), {left[0], left[k], left[k + 1]});
  return out;
}

/// A 1-based or negative (relative to the `count` items read so far) OBJ index as 0-based:
/// `what` is "face" or "texture", `item` and `items` name what the index counts.
long long resolve_index(const LineReader& reader, long long index, long long count,
                        const std::string& what, const std::string& item,
                        const std::string& items) {
  if (index == 0) reader.fail(what + " index 0 is invalid (OBJ indices start at 1)");
  const long long resolved = index > 0 ? index - 1 : count + index;
  if (index < 0 && resolved < 0)
    reader.fail("relative " + what + " index " + std::to_string(index) +
                " points before the first " + item + " (" + std::to_string(count) + " " + items +
                " read so far)");
  return resolved;
}

SurfaceMesh parse_obj(LineReader& reader, ObjTexture texture) {
  std::vector<double> coords, uv_coords;
  std::vector<PendingFace> faces;
  std::vector<long long> corners, uv_corners;  // every face's, in file order
  std::string line;
  while (reader.next(line, /*continuation=*/true)) {
    const auto tokens = split_whitespace(line);
    if (tokens.empty()) continue;
    const std::string_view keyword = tokens[0];
    if (keyword == "v") {
      if (tokens.size() < 4)
        reader.fail("vertex has " + std::to_string(tokens.size() - 1) +
                    " coordinates, expected 'v x y z'");
      static const char* const kAxis[3] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d)
        coords.push_back(parse_double(reader, tokens[static_cast<std::size_t>(d) + 1],
                                      std::string("vertex ") + kAxis[d]));
    } else if (keyword == "vt" && texture == ObjTexture::Read) {
      // `vt u [v [w]]`: v defaults to 0 as the format says; w (3D textures) is ignored. Values
      // beyond float32 could not be stored in a cache.
      if (tokens.size() < 2) reader.fail("texture coordinate without a value, expected 'vt u v'");
      for (std::size_t d = 1; d < 3; ++d) {
        const std::string what = d == 1 ? "texture coordinate u" : "texture coordinate v";
        const double value = tokens.size() > d ? parse_double(reader, tokens[d], what) : 0.0;
        if (std::abs(value) > std::numeric_limits<float>::max())
          reader.fail("expected " + what + " within float32's range, got " + in_quotes(tokens[d]));
        uv_coords.push_back(value);
      }
    } else if (keyword == "f") {
      const long long vertex_count = static_cast<long long>(coords.size() / 3);
      const long long uv_count = static_cast<long long>(uv_coords.size() / 2);
      PendingFace face{corners.size(), 0, reader.line()};
      for (std::size_t c = 1; c < tokens.size(); ++c) {
        const std::string_view corner = tokens[c];
        // v, v/vt, v/vt/vn or v//vn: validate every part, keep v and vt.
        std::vector<std::string_view> parts;
        std::size_t start = 0;
        for (;;) {
          const std::size_t slash = corner.find('/', start);
          parts.push_back(corner.substr(
              start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
          if (slash == std::string_view::npos) break;
          start = slash + 1;
        }
        if (parts.size() > 3 || parts[0].empty())
          reader.fail("expected a face corner 'v', 'v/vt', 'v/vt/vn' or 'v//vn', got " +
                      in_quotes(corner));
        long long uv = -1;
        for (std::size_t p = 1; p < parts.size(); ++p)
          if (!parts[p].empty()) {
            const long long index =
                parse_integer(reader, parts[p], p == 1 ? "a texture index" : "a normal index");
            if (p == 1 && texture == ObjTexture::Read)
              uv = resolve_index(reader, index, uv_count, "texture", "texture coordinate",
                                 "texture coordinates");
          }
        corners.push_back(resolve_index(reader,
                                        parse_integer(reader, parts[0], "a face vertex index"),
                                        vertex_count, "face", "vertex", "vertices"));
        uv_corners.push_back(uv);
      }
      face.count = corners.size() - face.first;
      if (face.count < 3)
        reader.fail("face has " + std::to_string(face.count) + " corners, expected at least 3");
      faces.push_back(face);
    }
    // Every other statement (vn, vp, o, g, s, usemtl, mtllib, l, p, curves...) is ignored.
  }
  const long long vertex_count = static_cast<long long>(coords.size() / 3);
  const long long uv_count = static_cast<long long>(uv_coords.size() / 2);
  if (vertex_count == 0)
    reader.fail_at(reader.last_line(), "end of file without a vertex, expected 'v x y z' lines");
  if (vertex_count > std::numeric_limits<int>::max() || uv_count > std::numeric_limits<int>::max())
    throw IoError(reader.path().string() + ": too many vertices for 32-bit indices");

  SurfaceMesh mesh;
  mesh.vertices =
      Eigen::Map<const Points3>(coords.data(), static_cast<Eigen::Index>(vertex_count), 3);
  // Texture coordinates are kept when some corner has one; a corner without one gets (0, 0), a
  // row of its own, as Blender's importer gives it.
  bool textured = false, untextured = false;
  for (const PendingFace& f : faces)
    for (std::size_t c = f.first; c < f.first + f.count; ++c) {
      if (corners[c] >= vertex_count)
        reader.fail_at(f.line, "face index " + std::to_string(corners[c] + 1) +
                                   " out of range (file has " + std::to_string(vertex_count) +
                                   " vertices)");
      if (uv_corners[c] >= uv_count)
        reader.fail_at(f.line, "texture index " + std::to_string(uv_corners[c] + 1) +
                                   " out of range (file has " + std::to_string(uv_count) +
                                   " texture coordinates)");
      (uv_corners[c] >= 0 ? textured : untextured) = true;
      mesh.polygons.corners.push_back(static_cast<int>(corners[c]));
    }
  if (untextured) uv_coords.insert(uv_coords.end(), {0.0, 0.0});
  const auto uv_rows = static_cast<long long>(uv_coords.size() / 2);
  std::vector<int> tri, tri_uv;  // corners, three a triangle
  std::vector<Eigen::Vector3d> polygon;
  for (const PendingFace& f : faces) {
    mesh.polygons.sizes.push_back(static_cast<int>(f.count));
    std::vector<std::size_t> cut;
    if (f.count == 3) {
      cut = {0, 1, 2};
    } else {
      polygon.clear();
      for (std::size_t c = f.first; c < f.first + f.count; ++c)
        polygon.push_back(mesh.vertices.row(static_cast<Eigen::Index>(corners[c])).transpose());
      cut = triangulate_polygon(polygon);
    }
    for (const std::size_t k : cut) {
      tri.push_back(static_cast<int>(corners[f.first + k]));
      const long long uv = uv_corners[f.first + k];
      tri_uv.push_back(static_cast<int>(uv >= 0 ? uv : uv_rows - 1));
    }
  }
  mesh.triangles =
      Eigen::Map<const Triangles>(tri.data(), static_cast<Eigen::Index>(tri.size() / 3), 3);
  if (textured) {
    mesh.uv.coordinates =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>>(
            uv_coords.data(), static_cast<Eigen::Index>(uv_rows), 2);
    mesh.uv.corners = Eigen::Map<const Triangles>(tri_uv.data(), mesh.triangles.rows(), 3);
  }
  return mesh;
}

// ---------------------------------------------------------------------------------------------
// TetGen

// Next non-empty (after comment stripping) line split into tokens; false at end of file.
bool next_tokens(LineReader& reader, std::string& line, std::vector<std::string_view>& tokens) {
  while (reader.next(line)) {
    tokens = split_whitespace(line);
    if (!tokens.empty()) return true;
  }
  return false;
}

void expect_count(const LineReader& reader, const std::vector<std::string_view>& tokens,
                  std::size_t expected, const std::string& layout) {
  if (tokens.size() != expected)
    reader.fail("found " + std::to_string(tokens.size()) + " numbers, expected " +
                std::to_string(expected) + " (" + layout + ")");
}

void expect_end(LineReader& reader, const std::string& what) {
  std::string line;
  std::vector<std::string_view> tokens;
  if (next_tokens(reader, line, tokens))
    reader.fail("unexpected data " + in_quotes(line) + " after the last " + what +
                " (the header's count)");
}

constexpr const char* kNodeHeader = "<#points> 3 <#attributes> <0|1 boundary markers>";

}  // namespace

SurfaceMesh load_obj(const std::filesystem::path& path, ObjTexture texture) {
  LineReader reader(path);
  return parse_obj(reader, texture);
}

TetMesh load_tetgen(const std::filesystem::path& node_or_ele_or_stem) {
  std::filesystem::path stem = node_or_ele_or_stem;
  if (stem.extension() == ".node" || stem.extension() == ".ele") stem.replace_extension();
  std::filesystem::path node_path = stem, ele_path = stem;
  node_path += ".node";
  ele_path += ".ele";

  std::string line;
  std::vector<std::string_view> tokens;
  TetMesh mesh;
  long long first_number = 0;
  long long point_count = 0;
  {
    LineReader reader(node_path);
    if (!next_tokens(reader, line, tokens))
      reader.fail_at(reader.last_line(),
                     "no data in the file, expected the header '" + std::string(kNodeHeader) + "'");
    const std::string header_layout = kNodeHeader;
    if (tokens.size() < 1 || tokens.size() > 4)
      reader.fail("found " + std::to_string(tokens.size()) + " numbers in the header, expected " +
                  header_layout);
    point_count = parse_integer(reader, tokens[0], "the number of points");
    const long long dimension =
        tokens.size() > 1 ? parse_integer(reader, tokens[1], "the dimension") : 3;
    const long long attributes =
        tokens.size() > 2 ? parse_integer(reader, tokens[2], "the number of attributes") : 0;
    const long long markers =
        tokens.size() > 3 ? parse_integer(reader, tokens[3], "the boundary marker flag") : 0;
    if (point_count <= 0 || point_count > std::numeric_limits<int>::max())
      reader.fail("number of points " + std::to_string(point_count) + ", expected > 0");
    if (dimension != 3) reader.fail("dimension " + std::to_string(dimension) + ", expected 3");
    if (attributes < 0 || attributes > 1000)
      reader.fail("number of attributes " + std::to_string(attributes) + ", expected >= 0");
    if (markers != 0 && markers != 1)
      reader.fail("boundary marker flag " + std::to_string(markers) + ", expected 0 or 1");
    const std::size_t per_line = static_cast<std::size_t>(4 + attributes + markers);
    const std::string layout = "<index> x y z" + std::string(attributes ? " <attributes>" : "") +
                               (markers ? " <marker>" : "");
    mesh.vertices.resize(static_cast<Eigen::Index>(point_count), 3);
    for (long long p = 0; p < point_count; ++p) {
      if (!next_tokens(reader, line, tokens))
        reader.fail_at(reader.last_line(), "file ends after " + std::to_string(p) +
                                               " points, the header says " +
                                               std::to_string(point_count));
      expect_count(reader, tokens, per_line, layout);
      const long long index = parse_integer(reader, tokens[0], "the point index");
      if (p == 0) {
        if (index != 0 && index != 1)
          reader.fail("first point index " + std::to_string(index) + ", expected 0 or 1");
        first_number = index;
      } else if (index != first_number + p) {
        reader.fail("point index " + std::to_string(index) + ", expected " +
                    std::to_string(first_number + p) + " (indices must be consecutive)");
      }
      static const char* const kAxis[3] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d)
        mesh.vertices(static_cast<Eigen::Index>(p), d) = parse_double(
            reader, tokens[static_cast<std::size_t>(d) + 1], std::string("point ") + kAxis[d]);
    }
    expect_end(reader, "point");
  }

  std::vector<int> tet_lines;
  {
    LineReader reader(ele_path);
    const std::string header_layout = "<#tets> <4|10 nodes per tet> <#region attributes>";
    if (!next_tokens(reader, line, tokens))
      reader.fail_at(reader.last_line(),
                     "no data in the file, expected the header '" + header_layout + "'");
    if (tokens.size() < 1 || tokens.size() > 3)
      reader.fail("found " + std::to_string(tokens.size()) + " numbers in the header, expected " +
                  header_layout);
    const long long tet_count = parse_integer(reader, tokens[0], "the number of tetrahedra");
    const long long nodes =
        tokens.size() > 1 ? parse_integer(reader, tokens[1], "nodes per tet") : 4;
    const long long attributes =
        tokens.size() > 2 ? parse_integer(reader, tokens[2], "the number of region attributes") : 0;
    if (tet_count <= 0 || tet_count > std::numeric_limits<int>::max())
      reader.fail("number of tetrahedra " + std::to_string(tet_count) + ", expected > 0");
    if (nodes != 4 && nodes != 10)
      reader.fail("nodes per tet " + std::to_string(nodes) + ", expected 4 or 10");
    if (attributes < 0 || attributes > 1000)
      reader.fail("number of region attributes " + std::to_string(attributes) + ", expected >= 0");
    const std::size_t per_line = static_cast<std::size_t>(1 + nodes + attributes);
    const std::string layout =
        "<index> " + std::to_string(nodes) + " node indices" + (attributes ? " <attributes>" : "");
    mesh.tets.resize(static_cast<Eigen::Index>(tet_count), 4);
    tet_lines.reserve(static_cast<std::size_t>(tet_count));
    for (long long t = 0; t < tet_count; ++t) {
      if (!next_tokens(reader, line, tokens))
        reader.fail_at(reader.last_line(), "file ends after " + std::to_string(t) +
                                               " tetrahedra, the header says " +
                                               std::to_string(tet_count));
      expect_count(reader, tokens, per_line, layout);
      const long long index = parse_integer(reader, tokens[0], "the tetrahedron index");
      if (index != first_number + t)
        reader.fail("tetrahedron index " + std::to_string(index) + ", expected " +
                    std::to_string(first_number + t) + " (numbering starts at " +
                    std::to_string(first_number) + " as in " + node_path.filename().string() +
                    ", consecutive)");
      for (int c = 0; c < 4; ++c) {
        const long long node =
            parse_integer(reader, tokens[static_cast<std::size_t>(c) + 1], "a node index");
        if (node < first_number || node >= first_number + point_count)
          reader.fail("node index " + std::to_string(node) + " out of range (" +
                      node_path.filename().string() + " has " + std::to_string(point_count) +
                      " points numbered " + std::to_string(first_number) + ".." +
                      std::to_string(first_number + point_count - 1) + ")");
        mesh.tets(static_cast<Eigen::Index>(t), c) = static_cast<int>(node - first_number);
      }
      tet_lines.push_back(reader.line());
    }
    expect_end(reader, "tetrahedron");

    const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
    for (Eigen::Index t = 0; t < mesh.tets.rows(); ++t) {
      if (volumes(t) == 0.0)
        reader.fail_at(tet_lines[static_cast<std::size_t>(t)],
                       "tetrahedron " + std::to_string(first_number + t) +
                           " has zero volume (its four points are coplanar or repeated)");
      if (volumes(t) < 0.0) std::swap(mesh.tets(t, 2), mesh.tets(t, 3));
    }
  }
  return mesh;
}

}  // namespace datadyn
