#include "io/mesh_export.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <numbers>
#include <optional>
#include <set>
#include <unordered_map>

#include <Eigen/Geometry>

#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/mesh_topology.hpp"
#include "core/vertex_match.hpp"
#include "io/atomic_file.hpp"
#include "io/mesh_formats.hpp"
#include "io/mesh_loaders.hpp"
#include "io/path_template.hpp"
#include "io/point_cache.hpp"
#include "io/usda_writer.hpp"
#include "io/vdb_level_set.hpp"
#include "io/xdmf_writer.hpp"

namespace datadyn::io {

namespace {

constexpr std::array<std::pair<ExportFormat, const char*>, 7> kFormats{
    {{ExportFormat::Obj, "obj"},
     {ExportFormat::Ply, "ply"},
     {ExportFormat::Pc2, "pc2"},
     {ExportFormat::Mdd, "mdd"},
     {ExportFormat::Usda, "usda"},
     {ExportFormat::Vdb, "vdb"},
     {ExportFormat::Xdmf, "xdmf"}}};

const char* source_name(ExportSource s) {
  switch (s) {
    case ExportSource::Auto:
      return "auto";
    case ExportSource::Mesh:
      return "mesh";
    case ExportSource::Points:
      return "points";
    case ExportSource::Particles:
      return "particles";
    case ExportSource::Grid:
      return "grid";
  }
  return "?";
}

std::string extension_of(ExportFormat f) {
  return f == ExportFormat::Xdmf ? ".xmf" : std::string(".") + format_name(f);
}

/// Formats that write one file per frame (the others: one file per sequence).
bool per_frame_format(ExportFormat f) {
  return f == ExportFormat::Obj || f == ExportFormat::Ply || f == ExportFormat::Vdb;
}

/// "1-48", or "12 frames from 1 to 96" when not contiguous.
std::string frames_text(const std::vector<std::int64_t>& frames) {
  if (frames.empty()) return "no frames";
  const auto n = static_cast<std::int64_t>(frames.size());
  if (frames.back() - frames.front() + 1 == n)
    return std::to_string(frames.front()) + "-" + std::to_string(frames.back());
  return std::to_string(n) + " frames from " + std::to_string(frames.front()) + " to " +
         std::to_string(frames.back());
}

/// Where the texture coordinates written come from: points/uv, the face-varying uv/ group (PLY
/// splits its vertices at the seams), a box projection of the rest pose (uv_projection), or the
/// match.file's own.
enum class UvSource { None, Vertex, Corner, Box, Reference };

/// The map from the cache's coordinates (metres, Y up) to match.file's: `scale` units per metre,
/// and with Z up the cache's (x, y, z) at the file's (x, -z, y).
Eigen::Matrix3d to_file_frame(double scale, bool z_up) {
  Eigen::Matrix3d m = Eigen::Matrix3d::Identity();
  if (z_up) m << 1, 0, 0, 0, 0, -1, 0, 1, 0;
  return scale * m;
}

/// The mesh of match.file, and the cache vertex each of its vertices lies on.
struct MatchedMesh {
  std::vector<int> vertex;  // #M: the cache's vertex for the file's vertex j
  // The file's faces in its order (keep_faces), with its face-varying texture coordinates or
  // none; no points.
  PolygonMesh faces;
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // to_file_frame(1, up axis)
  double scale = 1;                                        // match.scale: units per metre
  Eigen::Matrix3d to_file() const { return scale * rotation; }
};

/// The point arrays a match turns into the file's frame (docs/cache-format.md, Sequences): a
/// velocity (metres per second) as positions are, rotated and scaled; a normal (a direction)
/// rotated only. Another 3-component array's meaning is not known, so it is written as it is.
bool turned_by_match(const std::string& name) {
  return name == "velocity" || name == "normal";
}

/// The plan for one sequence: everything checked, nothing written.
struct Job {
  std::string sequence;
  ExportSource source = ExportSource::Auto;
  std::string grid;                   // Grid source
  std::string topology;               // Mesh source: "triangles", "quads", "both", "tetrahedra"
  std::vector<std::size_t> indices;   // frame indices to export
  std::size_t job_frames = 0;         // frames of the whole export, every shard's
  std::filesystem::path output;       // template (per-frame formats) or file
  std::filesystem::path mesh_output;  // pc2/mdd: the frame-1 OBJ
  std::vector<std::filesystem::path> files;
  std::vector<std::string> attributes;       // written per vertex
  std::string color;                         // colour attribute, "" for none
  UvSource uv = UvSource::None;              // texture coordinates written
  double voxel_size = 0, radius = 0;         // level sets from particles or meshes
  std::shared_ptr<const MatchedMesh> match;  // match.file, or none
};

Points3 to_points3(
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& x) {
  Points3 p = Points3::Zero(x.rows(), 3);
  p.leftCols(std::min<Eigen::Index>(3, x.cols())) = x.leftCols(std::min<Eigen::Index>(3, x.cols()));
  return p;
}

/// Mean distance to the nearest other point, over up to 20000 points (a hash grid of cells about
/// one mean spacing wide). 0 when fewer than 2 points.
double mean_nearest_distance(const Points3& p) {
  const Eigen::Index n = p.rows();
  if (n < 2) return 0;
  const Eigen::Vector3d lo = p.colwise().minCoeff(), hi = p.colwise().maxCoeff();
  const Eigen::Vector3d ext = (hi - lo).cwiseMax(1e-12);
  int dims = 0;
  double measure = 1;
  for (int d = 0; d < 3; ++d)
    if (ext[d] > 1e-9 * ext.maxCoeff()) {
      ++dims;
      measure *= ext[d];
    }
  double cell = std::pow(measure / static_cast<double>(n), 1.0 / std::max(dims, 1));
  if (!(cell > 0)) cell = ext.maxCoeff();
  auto key = [&](const Eigen::Vector3d& x) {
    const Eigen::Vector3d c = ((x - lo) / cell).array().floor();
    return std::array<std::int64_t, 3>{static_cast<std::int64_t>(c[0]),
                                       static_cast<std::int64_t>(c[1]),
                                       static_cast<std::int64_t>(c[2])};
  };
  std::map<std::array<std::int64_t, 3>, std::vector<Eigen::Index>> cells;
  for (Eigen::Index i = 0; i < n; ++i) cells[key(p.row(i).transpose())].push_back(i);
  const Eigen::Index step = std::max<Eigen::Index>(1, n / 20000);
  double sum = 0;
  std::size_t count = 0;
  for (Eigen::Index i = 0; i < n; i += step) {
    const Eigen::Vector3d x = p.row(i).transpose();
    const auto k = key(x);
    double best = std::numeric_limits<double>::infinity();
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c) {
          auto it = cells.find({k[0] + a, k[1] + b, k[2] + c});
          if (it == cells.end()) continue;
          for (Eigen::Index j : it->second)
            if (j != i) best = std::min(best, (p.row(j).transpose() - x).squaredNorm());
        }
    if (std::isfinite(best)) {
      sum += std::sqrt(best);
      ++count;
    }
  }
  return count ? sum / static_cast<double>(count) : cell;
}

double surface_area(const PolygonMesh& m) {
  double area = 0;
  // Each face as the fan of triangles from its first corner (a quad: (0, 1, 2) and (0, 2, 3)).
  for_each_face(m, [&](const FaceCorners& f) {
    const Eigen::Vector3d p = m.points.row(f.vertices[0]);
    for (std::size_t j = 1; j + 1 < f.vertices.size(); ++j) {
      const Eigen::Vector3d q = m.points.row(f.vertices[j]), r = m.points.row(f.vertices[j + 1]);
      area += 0.5 * (q - p).cross(r - p).norm();
    }
  });
  return area;
}

/// Throws (ConfigError at set-up, RunError for a later frame) if the narrow band of `m` at the
/// job's voxel size would exceed level_set.max_voxels.
void check_band_voxels(const PolygonMesh& m, double voxel_size, const MeshExportParams& params,
                       const std::string& frame, bool setup) {
  const double area = surface_area(m), band = 2 * params.level_set.half_width;
  const double voxels = area / (voxel_size * voxel_size) * band;
  if (!(voxels > params.level_set.max_voxels)) return;
  char text[320];
  std::snprintf(text, sizeof text,
                "%s: %.3g m^2 of surface at a voxel size of %.3g m gives about %.3g narrow-band "
                "voxels, more than level_set.max_voxels (%.3g; about 30 bytes each while "
                "meshing): use a voxel size of at least %.3g m or raise level_set.max_voxels",
                frame.c_str(), area, voxel_size, voxels, params.level_set.max_voxels,
                std::sqrt(area * band / params.level_set.max_voxels));
  if (setup)
    throw ConfigError(ConfigError::FreeText{}, params.config_origin({"level_set"}),
                      "/level_set/voxel_size", text);
  throw RunError(text);
}

/// The voxels OpenVDB's particle rasterizer writes for `n` spheres of `radius` at `voxel_size`:
/// each sphere's narrow-band shell, radius ± half_width voxels (spheres that overlap share some,
/// so this bounds the level set's size from above and its work from below).
double particle_band_voxels(std::size_t n, double radius, double voxel_size, double half_width) {
  const double r = radius / voxel_size;
  const double outer = r + half_width, inner = std::max(r - half_width, 0.0);
  return static_cast<double>(n) * 4.0 / 3.0 * std::numbers::pi *
         (outer * outer * outer - inner * inner * inner);
}

/// Throws a ConfigError if the particles' shells at the job's voxel size and radius exceed
/// level_set.max_voxels: 1,000 particles of 80 voxels ran for minutes a frame, with no word.
void check_particle_voxels(std::size_t n, const Job& job, const MeshExportParams& params,
                           const std::string& where) {
  const double w = params.level_set.half_width, cap = params.level_set.max_voxels;
  const double voxels = particle_band_voxels(n, job.radius, job.voxel_size, w);
  if (!(voxels > cap)) return;
  // The voxel size that meets the bound with the radius given (none when the radius follows the
  // voxel size, 2 voxels: then the bound is in the particle count alone).
  std::string remedy = "raise level_set.max_voxels";
  if (params.level_set.radius > 0) {
    double lo = job.voxel_size, hi = job.radius / 1.5;  // at most 1.5 voxels across the radius
    if (particle_band_voxels(n, job.radius, hi, w) <= cap) {
      for (int k = 0; k < 100; ++k) {
        const double mid = 0.5 * (lo + hi);
        (particle_band_voxels(n, job.radius, mid, w) > cap ? lo : hi) = mid;
      }
      char text[96];
      std::snprintf(text, sizeof text, "use a voxel size of at least %.3g m or ", hi);
      remedy = text + remedy;
    }
  }
  char text[400];
  std::snprintf(text, sizeof text,
                "%s: %zu particles of radius %.3g m at a voxel size of %.3g m write about %.3g "
                "narrow-band voxels a frame, more than level_set.max_voxels (%.3g): %s",
                where.c_str(), n, job.radius, job.voxel_size, voxels, cap, remedy.c_str());
  throw ConfigError(ConfigError::FreeText{}, params.config_origin({"level_set"}),
                    "/level_set/voxel_size", text);
}

double mean_edge_length(const PolygonMesh& m) {
  double sum = 0;
  std::size_t count = 0;
  for_each_face(m, [&](const FaceCorners& f) {
    const std::size_t n = f.vertices.size();
    for (std::size_t j = 0; j < n; ++j) {
      sum += (m.points.row(f.vertices[j]) - m.points.row(f.vertices[(j + 1) % n])).norm();
      ++count;
    }
  });
  return count ? sum / static_cast<double>(count) : 0;
}

/// Throws IoError "<what>: point i is not finite" for the first row of `m` that is not.
template <class Matrix>
void require_finite_rows(const Matrix& m, const std::string& what) {
  if (m.allFinite()) return;
  Eigen::Index i = 0;
  while (m.row(i).allFinite()) ++i;
  throw IoError(what + ": point " + std::to_string(i) + " is not finite");
}

/// Reads what a job needs frame by frame (one frame in memory).
class FrameSource {
 public:
  /// `where` names the sequence in messages: "<file>: /sequences/<name>".
  FrameSource(const SequenceReader& seq, const Job& job, std::string where)
      : seq_(seq), job_(job), where_(std::move(where)) {
    if (job.match) {
      faces_ = job.match->faces;
      kept_ = job.match->vertex;
      if (job.uv != UvSource::Reference) {
        faces_.uv.resize(0, 2);
        faces_.uv_triangles.resize(0, 3);
        faces_.uv_quads.resize(0, 4);
        faces_.uv_polygons.clear();
      }
    } else if (job.source == ExportSource::Mesh) {
      if (job.topology == "tetrahedra") {
        faces_.triangles = surface_of_tetrahedra(seq.topology("tetrahedra"), seq.point_count());
      } else {
        if (seq.has("topology/triangles")) faces_.triangles = seq.topology("triangles");
        if (seq.has("topology/quads")) faces_.quads = seq.topology("quads");
      }
    }
    for (const auto& a : job.attributes)
      if (!seq.is_per_frame("points/" + a)) static_[a] = seq.read_static<float>("points/" + a);
    if (job.uv == UvSource::Vertex) {
      const TextureCoordinates uv = seq.read_static<float>("points/uv").matrix();
      require_finite_rows(uv, where_ + "/points/uv");
      faces_.uv = kept(uv);
    } else if (job.uv == UvSource::Box) {
      // The rest pose, else the first frame of the sequence (not of the export: every shard and
      // every frame range must get the same texture coordinates).
      const bool rest = seq.has("rest/position");
      const Points3 reference =
          to_points3(rest ? seq.read_static<double>("rest/position").matrix() : seq.positions(0));
      require_finite_rows(reference, where_ + (rest ? "/rest/position"
                                                    : "/points/position: frame " +
                                                          std::to_string(seq.frames()[0])));
      box_projection_uv(kept(reference), faces_);
    } else if (job.uv == UvSource::Corner) {
      faces_.uv = seq.uv_coordinates().cast<float>();
      if (faces_.triangles.rows() > 0) faces_.uv_triangles = seq.uv_corners("triangles");
      if (faces_.quads.rows() > 0) faces_.uv_quads = seq.uv_corners("quads");
    }
    if (!job.color.empty() && !seq.is_per_frame("points/" + job.color))
      static_[job.color] = seq.read_static<float>("points/" + job.color);
  }

