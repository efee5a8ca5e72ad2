#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/cache_layout.hpp"
#include "io/hdf5_handle.hpp"
#include "io/temporary_files.hpp"

namespace datadyn::io {

namespace {

using h5::Handle;

std::string utc_now_iso8601() {
  // SOURCE_DATE_EPOCH (reproducible-builds.org) pins the timestamp so repeated runs give the
  // same bytes.
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long v = std::strtoll(epoch, &end, 10);
    if (end && *end == '\0' && end != epoch) t = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool is_floating(ElementType t) {
  return t == ElementType::Float32 || t == ElementType::Float64;
}
bool is_integer(ElementType t) {
  return !is_floating(t);
}

/// Throws RunError when a float array holds a value that is not finite as it will be stored:
/// caches keep float32, so a double beyond 3.4e38 would land as inf. No reader of a cache has a
/// use for NaN or inf in a position or a field, and a run that made one has diverged.
void check_finite(const ArrayView& v, bool stored_as_float32, const std::string& where) {
  const std::size_t n = element_count(v.shape);
  if (!is_floating(v.type) || n == 0) return;
  // Values per item (a scalar is one item; n > 0, so shape[0] > 0).
  const std::size_t row = v.shape.empty() ? 1 : n / v.shape[0];
  for (std::size_t k = 0; k < n; ++k) {
    const double x = v.type == ElementType::Float32 ? static_cast<const float*>(v.data)[k]
                                                    : static_cast<const double*>(v.data)[k];
    const bool finite = stored_as_float32 ? std::isfinite(static_cast<float>(x)) : std::isfinite(x);
    if (!finite) {
      std::ostringstream os;
      os << where << ": item " << k / row << " is " << x
         << (std::isfinite(x) ? " (beyond float32)" : "")
         << ": not finite, so the run diverged or a value is out of scale";
      throw RunError(os.str());
    }
  }
}

}  // namespace

namespace detail {

/// Chunk extent along axis 0 for a static array: about 1 MiB per chunk.
hsize_t static_chunk_rows(const Shape& shape, size_t element_size) {
  size_t row = element_size;
  for (size_t i = 1; i < shape.size(); ++i) row *= std::max<size_t>(shape[i], 1);
  const size_t rows = std::max<size_t>(1, (size_t{1} << 20) / std::max<size_t>(row, 1));
  return std::min<size_t>(rows, std::max<size_t>(shape.empty() ? 1 : shape[0], 1));
}

size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::Int8:
    case ElementType::UInt8:
      return 1;
    case ElementType::Int32:
    case ElementType::Float32:
      return 4;
    case ElementType::Int64:
    case ElementType::Float64:
      return 8;
  }
  return 8;
}

Handle dataset_create_plist(const std::vector<hsize_t>& chunk, int deflate) {
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(dcpl.get(), false);
  if (!chunk.empty()) {
    H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
    if (deflate > 0) {
      H5Pset_shuffle(dcpl.get());
      H5Pset_deflate(dcpl.get(), static_cast<unsigned>(deflate));
    }
  }
  return dcpl;
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

/// Writes a whole array as a new dataset at absolute path `path`.
void write_dataset(hid_t file, const std::string& file_name, const std::string& path,
                   const ArrayView& data, ElementType ftype, int deflate) {
  if (h5::link_exists(file, path)) throw IoError(file_name + ": " + path + ": already written");
  h5::ensure_group(file, parent_of(path), file_name);
  std::vector<hsize_t> dims(data.shape.begin(), data.shape.end());
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  std::vector<hsize_t> chunk;
  if (!dims.empty() && element_count(data.shape) > 0) {
    chunk = dims;
    chunk[0] = static_chunk_rows(data.shape, element_size(ftype));
  }
  Handle dcpl = dataset_create_plist(chunk, deflate);
  Handle ds = h5::check_id(H5Dcreate2(file, path.c_str(), h5::file_type(ftype), space.get(),
                                      H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                           H5Dclose, file_name + ": " + path + ": cannot create dataset");
  if (element_count(data.shape) > 0) {
    h5::check_status(
        H5Dwrite(ds.get(), h5::memory_type(data.type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data),
        file_name + ": " + path + ": cannot write dataset");
  }
}

Handle creation_plist_of(hid_t dataset) {
  Handle dcpl(H5Dget_create_plist(dataset), H5Pclose);
  if (dcpl.valid()) H5Pset_obj_track_times(dcpl.get(), false);
  return dcpl;
}

Handle create_cache_file(const std::filesystem::path& path, const std::string& file_name) {
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  // Creation order tracking off, default sizes: identical inputs give identical bytes.
  const hid_t id =
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), h5::file_access_plist().get());
  if (id < 0) {
    // HDF5's own message is its error stack ("unable to open file: name = ..., errno = 2,
    // ..., o_flags = 242"); the system's reason says the same in words.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = errno;
    if (fd < 0)
      throw IoError(file_name + ": cannot create " + path.string() + ": " + std::strerror(err));
    ::close(fd);
    std::filesystem::remove(path);
  }
  return h5::check_id(id, H5Fclose, file_name + ": cannot create " + path.string());
}

}  // namespace detail

using detail::dataset_create_plist;
using detail::element_size;
using detail::parent_of;
using detail::write_dataset;

// --------------------------------------------------------------------------------------------
// SequenceWriter

struct SequenceWriter::Impl {
  struct FrameArray {
    std::string path;  // relative to the sequence group
    ElementType file_type;
    Shape item_shape;
    Handle dataset;
    std::optional<GridSpec> grid;
  };

