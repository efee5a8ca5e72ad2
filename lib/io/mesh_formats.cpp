#include "io/mesh_formats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

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
  if (m.uv.rows() != 0 && m.uv.rows() != n)
    throw IoError(path.string() + ": texture coordinates: expected " + std::to_string(n) +
                  " rows (one per vertex), got " + std::to_string(m.uv.rows()));
  auto check = [&](const auto& faces, const char* what) {
    if (faces.size() == 0) return;
    if (faces.minCoeff() < 0 || faces.maxCoeff() >= n)
      throw IoError(path.string() + ": " + what + " index outside [0, " + std::to_string(n) + ")");
  };
  check(m.triangles, "triangle");
  check(m.quads, "quad");
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

void write_obj(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::string& object_name, const Metadata& metadata) {
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
  for (Eigen::Index i = 0; i < mesh.points.rows(); ++i) {
    buf += "v ";
    text::append_number(buf, mesh.points(i, 0));
    buf += ' ';
    text::append_number(buf, mesh.points(i, 1));
    buf += ' ';
    text::append_number(buf, mesh.points(i, 2));
    buf += '\n';
    flush();
  }
  const bool uv = mesh.uv.rows() != 0;
  for (Eigen::Index i = 0; i < mesh.uv.rows(); ++i) {
    buf += "vt ";
    text::append_number(buf, mesh.uv(i, 0));
    buf += ' ';
    text::append_number(buf, mesh.uv(i, 1));
    buf += '\n';
    flush();
  }
  auto faces = [&](const auto& f) {
    for (Eigen::Index i = 0; i < f.rows(); ++i) {
      buf += 'f';
      for (Eigen::Index j = 0; j < f.cols(); ++j) {
        buf += ' ';
        text::append_integer(buf, static_cast<std::int64_t>(f(i, j)) + 1);
        if (uv) {  // vertex i has texture coordinate i
          buf += '/';
          text::append_integer(buf, static_cast<std::int64_t>(f(i, j)) + 1);
        }
      }
      buf += '\n';
      flush();
    }
  };
  faces(mesh.triangles);
  faces(mesh.quads);
  file.write(buf);
  file.commit();
}

void write_ply(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::vector<VertexAttribute>& attributes, const VertexColors* colors,
               const Metadata& metadata) {
  check_indices(path, mesh);
  const Eigen::Index n = mesh.points.rows();
  for (const auto& a : attributes)
    if (a.values.rows() != n)
      throw IoError(path.string() + ": attribute " + a.name + ": expected " + std::to_string(n) +
                    " rows (one per vertex), got " + std::to_string(a.values.rows()));
  if (colors && colors->rows() != n)
    throw IoError(path.string() + ": colours: expected " + std::to_string(n) + " rows, got " +
                  std::to_string(colors->rows()));

  std::string h = "ply\nformat binary_little_endian 1.0\n";
  for (const auto& [k, v] : metadata) h += "comment " + k + ": " + one_line(v) + "\n";
  h += "element vertex " + std::to_string(n) + "\n";
  h += "property float x\nproperty float y\nproperty float z\n";
  const bool uv = mesh.uv.rows() != 0;
  if (uv) h += "property float s\nproperty float t\n";
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
  const Eigen::Index faces = mesh.triangles.rows() + mesh.quads.rows();
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
  for (Eigen::Index i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) put_le(buf, static_cast<float>(mesh.points(i, d)));
    if (uv)
      for (int d = 0; d < 2; ++d) put_le(buf, mesh.uv(i, d));
    for (const auto& a : attributes)
      for (Eigen::Index j = 0; j < a.values.cols(); ++j) put_le(buf, a.values(i, j));
    if (colors)
      for (int d = 0; d < 3; ++d) put_le(buf, (*colors)(i, d));
    flush();
  }
  auto write_faces = [&](const auto& f) {
    for (Eigen::Index i = 0; i < f.rows(); ++i) {
      put_le(buf, static_cast<std::uint8_t>(f.cols()));
      for (Eigen::Index j = 0; j < f.cols(); ++j) put_le(buf, static_cast<std::int32_t>(f(i, j)));
      flush();
    }
  };
  write_faces(mesh.triangles);
  write_faces(mesh.quads);
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