  /// The faces and texture coordinates every frame's mesh gets (no points).
  const PolygonMesh& faces() const { return faces_; }

  /// The cache's vertices at frame index `f` with the sequence's faces (Mesh) or none (Points,
  /// Particles).
  PolygonMesh mesh(std::size_t f) const {
    PolygonMesh m = faces_;
    m.points = positions(f);
    return m;
  }

  /// The positions at frame index `f`; a non-finite one (a damaged cache, or one from another
  /// writer) is an error naming the frame and point, not NaN in an OBJ or an OpenVDB exception.
  Points3 positions(std::size_t f) const {
    Points3 x = to_points3(seq_.positions(f));
    require_finite_rows(x, where_ + "/points/position: frame " + std::to_string(seq_.frames()[f]));
    x = kept(x);
    if (job_.match) x = x * job_.match->to_file().transpose();
    return x;
  }

  /// The number of vertices the files get: the cache's, but for a tetrahedral mesh's interior,
  /// or match.file's.
  std::size_t point_count() const { return kept_.empty() ? seq_.point_count() : kept_.size(); }
  /// The cache's vertices no file gets because no boundary face uses them (a tetrahedral mesh's
  /// interior); match.file's are counted where they are matched.
  std::size_t left_out() const { return job_.match ? 0 : seq_.point_count() - point_count(); }

  VertexAttribute attribute(const std::string& name, std::size_t f) const {
    const std::string path = "points/" + name;
    auto it = static_.find(name);
    const Array<float> a = it != static_.end() ? it->second : seq_.read_frame<float>(path, f);
    VertexAttribute v;
    v.name = name;
    v.values = a.matrix();
    v.is_static = it != static_.end();
    require_finite_rows(
        v.values, where_ + "/" + path +
                      (it != static_.end() ? "" : ": frame " + std::to_string(seq_.frames()[f])));
    v.values = kept(v.values);
    if (job_.match && v.values.cols() == 3 && turned_by_match(name)) {
      const Eigen::Matrix3d m = name == "velocity" ? job_.match->to_file() : job_.match->rotation;
      v.values = (v.values.cast<double>() * m.transpose()).cast<float>();
    }
    return v;
  }

  /// The level set of frame index `f` from the job's source.
  LevelSet level_set(std::size_t f, const MeshExportParams& params,
                     const NoteCallback& note) const {
    try {
      return make_level_set(f, params, note);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      // OpenVDB's own exceptions ("ArithmeticError: ...") name neither file nor frame.
      throw RunError(where_ + ": frame " + std::to_string(seq_.frames()[f]) +
                     ": the level set failed: " + e.what());
    }
  }