  hid_t file = -1;
  std::string file_name;
  std::string name;
  std::string group_path;  // /sequences/<name>
  SequenceInfo info;
  int deflate = 1;  // WriteOptions::deflate_level, set by add_sequence
  Handle group;
  Handle time_ds, frame_ds;
  std::vector<FrameArray> arrays;
  std::size_t frames = 0;
  std::int64_t last_frame = 0;
  std::optional<std::size_t> point_count;
  std::optional<std::size_t> uv_count;             // rows of uv/coordinates, once written
  std::map<std::string, std::size_t> face_counts;  // rows of topology/<kind>, once written

  bool finished = false;

  std::string where(const std::string& rel) const {
    return file_name + ": " + group_path + "/" + rel;
  }

  void require_open(const std::string& rel) const {
    if (finished) throw IoError(where(rel) + ": written after the sequence was finished");
  }

  void check_point_count(const std::string& rel, std::size_t n) {
    if (point_count && *point_count != n) {
      std::ostringstream os;
      os << where(rel) << ": expected " << *point_count << " points (as the sequence's other "
         << "point arrays), got " << n;
      throw IoError(os.str());
    }
    point_count = n;
  }

  Handle create_extendible(const std::string& rel, ElementType ftype, const Shape& item) {
    const std::string path = group_path + "/" + rel;
    if (h5::link_exists(file, path)) throw IoError(where(rel) + ": already exists");
    h5::ensure_group(file, parent_of(path), file_name);
    std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{1};
    for (size_t d : item) {
      dims.push_back(d);
      maxdims.push_back(d == 0 ? H5S_UNLIMITED : d);
      chunk.push_back(std::max<hsize_t>(d, 1));
    }
    if (element_count(item) * element_size(ftype) >= (size_t{1} << 32))
      throw IoError(where(rel) + ": one frame exceeds HDF5's 4 GiB chunk limit");
    Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()),
                 H5Sclose);
    Handle dcpl = dataset_create_plist(chunk, deflate);
    return h5::check_id(H5Dcreate2(file, path.c_str(), h5::file_type(ftype), space.get(),
                                   H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        H5Dclose, where(rel) + ": cannot create dataset");
  }

