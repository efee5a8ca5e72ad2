#pragma once
/// @file
/// The datadyn cache: one HDF5 layout for every tool (docs/cache-format.md).
///
///   /                          attrs format = "datadyn-cache", format_version = 1, generator,
///                              command_line, config_json, created_utc
///   /sequences/<name>/         attrs frame_rate, dimension (2 or 3), plus parameters
///   /sequences/<name>/time     float64 [F] seconds
///   /sequences/<name>/frame    int64 [F]
///   /sequences/<name>/points/<attr>   [F, N, ...] per frame (attr per_frame = 1) or [N, ...]
///   /sequences/<name>/rest/position   [N, D]
///   /sequences/<name>/topology/<kind> int32 [T, 3] triangles, [Q, 4] quads, [K, 4] tetrahedra
///   /sequences/<name>/grids/<grid>    float32 [F, nz, ny, nx], attrs origin, voxel_size, class
///
/// Writing is atomic: everything goes to `<path>.tmp-<pid>`, renamed to `<path>` by commit().
/// A writer destroyed without commit() (an exception, a failed run) removes its temporary file.
/// Per-frame arrays grow one frame at a time with one chunk per frame (shuffle + deflate), so the
/// writer's memory does not grow with the frame count; the reader reads one frame at a time.
///
/// HDF5 (Debian's serial build) is not thread-safe: use a writer or reader from one thread only.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/surface_mesh.hpp"
#include "io/array.hpp"

namespace datadyn::io {

inline constexpr const char* kCacheFormat = "datadyn-cache";
inline constexpr int kCacheFormatVersion = 1;

/// Value of an HDF5 attribute: integer, float, string, or a 1-D array of one of them.
using AttributeValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                                    std::vector<double>, std::vector<std::string>>;
using Attributes = std::map<std::string, AttributeValue>;

/// "3", "0.5", "\"text\"", "[1, 2]" - for listings and error messages.
std::string attribute_string(const AttributeValue& v);

/// Where an output came from; written as root attributes of every cache.
struct Provenance {
  std::string generator;     ///< "<tool> <version>"
  std::string command_line;  ///< the argv that made the file, shell-quoted
  std::string config_json;   ///< the resolved config (defaults filled in)
  std::string created_utc;   ///< ISO 8601; the writer fills it (SOURCE_DATE_EPOCH if set)
};

struct SequenceInfo {
  double frame_rate = 24.0;  ///< frames per second, > 0
  int dimension = 3;         ///< 2 or 3: the last axis of points/position
};

/// Class of a grid: "level_set" (signed distance, negative inside, clamped to +-background) or
/// "density".
enum class GridClass { LevelSet, Density };

/// A regular grid of nx * ny * nz cell-centred samples; sample (i, j, k) sits at
/// origin + voxel_size * (i, j, k). Stored as [F, nz, ny, nx].
struct GridSpec {
  std::size_t nx = 0, ny = 0, nz = 0;
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();  ///< metres
  double voxel_size = 1.0;                           ///< metres, > 0
  GridClass grid_class = GridClass::LevelSet;
  double background = 3.0;  ///< level sets: clamp to +- background * voxel_size (in voxels)
};

struct WriteOptions {
  /// 0 (off) to 9. Level 1 is the default: bench/cache_io measured files within 3 % of level 4
  /// at 15 % more write speed on simulation data.
  int deflate_level = 1;
};

class CacheWriter;

/// Writes one sequence of a cache. Obtained from CacheWriter::add_sequence; valid while the
/// writer lives.
class SequenceWriter {
 public:
  const std::string& name() const;
  std::size_t frame_count() const;

  void set_attribute(const std::string& name, const AttributeValue& value);
  /// A static array under the sequence, e.g. "rest/position" [N, D], "topology/triangles" [T, 3]
  /// (int32), "points/type" [N]. Shapes are checked against the layout (N, D, index ranges).
  void write_static(const std::string& path, const ArrayView& data);
  /// Declares a per-frame array under points/ with its file type and per-frame shape [N, ...].
  /// Undeclared arrays are created by the first append_frame: floating-point data as float32,
  /// integer data as its own type.
  void declare_frame_array(const std::string& path, ElementType file_type, const Shape& item_shape);
  /// Declares a per-frame grid under grids/<name>.
  void declare_grid(const std::string& name, const GridSpec& spec);

  /// Appends one frame: every per-frame array and grid gets one more frame, all or none (on an
  /// exception the sequence is rolled back to its previous frame count). `data` maps paths
  /// ("points/position", "grids/surface") to views of shape [N, ...] / [nz, ny, nx].
  void append_frame(std::int64_t frame, double time,
                    const std::vector<std::pair<std::string, ArrayView>>& data);