 private:
  LevelSet make_level_set(std::size_t f, const MeshExportParams& params,
                          const NoteCallback& note) const {
    const auto& lp = params.level_set;
    if (job_.source == ExportSource::Grid) {
      const Array<float> values = seq_.read_frame<float>("grids/" + job_.grid, f);
      LevelSet ls;
      try {
        ls = level_set_from_dense(values.data.data(), seq_.grid_spec(job_.grid));
      } catch (const IoError& e) {  // a value that is not finite: name the file and frame
        throw IoError(where_ + "/grids/" + job_.grid + ": frame " +
                      std::to_string(seq_.frames()[f]) + ": " + e.what());
      }
      filter_level_set(ls, lp.dilate, lp.smooth, lp.erode);
      return ls;
    }
    if (job_.source == ExportSource::Mesh) {
      const PolygonMesh m = mesh(f);
      check_band_voxels(m, job_.voxel_size, params,
                        where_ + ": frame " + std::to_string(seq_.frames()[f]), false);
      LevelSet ls = level_set_from_mesh(m, job_.voxel_size, lp.half_width);
      filter_level_set(ls, lp.dilate, lp.smooth, lp.erode);
      return ls;
    }
    ParticleLevelSetParams pp;
    pp.voxel_size = job_.voxel_size;
    pp.radius = job_.radius;
    pp.half_width = lp.half_width;
    pp.dilate = lp.dilate;
    pp.smooth = lp.smooth;
    pp.erode = lp.erode;
    pp.rasterizer = lp.rasterizer;
    auto r = level_set_from_particles(positions(f), pp);
    if ((r.skipped_small || r.skipped_large) && note)
      note(NoteLevel::Info, "/sequences/" + job_.sequence + " frame " +
                                std::to_string(seq_.frames()[f]) + ": " +
                                std::to_string(r.skipped_small + r.skipped_large) +
                                " particles skipped by OpenVDB (radius outside 1.5 to 100 voxels)");
    return std::move(r.level_set);
  }

  /// The boundary triangles of `tets`, over the vertices they use: kept_ lists those (in the
  /// cache's order) when some are left out. Importers drop a vertex no face uses (Blender's OBJ
  /// importer does), and an OBJ that kept the interior vertices could then not take its point
  /// cache: "Vertex count mismatch".
  Triangles surface_of_tetrahedra(const Tets& tets, std::size_t points) {
    Triangles triangles = boundary_triangles(tets);
    std::vector<int> index(points, -1);
    for (Eigen::Index i = 0; i < triangles.size(); ++i)
      index[static_cast<std::size_t>(triangles.data()[i])] = 0;
    for (std::size_t v = 0; v < points; ++v)
      if (index[v] == 0) {
        index[v] = static_cast<int>(kept_.size());
        kept_.push_back(static_cast<int>(v));
      }
    if (kept_.size() == points) {
      kept_.clear();
      return triangles;
    }
    for (Eigen::Index i = 0; i < triangles.size(); ++i)
      triangles.data()[i] = index[static_cast<std::size_t>(triangles.data()[i])];
    return triangles;
  }

  /// The rows of the vertices the files get (kept_ may list one several times: match.file's
  /// vertices split at a seam of its own).
  template <class Matrix>
  Matrix kept(const Matrix& rows) const {
    if (kept_.empty()) return rows;
    Matrix out(static_cast<Eigen::Index>(kept_.size()), rows.cols());
    for (std::size_t i = 0; i < kept_.size(); ++i)
      out.row(static_cast<Eigen::Index>(i)) = rows.row(kept_[i]);
    return out;
  }

  const SequenceReader& seq_;
  const Job& job_;
  std::string where_;
  std::vector<int> kept_;
  PolygonMesh faces_;
  std::map<std::string, Array<float>> static_;
};

}  // namespace

const char* format_name(ExportFormat format) {
  for (const auto& [f, n] : kFormats)
    if (f == format) return n;
  return "?";
}

std::optional<ExportFormat> format_from_name(const std::string& name) {
  for (const auto& [f, n] : kFormats)
    if (name == n) return f;
  return std::nullopt;
}

std::optional<ExportFormat> format_from_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (ext == ".xmf") return ExportFormat::Xdmf;
  if (ext.size() > 1) return format_from_name(ext.substr(1));
  return std::nullopt;
}