  void declare(const std::string& rel, ElementType ftype, const Shape& item,
               std::optional<GridSpec> grid) {
    for (const auto& a : arrays)
      if (a.path == rel) throw IoError(where(rel) + ": declared twice");
    if (rel.rfind("points/", 0) == 0) {
      if (item.empty()) throw IoError(where(rel) + ": expected a per-frame shape [N, ...], got []");
      if (rel == "points/position") {
        if (item.size() != 2 || item[1] != static_cast<size_t>(info.dimension) ||
            !is_floating(ftype)) {
          throw IoError(where(rel) + ": expected float [N, " + std::to_string(info.dimension) +
                        "], got " + element_type_name(ftype) + " " + shape_string(item));
        }
      }
      check_point_count(rel, item[0]);
    } else if (rel.rfind("grids/", 0) != 0) {
      throw IoError(where(rel) + ": per-frame arrays live under points/ or grids/");
    }
    FrameArray a{rel, ftype, item, create_extendible(rel, ftype, item), std::move(grid)};
    h5::write_attribute(a.dataset.get(), "per_frame", std::int64_t{1}, where(rel));
    if (a.grid) {
      const GridSpec& g = *a.grid;
      h5::write_attribute(a.dataset.get(), "origin",
                          std::vector<double>{g.origin.x(), g.origin.y(), g.origin.z()},
                          where(rel));
      h5::write_attribute(a.dataset.get(), "voxel_size", g.voxel_size, where(rel));
      h5::write_attribute(
          a.dataset.get(), "class",
          std::string(g.grid_class == GridClass::LevelSet ? "level_set" : "density"), where(rel));
      if (g.grid_class == GridClass::LevelSet)
        h5::write_attribute(a.dataset.get(), "background", g.background * g.voxel_size, where(rel));
    }
    arrays.push_back(std::move(a));
  }

  static void extend(hid_t ds, const Shape& item, std::size_t frames) {
    std::vector<hsize_t> dims{frames};
    dims.insert(dims.end(), item.begin(), item.end());
    H5Dset_extent(ds, dims.data());
  }

  void write_frame_slab(hid_t ds, const std::string& rel, const Shape& item, ElementType mtype,
                        const void* data) {
    std::vector<hsize_t> start(item.size() + 1, 0), count{1};
    start[0] = frames;
    count.insert(count.end(), item.begin(), item.end());
    std::vector<hsize_t> dims{frames + 1};
    dims.insert(dims.end(), item.begin(), item.end());
    h5::check_status(H5Dset_extent(ds, dims.data()), where(rel) + ": cannot extend");
    if (element_count(item) == 0) return;
    Handle fspace(H5Dget_space(ds), H5Sclose);
    H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Handle mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr),
                  H5Sclose);
    h5::check_status(
        H5Dwrite(ds, h5::memory_type(mtype), mspace.get(), fspace.get(), H5P_DEFAULT, data),
        where(rel) + ": cannot write frame " + std::to_string(frames));
  }
};

SequenceWriter::SequenceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SequenceWriter::~SequenceWriter() = default;
SequenceWriter::SequenceWriter(SequenceWriter&&) noexcept = default;

const std::string& SequenceWriter::name() const {
  return impl_->name;
}
std::size_t SequenceWriter::frame_count() const {
  return impl_->frames;
}

void SequenceWriter::finish() {
  Impl& s = *impl_;
  s.arrays.clear();
  s.time_ds.reset();
  s.frame_ds.reset();
  s.group.reset();
  s.finished = true;
}

void SequenceWriter::set_attribute(const std::string& name, const AttributeValue& value) {
  impl_->require_open("@" + name);
  h5::write_attribute(impl_->group.get(), name, value, impl_->file_name + ": " + impl_->group_path);
}

namespace {

/// Throws IoError at `where` for an index of `data` (int32 or int64) below 0 or, when `count`
/// is known, at or above it; `counted` names what the indices count ("" for the points).
void check_index_range(const ArrayView& data, std::optional<std::size_t> count,
                       const std::string& where, const std::string& counted) {
  const std::size_t n = element_count(data.shape);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t idx = data.type == ElementType::Int32
                                 ? static_cast<const std::int32_t*>(data.data)[i]
                                 : static_cast<const std::int64_t*>(data.data)[i];
    if (idx < 0 || (count && static_cast<std::size_t>(idx) >= *count))
      throw IoError(where + ": index " + std::to_string(idx) + " at element " + std::to_string(i) +
                    " is outside [0, " + std::to_string(count.value_or(0)) + ")" +
                    (counted.empty() ? "" : " (" + counted + ")"));
  }
}

}  // namespace

