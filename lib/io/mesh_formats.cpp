#include "io/mesh_formats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/number_text.hpp"

namespace datadyn::io {

namespace {

/// One line of text without line breaks (metadata values are JSON, one line already).
std::string one_line(const std::string& s) {
  std::string out = s;
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

void check_indices(const std::filesystem::path& path, const PolygonMesh& m) {
  const Eigen::Index n = m.points.rows();
  auto check = [&](const auto& faces, Eigen::Index count, const char* what) {
    if (faces.size() == 0) return;
    if (faces.minCoeff() < 0 || faces.maxCoeff() >= count)
      throw IoError(path.string() + ": " + what + " index outside [0, " + std::to_string(count) +
                    ")");
  };
  const auto corners = [](const std::vector<int>& v) {
    return Eigen::Map<const Eigen::VectorXi>(v.data(), static_cast<Eigen::Index>(v.size()));
  };
  check(m.triangles, n, "triangle");
  check(m.quads, n, "quad");
  check(corners(m.polygons.corners), n, "polygon");
  std::size_t polygon_corners = 0;
  for (const int size : m.polygons.sizes) {
    if (size < 3)
      throw IoError(path.string() + ": a polygon of " + std::to_string(size) + " corners");
    polygon_corners += static_cast<std::size_t>(size);
  }
  if (polygon_corners != m.polygons.corners.size())
    throw IoError(path.string() + ": polygons: their sizes add up to " +
                  std::to_string(polygon_corners) + " corners, " +
                  std::to_string(m.polygons.corners.size()) + " given");
  check_face_order(path, m);
  if (m.face_varying_uv()) {
    if (m.uv_triangles.rows() != m.triangles.rows() || m.uv_quads.rows() != m.quads.rows() ||
        m.uv_polygons.size() != polygon_corners)
      throw IoError(path.string() + ": texture coordinates: expected a row of corners per face (" +
                    std::to_string(m.triangles.rows()) + " triangles, " +
                    std::to_string(m.quads.rows()) + " quads, " + std::to_string(polygon_corners) +
                    " polygon corners), got " + std::to_string(m.uv_triangles.rows()) + ", " +
                    std::to_string(m.uv_quads.rows()) + " and " +
                    std::to_string(m.uv_polygons.size()));
    check(m.uv_triangles, m.uv.rows(), "texture coordinate");
    check(m.uv_quads, m.uv.rows(), "texture coordinate");
    check(corners(m.uv_polygons), m.uv.rows(), "texture coordinate");
  } else if (m.uv.rows() != 0 && m.uv.rows() != n) {
    throw IoError(path.string() + ": texture coordinates: expected " + std::to_string(n) +
                  " rows (one per vertex), got " + std::to_string(m.uv.rows()));
  }
}

/// Twice the area times the unit normal of the polygon `f` of `points`: Newell's sum of
/// x_j x x_j+1 over its edges, which for a triangle is the cross product of two edges and for a
/// planar polygon does not depend on where it starts.
Eigen::Vector3d newell_normal(const Points3& points, std::span<const int> f) {
  Eigen::Vector3d a = Eigen::Vector3d::Zero();
  for (std::size_t j = 0; j < f.size(); ++j) {
    const Eigen::Vector3d p = points.row(f[j]).transpose();
    const Eigen::Vector3d q = points.row(f[(j + 1) % f.size()]).transpose();
    a += p.cross(q);
  }
  return a;
}

template <class T>
void put_le(std::string& out, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 1);
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) std::reverse(b, b + sizeof(T));
  out.append(reinterpret_cast<const char*>(b), sizeof(T));
}

}  // namespace

void check_face_order(const std::filesystem::path& path, const PolygonMesh& m) {
  if (m.face_order.empty()) return;
  const Eigen::Index faces = m.face_count();
  std::vector<char> seen(static_cast<std::size_t>(faces), 0);
  bool ok = static_cast<Eigen::Index>(m.face_order.size()) == faces;
  for (const Eigen::Index k : m.face_order) {
    if (!ok || k < 0 || k >= faces || seen[static_cast<std::size_t>(k)]) {
      ok = false;
      break;
    }
    seen[static_cast<std::size_t>(k)] = 1;
  }
  if (!ok)
    throw IoError(path.string() + ": face order: expected each of the " + std::to_string(faces) +
                  " faces once, got " + std::to_string(m.face_order.size()) + " entries");
}