  /// Closes the sequence's HDF5 objects: nothing more can be written to it (IoError), and it no
  /// longer holds memory. A tool that writes its sequences one after another calls it after
  /// each: an open sequence holds about 80 kB, so 10,000 cloth runs held 800 MB to the end.
  void finish();

 private:
  friend class CacheWriter;
  struct Impl;
  explicit SequenceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;

 public:
  ~SequenceWriter();
  SequenceWriter(SequenceWriter&&) noexcept;
};

/// Writes a cache atomically (see the file comment).
class CacheWriter {
 public:
  /// Creates `<path>.tmp-<pid>`. Throws IoError naming the path if it cannot be created.
  CacheWriter(std::filesystem::path path, Provenance provenance, WriteOptions options = {});
  ~CacheWriter();
  CacheWriter(const CacheWriter&) = delete;
  CacheWriter& operator=(const CacheWriter&) = delete;

  const std::filesystem::path& path() const;
  const std::filesystem::path& temporary_path() const;

  /// Adds /sequences/<name>. Throws IoError if it exists or the info is invalid.
  SequenceWriter& add_sequence(const std::string& name, const SequenceInfo& info);
  SequenceWriter& sequence(const std::string& name);

  /// An attribute on any group (created if needed), e.g. ("/springs", "fitted_frames", 120).
  void set_attribute(const std::string& group_path, const std::string& name,
                     const AttributeValue& value);
  /// A dataset anywhere outside /sequences (tool-specific groups such as /springs/ks).
  void write_array(const std::string& path, const ArrayView& data);

  /// Flushes, closes and renames the file to its real name. After it, the writer is spent.
  void commit();
  bool committed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads one sequence; obtained from CacheReader::sequence. Validated on open.
class SequenceReader {
 public:
  const std::string& name() const;
  double frame_rate() const;
  int dimension() const;
  std::size_t frame_count() const;
  /// Points per frame (N of points/position or rest/position; 0 if the sequence has no points).
  std::size_t point_count() const;
  const std::vector<double>& times() const;
  const std::vector<std::int64_t>& frames() const;
  /// Index of frame number `frame`, if the sequence has it.
  std::optional<std::size_t> frame_index(std::int64_t frame) const;

  Attributes attributes() const;
  /// Whether "points/position", "topology/triangles", "grids/surface", ... exists.
  bool has(const std::string& path) const;
  /// Names of the per-frame and static point arrays (under points/).
  std::vector<std::string> point_arrays() const;
  std::vector<std::string> grids() const;
  std::vector<std::string> topologies() const;
  bool is_per_frame(const std::string& path) const;
  Shape shape(const std::string& path) const;

  /// Frame `index` (0-based) of a per-frame array, converted to T; shape [N, ...].
  template <class T>
  Array<T> read_frame(const std::string& path, std::size_t index) const;
  /// A whole static array, converted to T.
  template <class T>
  Array<T> read_static(const std::string& path) const;
  /// Frame `index` of points/position as #N by D doubles.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> positions(
      std::size_t index) const;
  /// topology/<kind> with every index checked against the point count.
  Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> topology(
      const std::string& kind) const;
  /// uv/<kind> ("triangles" or "quads"): the face-varying texture coordinate index of every
  /// corner of topology/<kind>, checked against the rows of uv/coordinates.
  Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> uv_corners(
      const std::string& kind) const;
  /// uv/coordinates, every row checked to be finite (IoError naming the row otherwise).
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> uv_coordinates() const;
  GridSpec grid_spec(const std::string& name) const;

  ~SequenceReader();
  SequenceReader(SequenceReader&&) noexcept;

 private:
  friend class CacheReader;
  struct Impl;
  explicit SequenceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Opens and validates a cache: format name and version on open, each sequence's shapes and
/// types when it is opened. Every error is an IoError naming the file and the dataset.
class CacheReader {
 public:
  explicit CacheReader(std::filesystem::path path);
  ~CacheReader();
  CacheReader(CacheReader&&) noexcept;

  const std::filesystem::path& path() const;
  Provenance provenance() const;
  int format_version() const;
  std::vector<std::string> sequence_names() const;
  /// Throws IoError listing the sequences there are if `name` is not one.
  SequenceReader sequence(const std::string& name) const;

  bool exists(const std::string& path) const;
  Attributes attributes(const std::string& object_path) const;
  Shape shape(const std::string& dataset_path) const;
  template <class T>
  Array<T> read_array(const std::string& dataset_path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes `uv` as the sequence's face-varying texture coordinates of its topology/triangles
/// (written before): uv/coordinates and uv/triangles. Nothing when `uv` is empty.
void write_face_uv(SequenceWriter& sequence, const FaceVaryingUv& uv);
/// The sequence's face-varying texture coordinates of its triangles (uv/coordinates and
/// uv/triangles, indices checked); empty when it has none.
FaceVaryingUv read_face_uv(const SequenceReader& sequence);

}  // namespace datadyn::io