void SequenceWriter::write_static(const std::string& rel, const ArrayView& data) {
  Impl& s = *impl_;
  s.require_open(rel);
  const Shape& sh = data.shape;
  ElementType ftype = data.type;
  if (rel == "rest/position" || rel.rfind("points/", 0) == 0) {
    if (sh.empty()) throw IoError(s.where(rel) + ": expected shape [N, ...], got []");
    if (rel == "rest/position" &&
        (sh.size() != 2 || sh[1] != static_cast<size_t>(s.info.dimension) ||
         !is_floating(data.type))) {
      throw IoError(s.where(rel) + ": expected float [N, " + std::to_string(s.info.dimension) +
                    "], got " + element_type_name(data.type) + " " + shape_string(sh));
    }
    if (rel == "rest/position") ftype = ElementType::Float32;
    s.check_point_count(rel, sh[0]);
  } else if (rel.rfind("topology/", 0) == 0) {
    const std::string kind = rel.substr(9);
    const size_t arity = kind == "triangles"                         ? 3
                         : (kind == "quads" || kind == "tetrahedra") ? 4
                                                                     : 0;
    if (arity == 0 || sh.size() != 2 || sh[1] != arity || !is_integer(data.type)) {
      throw IoError(s.where(rel) +
                    ": expected int [T, 3] triangles, [Q, 4] quads or [K, 4] tetrahedra, got " +
                    element_type_name(data.type) + " " + shape_string(sh));
    }
    if (data.type != ElementType::Int32 && data.type != ElementType::Int64)
      throw IoError(s.where(rel) + ": expected int32 or int64 indices");
    check_index_range(data, s.point_count, s.where(rel), "");
    ftype = ElementType::Int32;
    s.face_counts[kind] = sh[0];
  } else if (rel == "uv/coordinates") {
    if (sh.size() != 2 || sh[1] != 2 || !is_floating(data.type))
      throw IoError(s.where(rel) + ": expected float [M, 2], got " + element_type_name(data.type) +
                    " " + shape_string(sh));
    ftype = ElementType::Float32;
    s.uv_count = sh[0];
  } else if (rel == "uv/triangles" || rel == "uv/quads") {
    // Face-varying texture coordinates: one index into uv/coordinates per corner of each face of
    // topology/<kind>, so both must be there first.
    const std::string kind = rel.substr(3);
    const size_t arity = kind == "triangles" ? 3 : 4;
    const auto faces = s.face_counts.find(kind);
    if (!s.uv_count || faces == s.face_counts.end())
      throw IoError(s.where(rel) + ": write uv/coordinates and topology/" + kind + " first");
    if (sh.size() != 2 || sh[0] != faces->second || sh[1] != arity ||
        (data.type != ElementType::Int32 && data.type != ElementType::Int64))
      throw IoError(s.where(rel) + ": expected int32 [" + std::to_string(faces->second) + ", " +
                    std::to_string(arity) + "] (one row per face of topology/" + kind + "), got " +
                    element_type_name(data.type) + " " + shape_string(sh));
    check_index_range(data, s.uv_count, s.where(rel), "the rows of uv/coordinates");
    ftype = ElementType::Int32;
  } else if (rel.rfind("uv/", 0) == 0) {
    throw IoError(s.where(rel) + ": expected uv/coordinates, uv/triangles or uv/quads");
  }
  check_finite(data, ftype == ElementType::Float32, s.where(rel));
  write_dataset(s.file, s.file_name, s.group_path + "/" + rel, data, ftype, s.deflate);
}

void SequenceWriter::declare_frame_array(const std::string& path, ElementType file_type,
                                         const Shape& item_shape) {
  impl_->require_open(path);
  impl_->declare(path, file_type, item_shape, std::nullopt);
}