void write_obj(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::string& object_name, const Metadata& metadata, bool smooth_shading) {
  check_indices(path, mesh);
  AtomicFile file(path);
  std::string buf;
  buf.reserve(1 << 20);
  for (const auto& [k, v] : metadata) buf += "# " + k + ": " + one_line(v) + "\n";
  buf += "o " + (object_name.empty() ? std::string("mesh") : object_name) + "\n";
  auto flush = [&] {
    if (buf.size() > (1u << 20) - 256) {
      file.write(buf);
      buf.clear();
    }
  };
  // `v x y z` and `vt u v` lines: a row of numbers each.
  const auto rows = [&](const char* tag, const auto& m) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      buf += tag;
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        buf += ' ';
        text::append_number(buf, m(i, j));
      }
      buf += '\n';
      flush();
    }
  };
  rows("v", mesh.points);
  rows("vt", mesh.uv);
  const bool uv = mesh.uv.rows() != 0;
  // `t` holds each corner's texture coordinate: the face-varying indices, or the face itself
  // (vertex i has texture coordinate i).
  const bool corners = mesh.face_varying_uv();
  if (smooth_shading && mesh.face_count() > 0) buf += "s 1\n";
  for_each_face(mesh, [&](const FaceCorners& f) {
    const std::span<const int> t = corners ? f.uv : f.vertices;
    buf += 'f';
    for (std::size_t j = 0; j < f.vertices.size(); ++j) {
      buf += ' ';
      text::append_integer(buf, static_cast<std::int64_t>(f.vertices[j]) + 1);
      if (uv) {
        buf += '/';
        text::append_integer(buf, static_cast<std::int64_t>(t[j]) + 1);
      }
    }
    buf += '\n';
    flush();
  });
  file.write(buf);
  file.commit();
}

BorderEdges border_edges(const PolygonMesh& mesh) {
  std::vector<std::pair<int, int>> edges;
  for_each_face(mesh, [&](const FaceCorners& f) {
    const std::size_t n = f.vertices.size();
    for (std::size_t j = 0; j < n; ++j)
      edges.push_back(std::minmax(f.vertices[j], f.vertices[(j + 1) % n]));
  });
  std::sort(edges.begin(), edges.end());
  BorderEdges out;
  for (std::size_t k = 0; k < edges.size();) {
    std::size_t end = k + 1;
    while (end < edges.size() && edges[end] == edges[k]) ++end;
    if (end == k + 1 && out.count++ == 0) out.first = edges[k];
    k = end;
  }
  return out;
}

Points3 vertex_normals(const PolygonMesh& mesh) {
  Points3 n = Points3::Zero(mesh.points.rows(), 3);
  const auto x = [&](int i) -> Eigen::Vector3d { return mesh.points.row(i).transpose(); };
  // Twice the area times the unit normal: the cross product of the edges (of the diagonals for
  // a quad), added to every corner.
  for (Eigen::Index t = 0; t < mesh.triangles.rows(); ++t) {
    const auto f = mesh.triangles.row(t);
    const Eigen::Vector3d a = (x(f[1]) - x(f[0])).cross(x(f[2]) - x(f[0]));
    for (int c = 0; c < 3; ++c) n.row(f[c]) += a.transpose();
  }
  for (Eigen::Index q = 0; q < mesh.quads.rows(); ++q) {
    const auto f = mesh.quads.row(q);
    const Eigen::Vector3d a = (x(f[2]) - x(f[0])).cross(x(f[3]) - x(f[1]));
    for (int c = 0; c < 4; ++c) n.row(f[c]) += a.transpose();
  }
  for_each_polygon(mesh.polygons, [&](std::span<const int> f, std::size_t) {
    const Eigen::Vector3d a = newell_normal(mesh.points, f);
    for (const int v : f) n.row(v) += a.transpose();
  });
  for (Eigen::Index i = 0; i < n.rows(); ++i) {
    const double len = n.row(i).norm();
    if (len > 0 && std::isfinite(len))
      n.row(i) /= len;
    else
      n.row(i) << 0, 1, 0;
  }
  return n;
}

