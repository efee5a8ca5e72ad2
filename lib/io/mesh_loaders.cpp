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

struct PendingTriangle {
  std::array<long long, 3> raw;  // resolved 0-based index, range checked at the end
  std::array<long long, 3> uv;   // resolved 0-based vt index, -1 for a corner without one
  int line;
};

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
  std::vector<PendingTriangle> triangles;
  std::vector<long long> corners, uv_corners;
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
      corners.clear();
      uv_corners.clear();
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
      if (corners.size() < 3)
        reader.fail("face has " + std::to_string(corners.size()) + " corners, expected at least 3");
      for (std::size_t c = 1; c + 1 < corners.size(); ++c)
        triangles.push_back({{corners[0], corners[c], corners[c + 1]},
                             {uv_corners[0], uv_corners[c], uv_corners[c + 1]},
                             reader.line()});
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
  mesh.triangles.resize(static_cast<Eigen::Index>(triangles.size()), 3);
  // Texture coordinates are kept when some corner has one; a corner without one gets (0, 0), a
  // row of its own, as Blender's importer gives it.
  bool textured = false, untextured = false;
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int c = 0; c < 3; ++c) {
      const long long index = triangles[t].raw[static_cast<std::size_t>(c)];
      if (index >= vertex_count)
        reader.fail_at(triangles[t].line, "face index " + std::to_string(index + 1) +
                                              " out of range (file has " +
                                              std::to_string(vertex_count) + " vertices)");
      mesh.triangles(static_cast<Eigen::Index>(t), c) = static_cast<int>(index);
      const long long uv = triangles[t].uv[static_cast<std::size_t>(c)];
      if (uv >= uv_count)
        reader.fail_at(triangles[t].line, "texture index " + std::to_string(uv + 1) +
                                              " out of range (file has " +
                                              std::to_string(uv_count) + " texture coordinates)");
      (uv >= 0 ? textured : untextured) = true;
    }
  if (textured) {
    if (untextured) uv_coords.insert(uv_coords.end(), {0.0, 0.0});
    const auto rows = static_cast<Eigen::Index>(uv_coords.size() / 2);
    mesh.uv.coordinates =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>>(
            uv_coords.data(), rows, 2);
    mesh.uv.corners.resize(mesh.triangles.rows(), 3);
    for (std::size_t t = 0; t < triangles.size(); ++t)
      for (int c = 0; c < 3; ++c) {
        const long long uv = triangles[t].uv[static_cast<std::size_t>(c)];
        mesh.uv.corners(static_cast<Eigen::Index>(t), c) =
            static_cast<int>(uv >= 0 ? uv : rows - 1);
      }
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