namespace {

/// The format, from --format and the extension of `output` (which gets the format's extension
/// when it has none), and what the format allows of the template and of --shard.
ExportFormat resolve_format(const MeshExportParams& params, std::filesystem::path& output) {
  if (params.output.empty()) throw UsageError("-o/--output: an output path is required");
  const auto from_ext = format_from_extension(output);
  ExportFormat format;
  if (params.format) {
    format = *params.format;
    if (from_ext && *from_ext != format)
      throw UsageError("-o " + output.string() + ": the extension says " + format_name(*from_ext) +
                       ", the format is " + format_name(format) + " (change one of them)");
    if (!from_ext) output += extension_of(format);
  } else if (from_ext) {
    format = *from_ext;
  } else {
    throw UsageError("-o " + output.string() +
                     ": cannot tell the format from the extension; give --format "
                     "obj|ply|pc2|mdd|usda|vdb|xdmf or an output ending in one of them");
  }
  const bool per_frame = per_frame_format(format);
  if (!per_frame && has_frame_token(output))
    throw UsageError("-o " + output.string() + ": " + format_name(format) +
                     " writes one file per sequence: remove the frame token (#### or %d)");
  if (!per_frame && params.shard.count > 1)
    throw UsageError(std::string("--shard: ") + format_name(format) +
                     " writes one file per sequence, which shards cannot split; use a per-frame "
                     "format (obj, ply, vdb) or --frames");
  if (params.shard.count < 1 || params.shard.index < 1 || params.shard.index > params.shard.count)
    throw UsageError("--shard: expected K/N with 1 <= K <= N");
  return format;
}

/// One sequence's export: its source, frames (this shard's), attributes, texture coordinates,
/// level-set sizes and files, all checked before anything is written. `several`: more than one
/// sequence is exported.
/// Sets job.indices (this shard's frames) and job.job_frames (the whole export's).
void plan_frames(const MeshExportParams& params, const SequenceReader& seq, ExportFormat format,
                 const std::string& where, Job& job) {
  // Frames: every one asked for must be in the cache; then this shard's part.
  std::vector<std::size_t> indices;
  if (params.frames.empty()) {
    for (std::size_t i = 0; i < seq.frame_count(); ++i) indices.push_back(i);
  } else {
    for (std::int64_t f : params.frames) {
      const auto idx = seq.frame_index(f);
      if (!idx)
        // The cache is sound; the request is not (exit 2, as wave-edit's --frames).
        throw UsageError("--frames: " + where + "/frame: frame " + std::to_string(f) +
                         " is not in the cache (it has " + frames_text(seq.frames()) + ")");
      indices.push_back(*idx);
    }
  }
  job.job_frames = indices.size();
  job.indices = shard_part(indices, params.shard);
  if (job.indices.empty() && params.shard.count == 1)
    throw IoError(where + "/frame: the sequence has no frames to export");
  if (format == ExportFormat::Pc2 && job.indices.size() > 1) {
    const std::int64_t step = seq.frames()[job.indices[1]] - seq.frames()[job.indices[0]];
    for (std::size_t i = 1; i < job.indices.size(); ++i)
      if (seq.frames()[job.indices[i]] - seq.frames()[job.indices[i - 1]] != step)
        throw UsageError("--frames: pc2 stores evenly spaced samples; frames " +
                         std::to_string(seq.frames()[job.indices[i - 1]]) + " and " +
                         std::to_string(seq.frames()[job.indices[i]]) + " break the step of " +
                         std::to_string(step));
  }
}

/// Values per vertex of a point array: the product of its axes after the frame and point axes.
std::size_t components(const SequenceReader& seq, const std::string& path) {
  const Shape shape = seq.shape(path);
  std::size_t comps = 1;
  for (std::size_t i = seq.is_per_frame(path) ? 2 : 1; i < shape.size(); ++i) comps *= shape[i];
  return comps;
}

/// Says how the attributes of a matched export arrive: velocity and normal in the file's frame
/// (and velocity in its units), any other 3-component array as it is, with a warning, since a
/// vector in metres, Y up, on a mesh in centimetres, Z up, points the wrong way.
void note_matched_attributes(const SequenceReader& seq, const std::string& where,
                             const ExportMatchParams& mp, const Job& job,
                             const NoteCallback& note) {
  std::string turned, kept;
  for (const auto& a : job.attributes) {
    if (components(seq, "points/" + a) != 3) continue;
    std::string& list = turned_by_match(a) ? turned : kept;
    list += (list.empty() ? "" : ", ") + a;
  }
  char frame[96];
  std::snprintf(frame, sizeof frame, "%s up, %.9g units per metre", mp.up_axis.c_str(), mp.scale);
  if (!turned.empty())
    note(NoteLevel::Info,
         where + ": " + turned + " turned into match.file's frame (" + std::string(frame) + ")");
  if (!kept.empty())
    note(NoteLevel::Warning, where + ": " + kept + " written as the cache holds " +
                                 (kept.find(',') == std::string::npos ? "it" : "them") +
                                 " (metres, Y up), not in match.file's frame (" +
                                 std::string(frame) +
                                 "): only velocity and normal are known to be vectors");
}

/// Sets job.attributes and job.color where the format has room for them.
void plan_attributes(const MeshExportParams& params, const SequenceReader& seq, ExportFormat format,
                     const std::string& where, const NoteCallback& note, Job& job) {
  const ExportSource source = job.source;
  const std::string fmt = format_name(format);
  // Per-vertex attributes: only where the files have the cache's vertices and room for them.
  const bool cache_vertices = source == ExportSource::Mesh || source == ExportSource::Points;
  const bool has_room =
      format == ExportFormat::Ply || format == ExportFormat::Usda || format == ExportFormat::Xdmf;
  // `scalar`: the colour's attribute (color.attribute), else one of `attributes`.
  auto check_attribute = [&](const std::string& a, bool scalar) {
    const std::string path = "points/" + a;
    if (!seq.has(path))
      throw IoError(where + "/" + path + ": no such point array (" +
                    (scalar ? "color.attribute" : "attributes") +
                    " in the config); "
                    "the sequence has: " +
                    [&] {
                      std::string s;
                      for (const auto& p : seq.point_arrays()) s += (s.empty() ? "" : ", ") + p;
                      return s.empty() ? std::string("none") : s;
                    }());
    const Shape shape = seq.shape(path);
    const std::size_t comps = components(seq, path);
    if (scalar && comps != 1)
      throw IoError(where + "/" + path + ": expected one value per vertex for colours, got " +
                    std::to_string(comps) + " " + shape_string(shape));
    if (format == ExportFormat::Usda && comps != 1 && comps != 3)
      throw IoError(where + "/" + path + ": usda primvars take 1 or 3 values per vertex, got " +
                    std::to_string(comps));
  };
  if (!params.attributes.empty() || !params.color.attribute.empty()) {
    if (format == ExportFormat::Xdmf) {
      for (const auto& a : params.attributes) check_attribute(a, false);
      job.attributes = params.attributes;
    } else if (!has_room || !cache_vertices) {
      if (note)
        note(NoteLevel::Warning,
             std::string("attributes and colours are not written to ") + fmt +
                 (has_room ? " from a level-set mesh (its vertices are not the cache's)"
                           : " (the format has no room for them; use ply or usda)"));
    } else {
      for (const auto& a : params.attributes) check_attribute(a, false);
      job.attributes = params.attributes;
      if (job.match && note) note_matched_attributes(seq, where, params.match, job, note);
      if (!params.color.attribute.empty()) {
        check_attribute(params.color.attribute, true);
        job.color = params.color.attribute;
      }
    }
  }
}

/// Sets job.uv: the cache's texture coordinates, or a box projection, or none.
void plan_texture_coordinates(const MeshExportParams& params, const SequenceReader& seq,
                              ExportFormat format, const std::string& where,
                              const NoteCallback& note, Job& job) {
  const ExportSource source = job.source;
  const std::string& topology = job.topology;
  // match.file's faces are not the cache's: they take the file's own texture coordinates, else
  // the cache's per vertex (through the match) or a box projection, never the cache's uv/.
  if (job.match && params.uv && job.match->faces.face_varying_uv() && format != ExportFormat::Vdb &&
      format != ExportFormat::Xdmf) {
    job.uv = UvSource::Reference;
    return;
  }
  // Texture coordinates: a mesh format's vertices and faces are the cache's, so its
  // face-varying uv/ or its static points/uv (docs/cache-format.md) go with them. Another
  // writer's points/uv of another shape is left out with a note: the export worked before
  // texture coordinates were written, and still does.
  if (params.uv && source == ExportSource::Mesh && format != ExportFormat::Vdb &&
      format != ExportFormat::Xdmf && topology != "tetrahedra" && seq.has("uv/coordinates") &&
      !job.match) {
    const bool tris = topology != "quads", quads = topology != "triangles";
    const char* missing = tris && !seq.has("uv/triangles") ? "triangles"
                          : quads && !seq.has("uv/quads")  ? "quads"
                                                           : nullptr;
    if (missing) {
      if (note)
        note(NoteLevel::Warning, where + "/uv: not written, it has no uv/" + missing +
                                     " for the sequence's topology/" + missing);
    } else {
      job.uv = UvSource::Corner;
      if (format == ExportFormat::Ply) {
        PolygonMesh faces;
        if (tris) {
          faces.triangles = seq.topology("triangles");
          faces.uv_triangles = seq.uv_corners("triangles");
        }
        if (quads) {
          faces.quads = seq.topology("quads");
          faces.uv_quads = seq.uv_corners("quads");
        }
        faces.uv = seq.uv_coordinates().cast<float>();
        const auto points = static_cast<Eigen::Index>(seq.point_count());
        const SeamSplit split = split_uv_seams(faces, points);
        if (note && split.seam_vertices > 0)
          note(NoteLevel::Info,
               where + "/uv: " + std::to_string(split.seam_vertices) +
                   " vertices lie on a seam and PLY holds one texture coordinate per vertex: the " +
                   std::to_string(split.copied.size()) + " copies they need follow the cache's " +
                   std::to_string(points) + " vertices");
      }
    }
  } else if (params.uv && source == ExportSource::Mesh && seq.has("points/uv") &&
             format != ExportFormat::Vdb && format != ExportFormat::Xdmf) {
    const Shape shape = seq.shape("points/uv");
    if (seq.is_per_frame("points/uv") || shape.size() != 2 || shape[1] != 2 ||
        shape[0] != seq.point_count()) {
      if (note)
        note(NoteLevel::Warning,
             where + "/points/uv: not written, expected static texture coordinates [" +
                 std::to_string(seq.point_count()) + ", 2], got " +
                 (seq.is_per_frame("points/uv") ? "per-frame " : "") + shape_string(shape));
    } else {
      job.uv = UvSource::Vertex;
    }
  }
  // A level set's mesh is new every frame: no map can follow it.
  if (params.uv && params.uv_projection == UvProjection::Box && note &&
      (source == ExportSource::Grid || source == ExportSource::Particles) &&
      format != ExportFormat::Vdb && format != ExportFormat::Xdmf)
    note(NoteLevel::Warning,
         where +
             ": uv_projection box: not applied to the mesh of a level set, whose faces change "
             "every frame (a texture could not stay on them)");
  // A mesh without them can get them by box projection of its rest pose.
  if (params.uv && params.uv_projection == UvProjection::Box && job.uv == UvSource::None &&
      source == ExportSource::Mesh && format != ExportFormat::Vdb && format != ExportFormat::Xdmf) {
    job.uv = UvSource::Box;
    // The counts as for the cache's own texture coordinates (the note gave none): the projection
    // is the rest pose's, the same for every frame.
    if (note && format == ExportFormat::Ply) {
      const FrameSource src(seq, job, params.input.string() + ": /sequences/" + job.sequence);
      const auto vertices = static_cast<Eigen::Index>(src.point_count());
      const SeamSplit split = split_uv_seams(src.faces(), vertices);
      note(NoteLevel::Info,
           where + ": uv_projection box: " + std::to_string(split.seam_vertices) +
               " vertices lie on the projection's seams and PLY holds one texture coordinate per "
               "vertex: the " +
               std::to_string(split.copied.size()) + " copies they need follow the " +
               std::to_string(vertices) + " vertices of the mesh");
    }
    if (note && !seq.has("rest/position"))
      note(NoteLevel::Info,
           where +
               "/rest/position: none; uv_projection box projects the sequence's first "
               "frame");
  }
}

/// Sets job.voxel_size and job.radius for a level set, and checks the meshing's iso value.
void plan_level_set(const MeshExportParams& params, const SequenceReader& seq, ExportFormat format,
                    const std::string& where, const NoteCallback& note, Job& job) {
  const ExportSource source = job.source;
  // Level sets from particles or meshes need a voxel size and a radius: resolve them now, so a
  // bad combination fails before any file is written.
  const bool needs_voxel = (source == ExportSource::Particles) ||
                           (format == ExportFormat::Vdb && source == ExportSource::Mesh);
  if (needs_voxel && !job.indices.empty()) {
    // The first exported frame, read once for the voxel size and the band check.
    const FrameSource src(seq, job, params.input.string() + ": /sequences/" + job.sequence);
    const std::size_t first = job.indices.front();
    std::optional<PolygonMesh> first_mesh;
    const auto first_frame = [&]() -> const PolygonMesh& {
      if (!first_mesh) first_mesh = src.mesh(first);
      return *first_mesh;
    };
    // A level set tells inside from outside, which an open surface (a cloth) does not have:
    // meshToLevelSet gave a grid with no inside and exit 0.
    if (source == ExportSource::Mesh) {
      const BorderEdges border = border_edges(first_frame());
      if (border.count > 0)
        throw UsageError(where + ": its mesh is open (" + std::to_string(border.count) +
                         " edges on one face only, the first between points " +
                         std::to_string(border.first.first) + " and " +
                         std::to_string(border.first.second) +
                         "), and a level set needs a closed surface to have an inside; export "
                         "an open surface such as a cloth as obj, ply, usda, pc2 or mdd");
    }
    job.voxel_size = params.level_set.voxel_size;
    if (!(job.voxel_size > 0)) {
      // From the sequence, never from the frames exported: every shard and frame range of a
      // farm job must get the same voxel size (it was each shard's first frame's).
      const Attributes attrs = seq.attributes();
      double spacing = 0;
      std::string how;
      for (const char* name : {"particle_spacing", "l0"}) {  // l0: mps-gen's lattice
        auto it = attrs.find(name);
        if (it == attrs.end() || spacing > 0) continue;
        if (const auto* d = std::get_if<double>(&it->second)) spacing = *d;
        how = std::string("the sequence's ") + name;
      }
      if (!(spacing > 0)) {
        const PolygonMesh m = src.mesh(0);
        spacing =
            source == ExportSource::Mesh ? mean_edge_length(m) : mean_nearest_distance(m.points);
        how = source == ExportSource::Mesh ? "the mean edge length" : "the mean particle spacing";
        how += " of frame " + std::to_string(seq.frames()[0]) + ", the sequence's first";
      }
      if (!(spacing > 0))
        throw IoError(where +
                      "/points/position: cannot derive a voxel size (all points "
                      "coincide); set level_set.voxel_size");
      job.voxel_size = spacing / 2;
      char size[32];
      std::snprintf(size, sizeof size, "%.6g", job.voxel_size);
      // A body of micrometres passed the dry run and failed at its first frame with OpenVDB's
      // bare "ArithmeticError: Non-zero scale values required".
      if (job.voxel_size < kMinVoxelSize)
        throw ConfigError(ConfigError::FreeText{}, params.config_origin({"level_set.voxel_size"}),
                          "/level_set/voxel_size",
                          "0 (automatic) gives half " + how + ", " + size +
                              " m, below OpenVDB's smallest voxel size (2e-5 m): set a "
                              "voxel size of at least 2e-5 m, or export a cache in metres");
      if (note)
        note(NoteLevel::Info, "/sequences/" + job.sequence + ": level_set.voxel_size = " + size +
                                  " m (half " + how + ")");
    }
    job.radius = params.level_set.radius > 0 ? params.level_set.radius : 2 * job.voxel_size;
    if (source == ExportSource::Mesh)
      check_band_voxels(first_frame(), job.voxel_size, params,
                        params.input.string() + ": /sequences/" + job.sequence + ": frame " +
                            std::to_string(seq.frames()[first]),
                        true);
    if (source == ExportSource::Particles && job.radius < 1.5 * job.voxel_size * (1 - 1e-9))
      throw ConfigError(
          ConfigError::FreeText{}, params.config_origin({"level_set.radius"}), "/level_set/radius",
          "expected at least 1.5 voxels (" + std::to_string(1.5 * job.voxel_size) +
              " m at a voxel size of " + std::to_string(job.voxel_size) +
              " m; OpenVDB skips smaller particles), got " + std::to_string(job.radius) + " m");
    if (source == ExportSource::Particles)
      check_particle_voxels(seq.point_count(), job, params,
                            params.input.string() + ": /sequences/" + job.sequence);
  }
  // A mesh of a level set exists only within its narrow band: an iso value beyond it gave empty
  // files with exit 0.
  const bool meshes_level_set =
      format != ExportFormat::Vdb && format != ExportFormat::Xdmf &&
      (source == ExportSource::Particles || source == ExportSource::Grid) && !job.indices.empty();
  if (meshes_level_set) {
    double band = 0;
    if (source == ExportSource::Grid) {
      const GridSpec g = seq.grid_spec(job.grid);
      band = g.background * g.voxel_size;
    } else {
      band = params.level_set.half_width * job.voxel_size;
    }
    if (!(std::abs(params.meshing.iso_value) < band)) {
      char text[96];  // %g: 1e308 was printed as 309 digits
      std::snprintf(text, sizeof text, "|iso_value| < %.6g m, got %.6g", band,
                    params.meshing.iso_value);
      throw ConfigError(
          ConfigError::FreeText{},
          params.config_origin(source == ExportSource::Grid
                                   ? std::vector<std::string>{"meshing.iso_value"}
                                   : std::vector<std::string>{"meshing.iso_value",
                                                              "level_set.half_width",
                                                              "level_set.voxel_size"}),
          "/meshing/iso_value",
          std::string("expected a value inside the level set's narrow band, ") + text);
    }
  }
}

/// "(x, y, z)" with 6 significant digits.
std::string point_text(const Eigen::Vector3d& x) {
  char text[96];
  std::snprintf(text, sizeof text, "(%.6g, %.6g, %.6g)", x.x(), x.y(), x.z());
  return text;
}

/// match.file's vertices in the cache's units and frame, at this scale and up axis.
Points3 file_in_cache(const SurfaceMesh& file, double scale, bool z_up) {
  return file.vertices * to_file_frame(scale, z_up).inverse().transpose();
}

/// What sets a mismatch of match.file right, when a scale of a common unit or the other up axis
/// makes every vertex lie on one (tried, not guessed); else the size of the file's mesh against
/// the pose's, a hint of its own.
std::string match_hint(const ExportMatchParams& mp, const SurfaceMesh& file, const Points3& pose,
                       double tolerance) {
  const auto diagonal = [](const Points3& p) {
    return (p.colwise().maxCoeff() - p.colwise().minCoeff()).norm();
  };
  const double ratio = diagonal(file_in_cache(file, mp.scale, false)) / diagonal(pose);
  // Units per metre: metres, centimetres, millimetres, decimetres, inches, feet, kilometres.
  const double units[] = {1, 100, 1000, 10, 1 / 0.0254, 1 / 0.3048, 1e-3};
  std::vector<double> scales{mp.scale};
  for (double u : units)
    if (std::abs(mp.scale * ratio / u - 1) < 0.02 && u != mp.scale) scales.push_back(u);
  for (double scale : scales)
    for (const char* axis : {"Y", "Z"}) {
      if (scale == mp.scale && axis == mp.up_axis) continue;
      const bool z_up = std::string(axis) == "Z";
      if (match_vertices(pose, file_in_cache(file, scale, z_up), tolerance).unmatched == 0) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "; every vertex lies on one with match.scale = %.9g and "
                      "match.up_axis = %s",
                      scale, axis);
        return text;
      }
    }
  char text[320];
  std::snprintf(text, sizeof text,
                " (at match.scale %.6g and match.up_axis %s the file's mesh is %.4g times the "
                "size of the cache's; check that it shows the cache's pose, match.frame 0 for "
                "the rest pose, and that it is this mesh)",
                mp.scale, mp.up_axis.c_str(), ratio);
  return text;
}