void box_projection_uv(const Points3& reference, PolygonMesh& mesh) {
  // Per direction k = 2 axis + (negative ? 1 : 0): the reference coordinates along u and v, as
  // (axis, sign) pairs, chosen so that u x v points out of the face.
  struct Plane {
    int u_axis, v_axis;
    double u_sign, v_sign;
  };
  static constexpr std::array<Plane, 6> kPlanes{{{2, 1, -1, 1},    // +x: u = -z, v = y
                                                 {2, 1, 1, 1},     // -x: u = z
                                                 {0, 2, 1, -1},    // +y: u = x, v = -z
                                                 {0, 2, 1, 1},     // -y: u = x, v = z
                                                 {0, 1, 1, 1},     // +z: u = x, v = y
                                                 {0, 1, -1, 1}}};  // -z: u = -x
  const Eigen::RowVector3d lo = reference.colwise().minCoeff(), hi = reference.colwise().maxCoeff();
  double extent = (hi - lo).maxCoeff();
  if (!(extent > 0)) extent = 1;
  constexpr double kScale = 0.3, kMargin = 0.5 * (1.0 / 3.0 - kScale);
  std::map<std::pair<int, int>, int> index;  // (vertex, tile) -> row of mesh.uv
  std::vector<std::array<float, 2>> values;
  const auto corner = [&](int v, int k) {
    const auto [it, added] = index.try_emplace({v, k}, static_cast<int>(values.size()));
    if (added) {
      const Plane& p = kPlanes[static_cast<std::size_t>(k)];
      // Distances from the reference box's side where the coordinate is smallest.
      const double u = p.u_sign > 0 ? reference(v, p.u_axis) - lo[p.u_axis]
                                    : hi[p.u_axis] - reference(v, p.u_axis);
      const double w = p.v_sign > 0 ? reference(v, p.v_axis) - lo[p.v_axis]
                                    : hi[p.v_axis] - reference(v, p.v_axis);
      values.push_back({static_cast<float>((k % 3) / 3.0 + kMargin + kScale * u / extent),
                        static_cast<float>((k / 3) / 2.0 + kMargin + kScale * w / extent)});
    }
    return it->second;
  };
  const auto x = [&](int i) -> Eigen::Vector3d { return reference.row(i).transpose(); };
  const auto tile = [](const Eigen::Vector3d& n) {
    int a = 0;
    for (int d = 1; d < 3; ++d)
      if (std::abs(n[d]) > std::abs(n[a])) a = d;
    return 2 * a + (n[a] < 0 ? 1 : 0);
  };
  mesh.uv_triangles.resize(mesh.triangles.rows(), 3);
  for (Eigen::Index t = 0; t < mesh.triangles.rows(); ++t) {
    const auto f = mesh.triangles.row(t);
    const int k = tile((x(f[1]) - x(f[0])).cross(x(f[2]) - x(f[0])));
    for (int c = 0; c < 3; ++c) mesh.uv_triangles(t, c) = corner(f[c], k);
  }
  mesh.uv_quads.resize(mesh.quads.rows(), 4);
  for (Eigen::Index q = 0; q < mesh.quads.rows(); ++q) {
    const auto f = mesh.quads.row(q);
    const int k = tile((x(f[2]) - x(f[0])).cross(x(f[3]) - x(f[1])));
    for (int c = 0; c < 4; ++c) mesh.uv_quads(q, c) = corner(f[c], k);
  }
  mesh.uv_polygons.resize(mesh.polygons.corners.size());
  for_each_polygon(mesh.polygons, [&](std::span<const int> f, std::size_t first) {
    const int k = tile(newell_normal(reference, f));
    for (std::size_t c = 0; c < f.size(); ++c) mesh.uv_polygons[first + c] = corner(f[c], k);
  });
  mesh.uv.resize(static_cast<Eigen::Index>(values.size()), 2);
  for (std::size_t i = 0; i < values.size(); ++i)
    mesh.uv.row(static_cast<Eigen::Index>(i)) << values[i][0], values[i][1];
}