void SequenceWriter::declare_grid(const std::string& name, const GridSpec& spec) {
  impl_->require_open("grids/" + name);
  // Every sample's position (origin + voxel_size (i, j, k)) must hold in float32, as the
  // exported meshes and level sets store it.
  const Eigen::Vector3d far =
      spec.origin + spec.voxel_size * Eigen::Vector3d(static_cast<double>(spec.nx),
                                                      static_cast<double>(spec.ny),
                                                      static_cast<double>(spec.nz));
  const bool in_float =
      (spec.origin.cast<float>().array().isFinite() && far.cast<float>().array().isFinite()).all();
  if (spec.nx == 0 || spec.ny == 0 || spec.nz == 0 || !(spec.voxel_size > 0) ||
      !(spec.background > 0) || !in_float ||
      !std::isfinite(static_cast<float>(spec.background * spec.voxel_size))) {
    throw IoError(impl_->where("grids/" + name) +
                  ": expected nx, ny, nz > 0, voxel_size > 0 and background > 0, the band "
                  "(background x voxel_size) and every sample's position finite in float32");
  }
  impl_->declare("grids/" + name, ElementType::Float32, {spec.nz, spec.ny, spec.nx}, spec);
}

void SequenceWriter::append_frame(std::int64_t frame, double time,
                                  const std::vector<std::pair<std::string, ArrayView>>& data) {
  Impl& s = *impl_;
  s.require_open("frame");
  if (s.frames > 0 && frame <= s.last_frame) {
    throw IoError(s.where("frame") + ": frame numbers must increase: " + std::to_string(frame) +
                  " after " + std::to_string(s.last_frame));
  }
  if (!std::isfinite(time)) throw IoError(s.where("time") + ": time is not finite");
  // Create what the first frame brings, then check every declared array is given exactly once.
  std::set<std::string> given;
  for (const auto& [rel, v] : data) {
    if (!given.insert(rel).second) throw IoError(s.where(rel) + ": given twice in one frame");
    const bool known =
        std::any_of(s.arrays.begin(), s.arrays.end(), [&](const auto& a) { return a.path == rel; });
    if (!known) {
      if (s.frames > 0)
        throw IoError(s.where(rel) + ": not in the sequence's earlier frames (declare it first)");
      if (rel.rfind("grids/", 0) == 0)
        throw IoError(s.where(rel) + ": grids need declare_grid (origin, voxel size, class)");
      s.declare(rel, is_floating(v.type) ? ElementType::Float32 : v.type, v.shape, std::nullopt);
    }
  }
  std::vector<const ArrayView*> views(s.arrays.size(), nullptr);
  for (size_t i = 0; i < s.arrays.size(); ++i) {
    for (const auto& [rel, v] : data)
      if (rel == s.arrays[i].path) views[i] = &v;
    if (!views[i])
      throw IoError(s.where(s.arrays[i].path) + ": missing from frame " + std::to_string(frame));
    if (views[i]->shape != s.arrays[i].item_shape) {
      throw IoError(s.where(s.arrays[i].path) + ": frame " + std::to_string(frame) +
                    ": expected shape " + shape_string(s.arrays[i].item_shape) + ", got " +
                    shape_string(views[i]->shape));
    }
    if (!s.arrays[i].grid)  // level sets are clamped to the band below
      check_finite(*views[i], s.arrays[i].file_type == ElementType::Float32,
                   s.where(s.arrays[i].path) + ": frame " + std::to_string(frame));
  }
  // All or nothing: on any failure shrink every dataset back to the old frame count.
  try {
    for (size_t i = 0; i < s.arrays.size(); ++i) {
      auto& a = s.arrays[i];
      if (a.grid && a.grid->grid_class == GridClass::LevelSet) {
        // Level sets are clamped to +- background outside the narrow band (docs/cache-format.md).
        const float bg = static_cast<float>(a.grid->background * a.grid->voxel_size);
        const size_t n = element_count(a.item_shape);
        std::vector<float> clamped(n);
        for (size_t k = 0; k < n; ++k) {
          const double v = views[i]->type == ElementType::Float32
                               ? static_cast<const float*>(views[i]->data)[k]
                               : static_cast<const double*>(views[i]->data)[k];
          clamped[k] = std::isnan(v) ? bg : std::clamp(static_cast<float>(v), -bg, bg);
        }
        s.write_frame_slab(a.dataset.get(), a.path, a.item_shape, ElementType::Float32,
                           clamped.data());
      } else {
        s.write_frame_slab(a.dataset.get(), a.path, a.item_shape, views[i]->type, views[i]->data);
      }
    }
    s.write_frame_slab(s.time_ds.get(), "time", {}, ElementType::Float64, &time);
    s.write_frame_slab(s.frame_ds.get(), "frame", {}, ElementType::Int64, &frame);
  } catch (...) {
    for (auto& a : s.arrays) Impl::extend(a.dataset.get(), a.item_shape, s.frames);
    Impl::extend(s.time_ds.get(), {}, s.frames);
    Impl::extend(s.frame_ds.get(), {}, s.frames);
    H5Eclear2(H5E_DEFAULT);
    throw;
  }
  ++s.frames;
  s.last_frame = frame;
}