/// "24 vertices and 12 quads", "20 vertices, 3 triangles and 1 polygon": `vertices` and the
/// kinds of face `m` has (0 triangles for none).
std::string vertex_and_face_counts(Eigen::Index vertices, const PolygonMesh& m) {
  std::vector<std::string> parts{std::to_string(vertices) + " vertices"};
  const auto part = [&](Eigen::Index n, const char* what) {
    if (n > 0) parts.push_back(std::to_string(n) + " " + what + (n == 1 ? "" : "s"));
  };
  part(m.triangles.rows(), "triangle");
  part(m.quads.rows(), "quad");
  part(static_cast<Eigen::Index>(m.polygons.sizes.size()), "polygon");
  if (parts.size() == 1) parts.push_back("0 triangles");
  std::string out = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i)
    out += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

/// The faces of match.file as the formats take them, in the file's order: each face whose
/// corners are distinct as it is (a triangle, a quad or a larger polygon), one with a vertex twice
/// as the triangles load_obj cut it into; with their texture coordinates where the file has them.
PolygonMesh keep_faces(const SurfaceMesh& mesh) {
  const bool uv = !mesh.uv.empty();
  std::vector<int> tri, tri_uv, quad, quad_uv;
  PolygonMesh out;
  // The file's faces: (kind, row) with kind 0 a triangle, 1 a quad, 2 a polygon.
  std::vector<std::pair<int, Eigen::Index>> order;
  std::size_t corner = 0;
  Eigen::Index t = 0;  // the polygon's first triangle
  for (const int size : mesh.polygons.sizes) {
    const int* v = mesh.polygons.corners.data() + corner;
    std::vector<int> sorted(v, v + size);
    std::sort(sorted.begin(), sorted.end());
    const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    if (distinct && size > 3) {
      const bool is_quad = size == 4;
      std::vector<int>& into = is_quad ? quad : out.polygons.corners;
      std::vector<int>& into_uv = is_quad ? quad_uv : out.uv_polygons;
      order.emplace_back(is_quad ? 1 : 2,
                         is_quad ? static_cast<Eigen::Index>(quad.size() / 4)
                                 : static_cast<Eigen::Index>(out.polygons.sizes.size()));
      if (!is_quad) out.polygons.sizes.push_back(size);
      into.insert(into.end(), v, v + size);
      // The texture coordinate of each corner: the one its vertex has in the face's triangles.
      for (int c = 0; c < size && uv; ++c) {
        bool found = false;
        for (Eigen::Index k = t; k < t + size - 2 && !found; ++k)
          for (int e = 0; e < 3 && !found; ++e)
            if (mesh.triangles(k, e) == v[c]) {
              into_uv.push_back(mesh.uv.corners(k, e));
              found = true;
            }
        DATADYN_CHECK(found);
      }
    } else {
      for (Eigen::Index k = t; k < t + size - 2; ++k) {
        order.emplace_back(0, static_cast<Eigen::Index>(tri.size() / 3));
        for (int e = 0; e < 3; ++e) {
          tri.push_back(mesh.triangles(k, e));
          if (uv) tri_uv.push_back(mesh.uv.corners(k, e));
        }
      }
    }
    corner += static_cast<std::size_t>(size);
    t += size - 2;
  }
  DATADYN_CHECK_EQ(t, mesh.triangles.rows());
  const auto rows = [](const std::vector<int>& x, Eigen::Index width) {
    return static_cast<Eigen::Index>(x.size()) / width;
  };
  out.triangles = Eigen::Map<const Triangles>(tri.data(), rows(tri, 3), 3);
  out.quads = Eigen::Map<const Quads>(quad.data(), rows(quad, 4), 4);
  // The kinds interleaved: the formats write the faces in this order, not triangles first, so
  // the file's face numbers (face sets, materials by face) hold in what is written.
  const Eigen::Index first[3] = {0, out.triangles.rows(), out.triangles.rows() + out.quads.rows()};
  const int kinds =
      (out.triangles.rows() > 0) + (out.quads.rows() > 0) + (out.polygons.sizes.empty() ? 0 : 1);
  if (kinds > 1)
    for (const auto& [kind, row] : order) out.face_order.push_back(first[kind] + row);
  if (uv) {
    DATADYN_CHECK_EQ(quad_uv.size(), quad.size());
    DATADYN_CHECK_EQ(out.uv_polygons.size(), out.polygons.corners.size());
    out.uv = mesh.uv.coordinates.cast<float>();
    out.uv_triangles = Eigen::Map<const Triangles>(tri_uv.data(), rows(tri_uv, 3), 3);
    out.uv_quads = Eigen::Map<const Quads>(quad_uv.data(), rows(quad_uv, 4), 4);
  }
  return out;
}