SeamSplit split_uv_seams(const PolygonMesh& mesh, Eigen::Index vertex_count) {
  const Eigen::Index n = vertex_count;
  SeamSplit out;
  // values[v]: the values vertex v has met so far, each with the split vertex that carries it.
  std::vector<std::vector<std::pair<Eigen::Vector2f, Eigen::Index>>> values(
      static_cast<std::size_t>(n));
  std::vector<Eigen::Vector2f> added;  // the values of the copies
  out.triangles.resize(mesh.triangles.rows(), 3);
  out.quads.resize(mesh.quads.rows(), 4);
  out.polygon_corners.resize(mesh.polygons.corners.size());
  for_each_face(mesh, [&](const FaceCorners& f) {
    const std::size_t size = f.vertices.size();
    int* const into = f.kind == FaceCorners::Triangle ? out.triangles.row(f.row).data()
                      : f.kind == FaceCorners::Quad   ? out.quads.row(f.row).data()
                                                      : out.polygon_corners.data() + f.row;
    for (std::size_t j = 0; j < size; ++j) {
      const Eigen::Index v = f.vertices[j];
      const Eigen::Vector2f value = mesh.uv.row(f.uv[j]).transpose();
      auto& seen = values[static_cast<std::size_t>(v)];
      auto it =
          std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == value; });
      if (it == seen.end()) {
        Eigen::Index target = v;
        if (!seen.empty()) {
          if (seen.size() == 1) ++out.seam_vertices;
          target = n + static_cast<Eigen::Index>(out.copied.size());
          out.copied.push_back(v);
          added.push_back(value);
        }
        seen.emplace_back(value, target);
        it = std::prev(seen.end());
      }
      into[j] = static_cast<int>(it->second);
    }
  });
  out.uv = TextureCoordinates::Zero(n + static_cast<Eigen::Index>(added.size()), 2);
  for (Eigen::Index v = 0; v < n; ++v)
    if (!values[static_cast<std::size_t>(v)].empty())
      out.uv.row(v) = values[static_cast<std::size_t>(v)].front().first.transpose();
  for (std::size_t k = 0; k < added.size(); ++k)
    out.uv.row(n + static_cast<Eigen::Index>(k)) = added[k].transpose();
  return out;
}

