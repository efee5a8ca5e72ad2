#include "io/usda_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/number_text.hpp"

namespace datadyn::io {

struct UsdaWriter::Spool {
  std::string declaration;           ///< "point3f[] points"
  std::string metadata;              ///< "interpolation = \"vertex\"" or ""
  std::unique_ptr<AtomicFile> file;  ///< never committed: its temporary file goes with it
};

namespace {

void append_tuple(std::string& out, double a, double b, double c) {
  out += '(';
  text::append_number(out, static_cast<float>(a));
  out += ", ";
  text::append_number(out, static_cast<float>(b));
  out += ", ";
  text::append_number(out, static_cast<float>(c));
  out += ')';
}

void append_time(std::string& out, double t) {
  out += "        ";
  text::append_number(out, t);
  out += ": ";
}

}  // namespace

std::string usda_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string usda_identifier(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "_" + out;
  return out;
}

UsdaWriter::UsdaWriter(std::filesystem::path path, UsdaStage stage, std::string mesh_name,
                       bool varying_topology, bool normals)
    : path_(std::move(path)),
      stage_(std::move(stage)),
      name_(usda_identifier(mesh_name)),
      varying_(varying_topology),
      normals_(normals) {
  if (stage_.up_axis != "Y" && stage_.up_axis != "Z")
    throw IoError(path_.string() + ": upAxis: expected \"Y\" or \"Z\", got \"" + stage_.up_axis +
                  "\"");
}

UsdaWriter::~UsdaWriter() = default;

UsdaWriter::Spool& UsdaWriter::spool(const std::string& declaration, const std::string& metadata) {
  for (auto& s : spools_)
    if (s->declaration == declaration) return *s;
  if (frames_ > 0)
    throw IoError(path_.string() + ": " + declaration +
                  ": an attribute that the first frame did not have");
  auto s = std::make_unique<Spool>();
  s->declaration = declaration;
  s->metadata = metadata;
  std::filesystem::path p = path_;
  p += ".spool" + std::to_string(spools_.size());
  // Messages name the output and the attribute: the spool's own path never appears on disk
  // (only its temporary name does, which the message also gives).
  s->file = std::make_unique<AtomicFile>(p, path_.string() + " (spooling its " + declaration + ")");
  spools_.push_back(std::move(s));
  return *spools_.back();
}

void UsdaWriter::write_frame(double time_code, const PolygonMesh& mesh,
                             const std::vector<VertexAttribute>& attributes,
                             const VertexColors* colors) {
  const Eigen::Index n = mesh.points.rows();
  if (!varying_ && frames_ > 0 && n != points_)
    throw IoError(path_.string() + ": time " + std::to_string(time_code) + ": expected " +
                  std::to_string(points_) + " points (fixed topology), got " + std::to_string(n));
  points_ = n;

  std::string buf;
  auto flush_to = [&](Spool& s) {
    s.file->write(buf);
    buf.clear();
  };

  // Faces: "[3, 3, 4]" and "[0, 1, 2, ...]".
  std::string counts = "[", indices = "[";
  bool first = true;
  check_face_order(path_, mesh);
  for_each_face(mesh, [&](const FaceCorners& f) {
    if (!first) counts += ", ";
    text::append_integer(counts, static_cast<std::int64_t>(f.vertices.size()));
    for (std::size_t j = 0; j < f.vertices.size(); ++j) {
      if (!first || j > 0) indices += ", ";
      text::append_integer(indices, f.vertices[j]);
    }
    first = false;
  });
  counts += "]";
  indices += "]";
  if (varying_) {
    Spool& c = spool("int[] faceVertexCounts", "");
    append_time(buf, time_code);
    buf += counts + ",\n";
    flush_to(c);
    Spool& ix = spool("int[] faceVertexIndices", "");
    append_time(buf, time_code);
    buf += indices + ",\n";
    flush_to(ix);
  } else if (frames_ == 0) {
    static_faces_ = "        int[] faceVertexCounts = " + counts + "\n" +
                    "        int[] faceVertexIndices = " + indices + "\n";
    // USD culls the back of a single-sided mesh: a sheet (a mesh with a border) shows both sides.
    if (border_edges(mesh).count > 0) static_faces_ += "        uniform bool doubleSided = 1\n";
    // Texture coordinates of a fixed topology: static, under the name USD's shading expects.
    // Face-varying ones are indexed, one index per entry of faceVertexIndices.
    if (mesh.uv.rows() != 0) {
      const bool corners = mesh.face_varying_uv();
      if (corners ? mesh.uv_triangles.rows() != mesh.triangles.rows() ||
                        mesh.uv_quads.rows() != mesh.quads.rows() ||
                        mesh.uv_polygons.size() != mesh.polygons.corners.size()
                  : mesh.uv.rows() != n)
        throw IoError(path_.string() + ": texture coordinates: expected " +
                      (corners ? "a row of corners per face" : std::to_string(n) + " rows"));
      static_faces_ += "        texCoord2f[] primvars:st = [";
      for (Eigen::Index i = 0; i < mesh.uv.rows(); ++i) {
        static_faces_ += i ? ", (" : "(";
        text::append_number(static_faces_, mesh.uv(i, 0));
        static_faces_ += ", ";
        text::append_number(static_faces_, mesh.uv(i, 1));
        static_faces_ += ')';
      }
      static_faces_ += std::string("] (\n            interpolation = \"") +
                       (corners ? "faceVarying" : "vertex") + "\"\n        )\n";
      if (corners) {
        std::string st = "[";
        bool first_corner = true;
        for_each_face(mesh, [&](const FaceCorners& f) {
          for (const int t : f.uv) {
            if (!first_corner) st += ", ";
            first_corner = false;
            text::append_integer(st, t);
          }
        });
        static_faces_ += "        int[] primvars:st:indices = " + st + "]\n";
      }
    }
  }

  Spool& p = spool("point3f[] points", "");
  append_time(buf, time_code);
  buf += '[';
  Eigen::Vector3d lo = Eigen::Vector3d::Zero(), hi = Eigen::Vector3d::Zero();
  for (Eigen::Index i = 0; i < n; ++i) {
    if (i) buf += ", ";
    append_tuple(buf, mesh.points(i, 0), mesh.points(i, 1), mesh.points(i, 2));
    const Eigen::Vector3d x = mesh.points.row(i).transpose();
    lo = i ? lo.cwiseMin(x) : x;
    hi = i ? hi.cwiseMax(x) : x;
    if (buf.size() > (1u << 20)) flush_to(p);
  }
  buf += "],\n";
  flush_to(p);

  Spool& e = spool("float3[] extent", "");
  append_time(buf, time_code);
  buf += '[';
  append_tuple(buf, lo.x(), lo.y(), lo.z());
  buf += ", ";
  append_tuple(buf, hi.x(), hi.y(), hi.z());
  buf += "],\n";
  flush_to(e);

  if (normals_) {
    Spool& s = spool("normal3f[] normals", "interpolation = \"vertex\"");
    const Points3 normals = vertex_normals(mesh);
    append_time(buf, time_code);
    buf += '[';
    for (Eigen::Index i = 0; i < n; ++i) {
      if (i) buf += ", ";
      append_tuple(buf, normals(i, 0), normals(i, 1), normals(i, 2));
      if (buf.size() > (1u << 20)) flush_to(s);
    }
    buf += "],\n";
    flush_to(s);
  }

  for (const auto& a : attributes) {
    if (a.values.rows() != n)
      throw IoError(path_.string() + ": primvar " + a.name + ": expected " + std::to_string(n) +
                    " values, got " + std::to_string(a.values.rows()));
    const Eigen::Index c = a.values.cols();
    if (c != 1 && c != 3)
      throw IoError(path_.string() + ": primvar " + a.name +
                    ": expected 1 or 3 components per vertex, got " + std::to_string(c));
    const std::string declaration =
        (c == 1 ? "float[] primvars:" : "float3[] primvars:") + usda_identifier(a.name);
    auto values = [&](std::string& out, Spool* s) {
      out += '[';
      for (Eigen::Index i = 0; i < n; ++i) {
        if (i) out += ", ";
        if (c == 1)
          text::append_number(out, a.values(i, 0));
        else
          append_tuple(out, a.values(i, 0), a.values(i, 1), a.values(i, 2));
        if (s && out.size() > (1u << 20)) flush_to(*s);
      }
      out += ']';
    };
    const bool known_static = std::find(static_attributes_.begin(), static_attributes_.end(),
                                        declaration) != static_attributes_.end();
    if (a.is_static && frames_ == 0) {
      // Held once by the cache: one value for all times, not the same array in every frame.
      static_primvars_ += "        " + declaration + " = ";
      values(static_primvars_, nullptr);
      static_primvars_ += " (\n            interpolation = \"vertex\"\n        )\n";
      static_attributes_.push_back(declaration);
    } else if (a.is_static != known_static) {
      throw IoError(path_.string() + ": " + declaration + ": " +
                    (known_static ? "static in the first frame, per frame at time "
                                  : "per frame in the first frame, static at time ") +
                    std::to_string(time_code));
    } else if (!a.is_static) {
      Spool& s = spool(declaration, "interpolation = \"vertex\"");
      append_time(buf, time_code);
      values(buf, &s);
      buf += ",\n";
      flush_to(s);
    }
  }
  if (colors) {
    Spool& s = spool("color3f[] primvars:displayColor", "interpolation = \"vertex\"");
    append_time(buf, time_code);
    buf += '[';
    for (Eigen::Index i = 0; i < colors->rows(); ++i) {
      if (i) buf += ", ";
      append_tuple(buf, (*colors)(i, 0) / 255.0, (*colors)(i, 1) / 255.0, (*colors)(i, 2) / 255.0);
      if (buf.size() > (1u << 20)) flush_to(s);
    }
    buf += "],\n";
    flush_to(s);
  }
  ++frames_;
}

void UsdaWriter::commit() {
  if (frames_ == 0) throw IoError(path_.string() + ": no frame to write");
  AtomicFile out(path_);
  std::string h = "#usda 1.0\n(\n";
  if (!stage_.metadata.empty()) {
    h += "    customLayerData = {\n";
    for (const auto& [k, v] : stage_.metadata)
      h += "        string " + usda_identifier(k) + " = " + usda_quote(v) + "\n";
    h += "    }\n";
  }
  auto number = [](double v) {
    std::string s;
    text::append_number(s, v);
    return s;
  };
  h += "    defaultPrim = \"root\"\n";
  h += "    startTimeCode = " + number(stage_.start_time_code) + "\n";
  h += "    endTimeCode = " + number(stage_.end_time_code) + "\n";
  h += "    timeCodesPerSecond = " + number(stage_.time_codes_per_second) + "\n";
  h += "    framesPerSecond = " + number(stage_.time_codes_per_second) + "\n";
  h += "    upAxis = \"" + stage_.up_axis + "\"\n";
  h += "    metersPerUnit = " + number(stage_.meters_per_unit) + "\n";
  h += ")\n\n";
  h += "def Xform \"root\" (\n    kind = \"component\"\n)\n{\n";
  h += "    def Mesh \"" + name_ + "\"\n    {\n";
  h += "        uniform token subdivisionScheme = \"none\"\n";
  h += "        uniform token orientation = \"rightHanded\"\n";
  h += static_faces_;
  h += static_primvars_;
  out.write(h);

  std::vector<char> chunk(1 << 20);
  for (auto& s : spools_) {
    s->file->flush();
    std::string head;
    if (!s->metadata.empty())
      head += "        " + s->declaration + " (\n            " + s->metadata + "\n        )\n";
    head += "        " + s->declaration + ".timeSamples = {\n";
    out.write(head);
    std::ifstream in(s->file->temporary_path(), std::ios::binary);
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      out.write(chunk.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (!in.eof())
      throw IoError(path_.string() + ": cannot read back " + s->file->temporary_path().string());
    out.write("        }\n");
  }
  out.write("    }\n}\n");
  out.commit();
  spools_.clear();
}

}  // namespace datadyn::io