/// Sets job.match from match.file: which cache vertex each of the file's vertices lies on, at
/// the rest pose or the frame match.frame.
void plan_match(const MeshExportParams& params, const SequenceReader& seq, ExportFormat format,
                const std::string& where, const NoteCallback& note, Job& job) {
  const ExportMatchParams& mp = params.match;
  if (mp.file.empty()) return;
  const std::string file = mp.file.string();
  if (format == ExportFormat::Xdmf || format == ExportFormat::Vdb)
    throw UsageError(std::string("match.file: ") + format_name(format) +
                     (format == ExportFormat::Xdmf
                          ? " describes the cache as it is, in its own vertex order"
                          : " holds a level set, which has no vertices to order") +
                     "; export obj, ply, pc2, mdd or usda to take the vertices of " + file);
  if (job.source != ExportSource::Mesh)
    throw UsageError("match.file: " + file + " gives the vertices of a mesh, and source \"" +
                     source_name(job.source) + "\" has none (source \"mesh\" exports one)");
  const SurfaceMesh mesh = load_obj(mp.file, ObjTexture::Read);
  // The file in the cache's units and frame.
  const bool z_up = mp.up_axis == "Z";
  const Points3 in_cache = file_in_cache(mesh, mp.scale, z_up);
  if (!in_cache.allFinite()) {
    char text[96];
    std::snprintf(text, sizeof text, "%g", mp.scale);
    throw IoError(file + ": its coordinates over match.scale " + text +
                  " are beyond a double's range");
  }
  // The cache's pose the file shows.
  Points3 pose;
  std::string pose_name;
  if (mp.frame == 0) {
    pose_name = where + "/rest/position";
    if (!seq.has("rest/position"))
      throw IoError(pose_name + ": no such dataset, whose rest pose match.frame = 0 matches " +
                    file + " against: set match.frame to the frame the file shows");
    pose = to_points3(seq.read_static<double>("rest/position").matrix());
  } else {
    const auto index = seq.frame_index(mp.frame);
    if (!index)
      throw IoError(where + "/frame: frame " + std::to_string(mp.frame) +
                    " (match.frame) is not in the cache (it has " + frames_text(seq.frames()) +
                    ")");
    pose_name = where + "/points/position: frame " + std::to_string(mp.frame);
    pose = to_points3(seq.positions(*index));
  }
  require_finite_rows(pose, pose_name);
  // The cache's vertices a mesh of it has: those its faces use (of tetrahedra, the boundary's).
  std::vector<int> on_faces;
  {
    std::vector<char> used(static_cast<std::size_t>(pose.rows()), 0);
    const auto mark = [&](const auto& faces) {
      for (Eigen::Index i = 0; i < faces.size(); ++i)
        used[static_cast<std::size_t>(faces.data()[i])] = 1;
    };
    if (job.topology == "tetrahedra") {
      mark(boundary_triangles(seq.topology("tetrahedra")));
    } else {
      if (seq.has("topology/triangles")) mark(seq.topology("triangles"));
      if (seq.has("topology/quads")) mark(seq.topology("quads"));
    }
    for (std::size_t v = 0; v < used.size(); ++v)
      if (used[v]) on_faces.push_back(static_cast<int>(v));
  }
  Points3 candidates(static_cast<Eigen::Index>(on_faces.size()), 3);
  for (std::size_t k = 0; k < on_faces.size(); ++k)
    candidates.row(static_cast<Eigen::Index>(k)) = pose.row(on_faces[k]);
  const double size =
      candidates.rows() > 0
          ? (candidates.colwise().maxCoeff() - candidates.colwise().minCoeff()).norm()
          : 0.0;
  if (!(size > 0) || !std::isfinite(size))
    throw IoError(
        pose_name +
        (std::isfinite(size) ? ": every vertex at one place" : ": a mesh too large to measure") +
        ", so no vertex of " + file + " can be told where it lies");
  const double tolerance = mp.tolerance * size;
  VertexMatch m = match_vertices(candidates, in_cache, tolerance);
  for (int& v : m.point)
    if (v >= 0) v = on_faces[static_cast<std::size_t>(v)];
  if (m.unmatched > 0) {
    char text[160];
    std::snprintf(text, sizeof text,
                  ": the nearest is %.3g m away, more than match.tolerance %.3g of the mesh's "
                  "%.3g m (%.3g m)",
                  m.first_unmatched_distance, mp.tolerance, size, tolerance);
    throw IoError(file + ": vertex " + std::to_string(m.first_unmatched + 1) + " at " +
                  point_text(mesh.vertices.row(m.first_unmatched).transpose()) +
                  " lies on no vertex of " + pose_name + text + "; " + std::to_string(m.unmatched) +
                  " of the file's " + std::to_string(mesh.vertices.rows()) +
                  " vertices lie on none" + match_hint(mp, mesh, candidates, tolerance));
  }
  if (m.unreached > 0 && note)
    note(NoteLevel::Warning, where + ": " + std::to_string(m.unreached) + " of the " +
                                 std::to_string(candidates.rows()) +
                                 " vertices of its faces lie under no vertex of " + file +
                                 " and are in no file written");
  if (m.ambiguous > 0 && note)
    note(NoteLevel::Warning,
         file + ": " + std::to_string(m.ambiguous) + " of its vertices (the first: vertex " +
             std::to_string(m.first_ambiguous + 1) + " at " +
             point_text(mesh.vertices.row(m.first_ambiguous).transpose()) +
             ") lie within match.tolerance of two or more vertices of " + pose_name +
             " and follow the nearest; the others' motion is in no file");
  auto matched = std::make_shared<MatchedMesh>();
  matched->vertex = m.point;
  matched->faces = keep_faces(mesh);
  matched->rotation = to_file_frame(1, z_up);
  matched->scale = mp.scale;
  const std::string counts = vertex_and_face_counts(mesh.vertices.rows(), matched->faces);
  job.match = std::move(matched);
  if (note)
    note(NoteLevel::Info, where + ": the files take the " + counts + " of " + file +
                              ", in its units and frame, each moved "
                              "as the cache's vertex it lies on in " +
                              pose_name);
}