// --------------------------------------------------------------------------------------------
// CacheWriter

struct CacheWriter::Impl {
  std::filesystem::path path, tmp;
  TemporaryRegistration tmp_registration, canonical_registration;
  std::string file_name;  // for messages: the real name
  WriteOptions options;
  Handle file;
  std::vector<std::unique_ptr<SequenceWriter>> sequences;
  bool committed = false;
};

CacheWriter::CacheWriter(std::filesystem::path path, Provenance provenance, WriteOptions options)
    : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  Impl& w = *impl_;
  w.path = std::move(path);
  w.file_name = w.path.string();
  w.options = options;
  if (options.deflate_level < 0 || options.deflate_level > 9)
    throw IoError(w.file_name + ": deflate level must be 0-9");
  w.tmp = w.path;
  w.tmp += ".tmp-" + std::to_string(::getpid());
  require_directory(w.path);
  check_replaceable(w.path);
  w.tmp_registration = TemporaryRegistration(w.tmp);
  w.file = detail::create_cache_file(w.tmp, w.file_name);
  provenance.created_utc = utc_now_iso8601();
  Handle root(H5Gopen2(w.file.get(), "/", H5P_DEFAULT), H5Gclose);
  const std::string where = w.file_name + ": /";
  h5::write_attribute(root.get(), "format", std::string(kCacheFormat), where);
  h5::write_attribute(root.get(), "format_version", std::int64_t{kCacheFormatVersion}, where);
  h5::write_attribute(root.get(), "generator", provenance.generator, where);
  h5::write_attribute(root.get(), "command_line", provenance.command_line, where);
  h5::write_attribute(root.get(), "config_json", provenance.config_json, where);
  h5::write_attribute(root.get(), "created_utc", provenance.created_utc, where);
}

CacheWriter::~CacheWriter() {
  if (!impl_ || impl_->committed) return;
  impl_->sequences.clear();
  impl_->file.reset();
  std::error_code ec;
  std::filesystem::remove(impl_->tmp, ec);
}

const std::filesystem::path& CacheWriter::path() const {
  return impl_->path;
}
const std::filesystem::path& CacheWriter::temporary_path() const {
  return impl_->tmp;
}
bool CacheWriter::committed() const {
  return impl_->committed;
}