void write_ply(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::vector<VertexAttribute>& attributes, const VertexColors* colors,
               const Metadata& metadata, bool smooth_shading) {
  check_indices(path, mesh);
  const Eigen::Index n = mesh.points.rows();
  for (const auto& a : attributes)
    if (a.values.rows() != n)
      throw IoError(path.string() + ": attribute " + a.name + ": expected " + std::to_string(n) +
                    " rows (one per vertex), got " + std::to_string(a.values.rows()));
  if (colors && colors->rows() != n)
    throw IoError(path.string() + ": colours: expected " + std::to_string(n) + " rows, got " +
                  std::to_string(colors->rows()));

  // PLY holds one value per vertex: split the vertices at the seams, copies after the mesh's.
  std::optional<SeamSplit> split;
  if (mesh.face_varying_uv()) split = split_uv_seams(mesh, n);
  const Eigen::Index rows = split ? split->uv.rows() : n;
  const TextureCoordinates& uv = split ? split->uv : mesh.uv;
  const Eigen::Index faces = mesh.face_count();
  for (const int size : mesh.polygons.sizes)
    if (size > 255)
      throw IoError(path.string() + ": a face of " + std::to_string(size) +
                    " corners; PLY's face lists (uchar counts) hold at most 255");
  const bool own_normals = std::any_of(attributes.begin(), attributes.end(), [](const auto& a) {
    return a.name == "normal" && a.values.cols() == 3;
  });
  Points3 normals;
  if (smooth_shading && faces > 0 && !own_normals) normals = vertex_normals(mesh);

  std::string h = "ply\nformat binary_little_endian 1.0\n";
  for (const auto& [k, v] : metadata) h += "comment " + k + ": " + one_line(v) + "\n";
  h += "element vertex " + std::to_string(rows) + "\n";
  h += "property float x\nproperty float y\nproperty float z\n";
  if (normals.rows() != 0) h += "property float nx\nproperty float ny\nproperty float nz\n";
  if (uv.rows() != 0) h += "property float s\nproperty float t\n";
  for (const auto& a : attributes) {
    const Eigen::Index c = a.values.cols();
    for (Eigen::Index j = 0; j < c; ++j) {
      std::string name = a.name;
      if (a.name == "normal" && c == 3)
        name = std::string("n") + "xyz"[j];
      else if (c > 1)
        name += "_" + std::to_string(j);
      h += "property float " + name + "\n";
    }
  }
  if (colors) h += "property uchar red\nproperty uchar green\nproperty uchar blue\n";
  if (faces > 0)
    h += "element face " + std::to_string(faces) + "\nproperty list uchar int vertex_indices\n";
  h += "end_header\n";

  AtomicFile file(path);
  file.write(h);
  std::string buf;
  buf.reserve(1 << 20);
  auto flush = [&] {
    if (buf.size() > (1u << 20) - 256) {
      file.write(buf);
      buf.clear();
    }
  };
  for (Eigen::Index r = 0; r < rows; ++r) {
    const Eigen::Index i = split ? split->original(r, n) : r;  // a copy repeats its original
    for (int d = 0; d < 3; ++d) put_le(buf, static_cast<float>(mesh.points(i, d)));
    if (normals.rows() != 0)
      for (int d = 0; d < 3; ++d) put_le(buf, static_cast<float>(normals(i, d)));
    if (uv.rows() != 0)
      for (int d = 0; d < 2; ++d) put_le(buf, uv(r, d));
    for (const auto& a : attributes)
      for (Eigen::Index j = 0; j < a.values.cols(); ++j) put_le(buf, a.values(i, j));
    if (colors)
      for (int d = 0; d < 3; ++d) put_le(buf, (*colors)(i, d));
    flush();
  }
  // The faces on the split vertices, in the mesh's order.
  PolygonMesh split_faces;
  if (split) {
    split_faces.triangles = split->triangles;
    split_faces.quads = split->quads;
    split_faces.polygons = {mesh.polygons.sizes, split->polygon_corners};
    split_faces.face_order = mesh.face_order;
  }
  for_each_face(split ? split_faces : mesh, [&](const FaceCorners& f) {
    put_le(buf, static_cast<std::uint8_t>(f.vertices.size()));
    for (const int v : f.vertices) put_le(buf, static_cast<std::int32_t>(v));
    flush();
  });
  file.write(buf);
  file.commit();
}

VertexColors colors_from_scalar(const Eigen::Ref<const Eigen::VectorXf>& values, double lo,
                                double hi) {
  // viridis at 0, 1/8, ..., 1 (matplotlib's table, rounded to 0-255).
  static constexpr std::array<std::array<double, 3>, 9> kRamp{{{68, 1, 84},
                                                               {71, 44, 122},
                                                               {59, 81, 139},
                                                               {44, 113, 142},
                                                               {33, 144, 141},
                                                               {39, 173, 129},
                                                               {92, 200, 99},
                                                               {170, 220, 50},
                                                               {253, 231, 37}}};
  VertexColors out(values.size(), 3);
  const double span = hi > lo ? hi - lo : 1.0;
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    double t = (static_cast<double>(values[i]) - lo) / span;
    if (!(t > 0)) t = 0;  // NaN too
    if (t > 1) t = 1;
    const double x = t * 8.0;
    const int k = std::min(7, static_cast<int>(x));
    const double w = x - k;
    for (int d = 0; d < 3; ++d)
      out(i, d) = static_cast<std::uint8_t>(kRamp[k][d] * (1 - w) + kRamp[k + 1][d] * w + 0.5);
  }
  return out;
}

}  // namespace datadyn::io