Job plan_job(const MeshExportParams& params, const SequenceReader& seq, ExportFormat format,
             const std::filesystem::path& output, bool several, const NoteCallback& note) {
  const std::string in = params.input.string();
  const bool per_frame = per_frame_format(format);
  Job job;
  job.sequence = seq.name();
  const std::string where = in + ": /sequences/" + job.sequence;
  const bool has_points = seq.has("points/position");
  std::string topology;
  if (seq.has("topology/triangles") && seq.has("topology/quads"))
    topology = "both";
  else if (seq.has("topology/triangles"))
    topology = "triangles";
  else if (seq.has("topology/quads"))
    topology = "quads";
  else if (seq.has("topology/tetrahedra"))
    topology = "tetrahedra";
  const bool has_mesh = has_points && !topology.empty();

  // The level-set grid: the configured one, else "surface", else the only level set. A grid
  // that is missing or not a level set matters only if the export needs it (below).
  std::string grid = params.grid;
  std::string grid_problem;
  if (grid.empty()) {
    std::vector<std::string> level_sets;
    for (const auto& g : seq.grids())
      if (seq.grid_spec(g).grid_class == GridClass::LevelSet) level_sets.push_back(g);
    if (std::find(level_sets.begin(), level_sets.end(), "surface") != level_sets.end())
      grid = "surface";
    else if (level_sets.size() == 1)
      grid = level_sets.front();
    else
      grid_problem = "/grids: " + (level_sets.empty() ? std::string("no level-set grid")
                                                      : std::to_string(level_sets.size()) +
                                                            " level-set grids: set grid in "
                                                            "the config");
  } else if (!seq.has("grids/" + grid)) {
    grid_problem = "/grids/" + grid + ": no such grid (grid in the config)";
    grid.clear();
  } else if (seq.grid_spec(grid).grid_class != GridClass::LevelSet) {
    grid_problem = "/grids/" + grid + ": class density: only level sets export";
    grid.clear();
  }
  const bool has_grid = !grid.empty();

  // The source: what the format can take from what the sequence has.
  ExportSource source = params.source;
  const bool grid_format = format == ExportFormat::Obj || format == ExportFormat::Ply ||
                           format == ExportFormat::Usda || format == ExportFormat::Vdb;
  if (source == ExportSource::Auto && !params.grid.empty() && grid_format)
    source = ExportSource::Grid;  // a grid named in the config is what the user wants
  if (source == ExportSource::Auto) {
    switch (format) {
      case ExportFormat::Obj:
      case ExportFormat::Usda:
        source = has_mesh ? ExportSource::Mesh : has_grid ? ExportSource::Grid : ExportSource::Mesh;
        break;
      case ExportFormat::Ply:
        source = has_mesh   ? ExportSource::Mesh
                 : has_grid ? ExportSource::Grid
                            : ExportSource::Points;
        break;
      case ExportFormat::Pc2:
      case ExportFormat::Mdd:
        source = ExportSource::Mesh;
        break;
      case ExportFormat::Vdb:
        source = has_grid   ? ExportSource::Grid
                 : has_mesh ? ExportSource::Mesh
                            : ExportSource::Particles;
        break;
      case ExportFormat::Xdmf:
        source = ExportSource::Auto;  // the sidecar describes the whole sequence
        break;
    }
  }
  const std::string fmt = format_name(format);
  if ((format == ExportFormat::Pc2 || format == ExportFormat::Mdd) && source != ExportSource::Mesh)
    throw UsageError(fmt + " needs a fixed-topology mesh (source \"mesh\"), got source \"" +
                     source_name(source) + "\"");
  if (source == ExportSource::Points && format != ExportFormat::Ply)
    throw UsageError(std::string("source \"points\" (a point cloud) exports to ply only, not ") +
                     fmt);
  if (source == ExportSource::Mesh) {
    if (!has_points)
      throw IoError(where + "/points/position: no such dataset: " + fmt +
                    " needs the mesh's vertices");
    if (topology.empty())
      throw IoError(where +
                    "/topology: the sequence has no topology (triangles, quads or "
                    "tetrahedra), which " +
                    fmt + " needs for a mesh" +
                    (format == ExportFormat::Pc2 || format == ExportFormat::Mdd
                         ? std::string()
                         : std::string("; to mesh particles through a level set, set "
                                       "source = \"particles\"")));
  }
  if (source == ExportSource::Particles && !has_points)
    throw IoError(where + "/points/position: no such dataset: source \"particles\" needs it");
  if (source == ExportSource::Grid && !has_grid) throw IoError(where + grid_problem);
  if (source == ExportSource::Grid) {
    const double voxel = seq.grid_spec(grid).voxel_size;
    if (voxel < kMinVoxelSize) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", voxel);
      throw IoError(where + "/grids/" + grid + ": attribute voxel_size " + text +
                    " m is below OpenVDB's smallest voxel size (2e-5 m), so the grid cannot "
                    "become a level set");
    }
  }
  job.source = source;
  job.grid = grid;
  job.topology = topology;

  plan_match(params, seq, format, where, note, job);
  plan_frames(params, seq, format, where, job);
  plan_attributes(params, seq, format, where, note, job);
  plan_texture_coordinates(params, seq, format, where, note, job);
  plan_level_set(params, seq, format, where, note, job);

  // Output files.
  std::filesystem::path out = expand_sequence(output, job.sequence, several);
  // Numbered by the whole export's frames, not this shard's: a shard of one frame wrote the
  // bare name, and every such shard replaced the last one's file.
  if (per_frame && job.job_frames > 1 && !has_frame_token(out)) {
    out = with_frame_token(out);
    if (note) note(NoteLevel::Info, "-o has no frame token: writing " + out.string());
  }
  job.output = out;
  if (per_frame) {
    for (std::size_t idx : job.indices)
      job.files.push_back(has_frame_token(out) ? expand_frame(out, seq.frames()[idx]) : out);
  } else if (!job.indices.empty()) {
    job.files.push_back(out);
    if (format == ExportFormat::Pc2 || format == ExportFormat::Mdd) {
      job.mesh_output = replace_extension(out, ".obj");
      job.files.push_back(job.mesh_output);
    }
  }
  return job;
}