SequenceWriter& CacheWriter::add_sequence(const std::string& name, const SequenceInfo& info) {
  Impl& w = *impl_;
  if (w.committed) throw IoError(w.file_name + ": already committed");
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw IoError(w.file_name + ": sequence name '" + name + "': expected a name without '/'");
  const std::string group_path = "/sequences/" + name;
  if (h5::link_exists(w.file.get(), group_path))
    throw IoError(w.file_name + ": " + group_path + ": sequence already exists");
  if (!(info.frame_rate > 0) || !std::isfinite(info.frame_rate))
    throw IoError(w.file_name + ": " + group_path + ": frame_rate: expected > 0");
  if (info.dimension != 2 && info.dimension != 3)
    throw IoError(w.file_name + ": " + group_path + ": dimension: expected 2 or 3, got " +
                  std::to_string(info.dimension));
  auto impl = std::make_unique<SequenceWriter::Impl>();
  impl->file = w.file.get();
  impl->file_name = w.file_name;
  impl->name = name;
  impl->group_path = group_path;
  impl->info = info;
  impl->deflate = w.options.deflate_level;
  impl->group = h5::ensure_group(w.file.get(), group_path, w.file_name);
  h5::write_attribute(impl->group.get(), "frame_rate", info.frame_rate,
                      w.file_name + ": " + group_path);
  h5::write_attribute(impl->group.get(), "dimension", std::int64_t{info.dimension},
                      w.file_name + ": " + group_path);
  // time and frame: 1-D, extendible, chunks of 1024 entries.
  for (auto [rel, type, ds] : {std::tuple{"time", ElementType::Float64, &impl->time_ds},
                               std::tuple{"frame", ElementType::Int64, &impl->frame_ds}}) {
    const std::string path = group_path + "/" + rel;
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {1024};
    Handle space(H5Screate_simple(1, dims, maxdims), H5Sclose);
    Handle dcpl = dataset_create_plist({chunk[0]}, 0);
    *ds = h5::check_id(H5Dcreate2(w.file.get(), path.c_str(), h5::file_type(type), space.get(),
                                  H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                       H5Dclose, w.file_name + ": " + path + ": cannot create dataset");
  }
  w.sequences.push_back(std::unique_ptr<SequenceWriter>(new SequenceWriter(std::move(impl))));
  return *w.sequences.back();
}

SequenceWriter& CacheWriter::sequence(const std::string& name) {
  for (auto& s : impl_->sequences)
    if (s->name() == name) return *s;
  throw IoError(impl_->file_name + ": no sequence '" + name + "' was added");
}

void CacheWriter::set_attribute(const std::string& group_path, const std::string& name,
                                const AttributeValue& value) {
  Handle g = h5::ensure_group(impl_->file.get(), group_path, impl_->file_name);
  h5::write_attribute(g.get(), name, value, impl_->file_name + ": " + group_path);
}

void CacheWriter::write_array(const std::string& path, const ArrayView& data) {
  if (path.empty() || path[0] != '/' || path.rfind("/sequences/", 0) == 0)
    throw IoError(impl_->file_name + ": " + path +
                  ": expected an absolute path outside /sequences (use the sequence's writer)");
  write_dataset(impl_->file.get(), impl_->file_name, path, data, data.type,
                impl_->options.deflate_level);
}

void CacheWriter::commit() {
  Impl& w = *impl_;
  if (w.committed) return;
  w.sequences.clear();
  h5::check_status(H5Fflush(w.file.get(), H5F_SCOPE_GLOBAL), w.file_name + ": cannot flush");
  const hid_t id = w.file.release();
  h5::check_status(H5Fclose(id), w.file_name + ": cannot close " + w.tmp.string());
  // The file's bytes depend on the order things were written; its canonical copy depends only
  // on the content, so a cache merged from shards equals the single run's (cache_layout.hpp).
  std::filesystem::path canonical = w.tmp;
  canonical += "-canonical";
  w.canonical_registration = TemporaryRegistration(canonical);
  std::error_code ec;
  try {
    detail::write_canonical_copy(w.tmp, canonical, w.file_name);
  } catch (...) {
    std::filesystem::remove(canonical, ec);
    throw;  // the destructor removes w.tmp
  }
  std::filesystem::remove(w.tmp, ec);
  // From here the canonical copy belongs to put_in_place, which removes it if it fails.
  w.committed = true;
  put_in_place(canonical, w.path, std::move(w.canonical_registration), w.file_name);
}

void write_face_uv(SequenceWriter& sequence, const FaceVaryingUv& uv) {
  if (uv.empty()) return;
  sequence.write_static("uv/coordinates", view(uv.coordinates));
  sequence.write_static("uv/triangles", view(uv.corners));
}

}  // namespace datadyn::io