/// The files the jobs would write: no two the same, none the input, none on a directory or
/// device, every directory writable. Counts them and the frames.
MeshExportResult check_outputs(const MeshExportParams& params, const std::vector<Job>& jobs) {
  // No two sequences may write the same file; no file may land on a directory or device; every
  // output directory must take files.
  MeshExportResult result;
  std::set<std::filesystem::path> seen;
  std::map<std::filesystem::path, std::filesystem::path> dirs;  // directory -> its first file
  for (const Job& job : jobs)
    for (const auto& f : job.files) {
      if (!seen.insert(f).second)
        throw UsageError("-o " + params.output.string() + ": two outputs would be " + f.string() +
                         " (use {sequence} or #### in the template)");
      if (same_file(f, params.input))
        throw UsageError("-o " + params.output.string() + ": " + f.string() +
                         " is the input cache, which it would overwrite; give another path");
      check_replaceable(f);
      dirs.emplace(f.has_parent_path() ? f.parent_path() : std::filesystem::path("."), f);
      result.files.push_back(f);
    }
  for (const auto& [dir, file] : dirs) check_writable_directory(file);  // names a real output
  for (const Job& job : jobs) result.frames += job.indices.size();
  return result;
}

/// Writes one job's files, calling `tick` once per frame written.
void write_job(const MeshExportParams& params, const Provenance& prov, ExportFormat format,
               const Job& job, const SequenceReader& seq, const std::function<void()>& tick,
               const NoteCallback& note) {
  const std::string in = params.input.string();
  if (job.indices.empty()) return;
  const auto& frames = seq.frames();
  auto metadata = [&](std::optional<std::size_t> f) {
    Metadata m{{"generator", prov.generator}};
    if (!prov.command_line.empty()) m.emplace_back("command_line", prov.command_line);
    m.emplace_back("config", prov.config_json);
    m.emplace_back("source", in + " /sequences/" + job.sequence +
                                 (f ? " frame " + std::to_string(frames[*f]) : std::string()));
    return m;
  };

  if (format == ExportFormat::Xdmf) {
    write_xdmf(job.output, params.input, job.sequence, job.indices, job.attributes, metadata({}));
    for (std::size_t i = 0; i < job.indices.size(); ++i) tick();
    return;
  }

  const FrameSource src(seq, job, params.input.string() + ": /sequences/" + job.sequence);
  if (note && src.left_out() > 0)
    note(NoteLevel::Info,
         "/sequences/" + job.sequence + ": the files hold the " +
             std::to_string(src.point_count()) +
             " vertices of the boundary surface, in the cache's order; the " +
             std::to_string(src.left_out()) +
             " that no boundary face uses (inside the tetrahedral mesh) are left out");
  // Colour range: configured, else the first exported frame's.
  double lo = params.color.min, hi = params.color.max;
  if (!job.color.empty() && !(hi > lo)) {
    const VertexAttribute a = src.attribute(job.color, job.indices.front());
    lo = a.values.size() ? a.values.minCoeff() : 0.0;
    hi = a.values.size() ? a.values.maxCoeff() : 1.0;
    if (!(hi > lo)) hi = lo + 1;
    if (note)
      note(NoteLevel::Info, "/sequences/" + job.sequence + ": colour range of " + job.color +
                                ": [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "] (frame " + std::to_string(frames[job.indices.front()]) + ")");
  }
  auto frame_mesh = [&](std::size_t f) {
    if (job.source == ExportSource::Mesh || job.source == ExportSource::Points) return src.mesh(f);
    return mesh_from_level_set(src.level_set(f, params, note), params.meshing.iso_value,
                               params.meshing.adaptivity);
  };
  auto frame_attributes = [&](std::size_t f) {
    std::vector<VertexAttribute> out;
    for (const auto& a : job.attributes) out.push_back(src.attribute(a, f));
    return out;
  };
  auto frame_colors = [&](std::size_t f) -> std::optional<VertexColors> {
    if (job.color.empty()) return std::nullopt;
    const VertexAttribute a = src.attribute(job.color, f);
    return colors_from_scalar(a.values.col(0), lo, hi);
  };

  switch (format) {
    case ExportFormat::Obj:
    case ExportFormat::Ply:
    case ExportFormat::Vdb:
      for (std::size_t i = 0; i < job.indices.size(); ++i) {
        const std::size_t f = job.indices[i];
        const auto& path = job.files[i];
        if (format == ExportFormat::Vdb) {
          write_vdb(path, src.level_set(f, params, note), metadata(f));
        } else if (format == ExportFormat::Obj) {
          write_obj(path, frame_mesh(f), job.sequence, metadata(f), params.smooth_shading);
        } else {
          const auto colors = frame_colors(f);
          write_ply(path, frame_mesh(f), frame_attributes(f), colors ? &*colors : nullptr,
                    metadata(f), params.smooth_shading);
        }
        tick();
      }
      break;
    case ExportFormat::Pc2:
    case ExportFormat::Mdd: {
      const std::size_t n = src.point_count();
      std::unique_ptr<Pc2Writer> pc2;
      std::unique_ptr<MddWriter> mdd;
      if (format == ExportFormat::Pc2) {
        const double step =
            job.indices.size() > 1
                ? static_cast<double>(frames[job.indices[1]] - frames[job.indices[0]])
                : 1.0;
        pc2 = std::make_unique<Pc2Writer>(job.output, n, job.indices.size(),
                                          static_cast<double>(frames[job.indices.front()]), step);
      } else {
        std::vector<double> times;
        for (std::size_t f : job.indices) times.push_back(seq.times()[f]);
        mdd = std::make_unique<MddWriter>(job.output, n, times);
      }
      for (std::size_t f : job.indices) {
        const Points3 x = src.positions(f);
        if (pc2)
          pc2->write_frame(x);
        else
          mdd->write_frame(x);
        tick();
      }
      if (pc2) pc2->commit();
      if (mdd) mdd->commit();
      // Held with the point cache (export_cache): a failed mesh leaves both old files as they
      // were (it removed the point cache, old or new: a point cache cannot be imported alone).
      write_obj(job.mesh_output, src.mesh(job.indices.front()), job.sequence,
                metadata(job.indices.front()), params.smooth_shading);
      break;
    }
    case ExportFormat::Usda: {
      UsdaStage stage;
      stage.start_time_code = static_cast<double>(frames[job.indices.front()]);
      stage.end_time_code = static_cast<double>(frames[job.indices.back()]);
      stage.time_codes_per_second = seq.frame_rate();
      stage.up_axis = params.up_axis;
      if (job.match) {  // the file's units and frame, which the points are in
        stage.up_axis = params.match.up_axis;
        stage.meters_per_unit = 1 / params.match.scale;
      }
      stage.metadata = metadata({});
      UsdaWriter usda(job.output, stage, job.sequence, job.source != ExportSource::Mesh,
                      params.smooth_shading);
      for (std::size_t f : job.indices) {
        const auto colors = frame_colors(f);
        usda.write_frame(static_cast<double>(frames[f]), frame_mesh(f), frame_attributes(f),
                         colors ? &*colors : nullptr);
        tick();
      }
      usda.commit();
      break;
    }
    case ExportFormat::Xdmf:
      break;
  }
}

}  // namespace

MeshExportResult export_cache(const MeshExportParams& params, const Provenance& provenance,
                              const ProgressCallback& progress, const NoteCallback& note) {
  const std::string in = params.input.string();
  std::filesystem::path output = params.output;
  const ExportFormat format = resolve_format(params, output);
  const CacheReader cache(params.input);
  std::vector<std::string> names = params.sequences;
  if (names.empty()) names = cache.sequence_names();
  if (names.empty()) throw IoError(in + ": /sequences: the cache has no sequence to export");
  if (!params.match.file.empty() && names.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw UsageError("match.file: " + params.match.file.string() +
                     " is one mesh, and the export has " + std::to_string(names.size()) +
                     " sequences (" + list + "): choose its sequence with --sequence");
  }
  std::vector<SequenceReader> readers;
  for (const auto& n : names) readers.push_back(cache.sequence(n));  // IoError lists the names
  std::vector<Job> jobs;
  for (const SequenceReader& seq : readers)
    jobs.push_back(plan_job(params, seq, format, output, readers.size() > 1, note));
  MeshExportResult result = check_outputs(params, jobs);
  if (params.dry_run) return result;

  std::size_t done = 0;
  const std::size_t total = result.frames;
  const std::function<void()> tick = [&] {
    ++done;
    if (progress) progress(done, total);
  };
  // Every file of the export takes its name at the end: a failure at frame 4 of 10 (or at a
  // point cache's mesh) leaves the files of an earlier export as they were, not half replaced.
  HeldCommits held;
  for (std::size_t s = 0; s < jobs.size(); ++s)
    write_job(params, provenance, format, jobs[s], readers[s], tick, note);
  held.commit();
  return result;
}

}  // namespace datadyn::io
