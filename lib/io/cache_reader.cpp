#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/errors.hpp"
#include "io/cache.hpp"
#include "io/hdf5_handle.hpp"

namespace datadyn::io {

namespace {

using h5::Handle;

struct DatasetInfo {
  ElementType type;
  Shape shape;
};

std::string type_class_name(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return "integer";
    case H5T_FLOAT:
      return "float";
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    default:
      return "another HDF5 type";
  }
}

/// Opens a dataset and reads its element type and shape; errors name the file and dataset.
Handle open_dataset(hid_t file, const std::string& file_name, const std::string& path,
                    DatasetInfo& info) {
  const h5::ReadScope reading(file_name + ": " + path);
  if (!h5::link_exists(file, path)) throw IoError(file_name + ": " + path + ": no such dataset");
  H5O_info_t oinfo;
  if (H5Oget_info_by_name2(file, path.c_str(), &oinfo, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    // A soft link in a loop or an external link to a missing file read as "a group or other
    // object". The tools write neither.
    H5L_info_t link{};
    const bool linked = H5Lget_info(file, path.c_str(), &link, H5P_DEFAULT) >= 0 &&
                        (link.type == H5L_TYPE_SOFT || link.type == H5L_TYPE_EXTERNAL);
    H5Eclear2(H5E_DEFAULT);
    throw IoError(file_name + ": " + path +
                  (linked ? std::string(link.type == H5L_TYPE_SOFT ? ": a soft" : ": an external") +
                                " link that cannot be followed (a loop, or a missing target)"
                          : std::string(": cannot open (file damaged?)")));
  }
  if (oinfo.type != H5O_TYPE_DATASET)
    throw IoError(file_name + ": " + path + ": expected a dataset, got a group or other object");
  Handle ds = h5::check_id(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose,
                           file_name + ": " + path + ": cannot open dataset");
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  if (!h5::classify(type.get(), info.type)) {
    throw IoError(file_name + ": " + path + ": expected a numeric dataset, got " +
                  type_class_name(type.get()));
  }
  info.shape = h5::dataset_shape(ds.get());
  h5::check_fully_written(ds.get(), file_name + ": " + path);
  return ds;
}

bool is_floating(ElementType t) {
  return t == ElementType::Float32 || t == ElementType::Float64;
}

template <class T>
Array<T> read_slab(hid_t ds, const std::string& what, const Shape& shape,
                   std::optional<std::size_t> frame) {
  Array<T> out;
  std::vector<hsize_t> start(shape.size(), 0), count(shape.begin(), shape.end());
  if (frame) {
    start[0] = *frame;
    count[0] = 1;
    out.shape.assign(shape.begin() + 1, shape.end());
  } else {
    out.shape = shape;
  }
  out.data.resize(element_count(out.shape));
  if (out.data.empty()) return out;
  const h5::ReadScope reading(what);
  Handle fspace(H5Dget_space(ds), H5Sclose);
  if (!count.empty())
    H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Handle mspace(count.empty()
                    ? H5Screate(H5S_SCALAR)
                    : H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr),
                H5Sclose);
  h5::check_status(H5Dread(ds, h5::memory_type(element_type_of<T>()), mspace.get(), fspace.get(),
                           H5P_DEFAULT, out.data.data()),
                   what + ": cannot read (file damaged or truncated?)");
  return out;
}

/// A number for a message, as %g writes it ("0.25", "inf", "nan").
std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// A float64 array of a sequence holds float32 values (docs/cache-format.md): one beyond
/// float32's range (from another writer) is refused, naming the item, where it had been read as
/// a finite number and written to an OBJ or blamed on a config further on.
template <class T>
void require_float32_range(const Array<T>& a, ElementType stored, const std::string& what) {
  if constexpr (std::is_floating_point_v<T>) {
    if (stored != ElementType::Float64) return;
    constexpr double max = std::numeric_limits<float>::max();
    for (std::size_t i = 0; i < a.data.size(); ++i)
      if (std::isfinite(a.data[i]) && std::abs(static_cast<double>(a.data[i])) > max) {
        throw IoError(what + ": item " + std::to_string(i) + " is " +
                      number_text(static_cast<double>(a.data[i])) +
                      ", beyond float32's range (the cache's arrays hold float32 values)");
      }
  }
}

double attribute_number(const AttributeValue& v, const std::string& where, const char* name) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw IoError(where + ": attribute " + name + ": expected a number, got " + attribute_string(v));
}

}  // namespace

// --------------------------------------------------------------------------------------------
// SequenceReader

struct SequenceReader::Impl {
  std::shared_ptr<Handle> file;
  std::string file_name, name, group_path;
  double frame_rate = 0;
  int dimension = 0;
  std::vector<double> times;
  std::vector<std::int64_t> frames;
  std::size_t points = 0;
  std::vector<std::string> point_arrays, grids, topologies;
  struct Open {
    Handle ds;
    DatasetInfo info;
    bool per_frame = false;
  };
  mutable std::map<std::string, Open> open;

  std::string where(const std::string& rel) const {
    return file_name + ": " + group_path + "/" + rel;
  }

  const Open& dataset(const std::string& rel) const {
    auto it = open.find(rel);
    if (it != open.end()) return it->second;
    Open o;
    o.ds = open_dataset(file->get(), file_name, group_path + "/" + rel, o.info);
    o.per_frame = h5::attribute_exists(o.ds.get(), "per_frame", where(rel));
    return open.emplace(rel, std::move(o)).first->second;
  }

  [[noreturn]] void bad(const std::string& rel, const std::string& expected, const Shape& got,
                        ElementType type) const {
    throw IoError(where(rel) + ": expected " + expected + ", got " + element_type_name(type) + " " +
                  shape_string(got));
  }

  void validate() {
    const h5::ReadScope reading(file_name + ": " + group_path);
    const hid_t f = file->get();
    Handle group = h5::check_id(H5Gopen2(f, group_path.c_str(), H5P_DEFAULT), H5Gclose,
                                file_name + ": " + group_path + ": cannot open group");
    const std::string gw = file_name + ": " + group_path;
    frame_rate =
        attribute_number(h5::read_attribute(group.get(), "frame_rate", gw), gw, "frame_rate");
    const double dim =
        attribute_number(h5::read_attribute(group.get(), "dimension", gw), gw, "dimension");
    if (!(frame_rate > 0) || !std::isfinite(frame_rate))
      throw IoError(gw + ": attribute frame_rate: expected a finite number > 0, got " +
                    number_text(frame_rate));
    if (dim != 2 && dim != 3) throw IoError(gw + ": attribute dimension: expected 2 or 3");
    dimension = static_cast<int>(dim);

    const Open& t = dataset("time");
    if (t.info.shape.size() != 1 || !is_floating(t.info.type))
      bad("time", "float64 [F]", t.info.shape, t.info.type);
    const std::size_t F = t.info.shape[0];
    const Open& fr = dataset("frame");
    if (fr.info.shape != Shape{F} || is_floating(fr.info.type))
      bad("frame", "int64 [" + std::to_string(F) + "] (F from time)", fr.info.shape, fr.info.type);
    times = read_slab<double>(t.ds.get(), where("time"), t.info.shape, std::nullopt).data;
    frames = read_slab<std::int64_t>(fr.ds.get(), where("frame"), fr.info.shape, std::nullopt).data;
    for (std::size_t i = 1; i < F; ++i)
      if (frames[i] <= frames[i - 1])
        throw IoError(where("frame") + ": frame numbers do not increase at index " +
                      std::to_string(i));

    // Every tool takes time as it is (MDD, XDMF and USDA times, frame spacing, reports): a NaN
    // there was written on, or ran a fit.
    for (std::size_t i = 0; i < F; ++i)
      if (!std::isfinite(times[i]))
        throw IoError(where("time") + ": element " + std::to_string(i) + " (frame " +
                      std::to_string(frames[i]) + ") is " + number_text(times[i]) +
                      ", expected a finite number");

    const std::string D = std::to_string(dimension), Fs = std::to_string(F);
    std::optional<std::size_t> n;
    auto check_n = [&](const std::string& rel, std::size_t got, const Shape& sh, ElementType ty) {
      if (n && *n != got)
        bad(rel, "N = " + std::to_string(*n) + " points (as points/position)", sh, ty);
      n = got;
    };
    if (h5::link_exists(f, group_path + "/points/position")) {
      const Open& p = dataset("points/position");
      if (!p.per_frame || p.info.shape.size() != 3 || p.info.shape[0] != F ||
          p.info.shape[2] != static_cast<std::size_t>(dimension) || !is_floating(p.info.type))
        bad("points/position", "float per-frame [" + Fs + ", N, " + D + "]", p.info.shape,
            p.info.type);
      check_n("points/position", p.info.shape[1], p.info.shape, p.info.type);
    }
    if (h5::link_exists(f, group_path + "/rest/position")) {
      const Open& r = dataset("rest/position");
      if (r.info.shape.size() != 2 || r.info.shape[1] != static_cast<std::size_t>(dimension) ||
          !is_floating(r.info.type))
        bad("rest/position", "float [N, " + D + "]", r.info.shape, r.info.type);
      check_n("rest/position", r.info.shape[0], r.info.shape, r.info.type);
    }
    auto children = [&](const std::string& sub) {
      const std::string p = group_path + "/" + sub;
      if (!h5::link_exists(f, p)) return std::vector<std::string>{};
      Handle g = h5::check_id(H5Gopen2(f, p.c_str(), H5P_DEFAULT), H5Gclose,
                              file_name + ": " + p + ": expected a group");
      return h5::child_names(g.get(), file_name + ": " + p);
    };
    point_arrays = children("points");
    for (const auto& a : point_arrays) {
      const std::string rel = "points/" + a;
      const Open& o = dataset(rel);
      if (o.per_frame) {
        if (o.info.shape.size() < 2 || o.info.shape[0] != F)
          bad(rel, "per-frame [" + Fs + ", N, ...]", o.info.shape, o.info.type);
        check_n(rel, o.info.shape[1], o.info.shape, o.info.type);
      } else {
        if (o.info.shape.empty()) bad(rel, "[N, ...]", o.info.shape, o.info.type);
        check_n(rel, o.info.shape[0], o.info.shape, o.info.type);
      }
    }
    points = n.value_or(0);
    topologies = children("topology");
    for (const auto& k : topologies) {
      const Open& o = dataset("topology/" + k);
      const std::size_t arity = k == "triangles" ? 3 : (k == "quads" || k == "tetrahedra") ? 4 : 0;
      if (arity == 0)
        throw IoError(where("topology/" + k) + ": expected triangles, quads or tetrahedra");
      if (o.info.shape.size() != 2 || o.info.shape[1] != arity || is_floating(o.info.type))
        bad("topology/" + k, "int32 [T, " + std::to_string(arity) + "]", o.info.shape, o.info.type);
    }
    // Face-varying texture coordinates: one index into uv/coordinates per face corner of
    // topology/<kind> (index ranges are checked by uv_corners).
    for (const auto& k : children("uv")) {
      const std::string rel = "uv/" + k;
      const Open& o = dataset(rel);
      if (k == "coordinates") {
        if (o.info.shape.size() != 2 || o.info.shape[1] != 2 || !is_floating(o.info.type))
          bad(rel, "float [M, 2]", o.info.shape, o.info.type);
        continue;
      }
      if (k != "triangles" && k != "quads")
        throw IoError(where(rel) + ": expected uv/coordinates, uv/triangles or uv/quads");
      if (!h5::link_exists(f, group_path + "/uv/coordinates"))
        throw IoError(where(rel) + ": the sequence has no uv/coordinates for it to index");
      if (!h5::link_exists(f, group_path + "/topology/" + k))
        throw IoError(where(rel) + ": the sequence has no topology/" + k + " for it to follow");
      const std::size_t faces = dataset("topology/" + k).info.shape[0];
      const std::size_t arity = k == "triangles" ? 3 : 4;
      if (o.info.shape != Shape{faces, arity} || is_floating(o.info.type))
        bad(rel,
            "int32 [" + std::to_string(faces) + ", " + std::to_string(arity) +
                "] (one row per face of topology/" + k + ")",
            o.info.shape, o.info.type);
    }
    grids = children("grids");
    for (const auto& g : grids) {
      const std::string rel = "grids/" + g;
      const Open& o = dataset(rel);
      if (o.info.shape.size() != 4 || o.info.shape[0] != F || !is_floating(o.info.type))
        bad(rel, "float [" + Fs + ", nz, ny, nx]", o.info.shape, o.info.type);
      (void)grid_spec(g);  // validates the attributes
    }
  }

  GridSpec grid_spec(const std::string& g) const {
    const std::string rel = "grids/" + g;
    const Open& o = dataset(rel);
    const std::string w = where(rel);
    GridSpec s;
    s.nz = o.info.shape.at(1);
    s.ny = o.info.shape.at(2);
    s.nx = o.info.shape.at(3);
    const AttributeValue origin = h5::read_attribute(o.ds.get(), "origin", w);
    const auto* ov = std::get_if<std::vector<double>>(&origin);
    if (!ov || ov->size() != 3)
      throw IoError(w + ": attribute origin: expected 3 numbers, got " + attribute_string(origin));
    s.origin = Eigen::Vector3d((*ov)[0], (*ov)[1], (*ov)[2]);
    if (!s.origin.allFinite())
      throw IoError(w + ": attribute origin: expected 3 finite numbers, got " +
                    attribute_string(origin));
    s.voxel_size =
        attribute_number(h5::read_attribute(o.ds.get(), "voxel_size", w), w, "voxel_size");
    if (!(s.voxel_size > 0) || !std::isfinite(s.voxel_size))
      throw IoError(w + ": attribute voxel_size: expected a finite number > 0, got " +
                    number_text(s.voxel_size));
    const AttributeValue cls = h5::read_attribute(o.ds.get(), "class", w);
    const auto* cs = std::get_if<std::string>(&cls);
    if (!cs || (*cs != "level_set" && *cs != "density"))
      throw IoError(w + ": attribute class: expected \"level_set\" or \"density\", got " +
                    attribute_string(cls));
    s.grid_class = *cs == "level_set" ? GridClass::LevelSet : GridClass::Density;
    if (s.grid_class == GridClass::LevelSet && h5::attribute_exists(o.ds.get(), "background", w)) {
      const double band =
          attribute_number(h5::read_attribute(o.ds.get(), "background", w), w, "background");
      // The band's half width: a level set's background is outside it and positive (OpenVDB
      // refuses a negative one; a NaN or 0 one wrote a level set without a band).
      if (!(band > 0) || !std::isfinite(band))
        throw IoError(w +
                      ": attribute background: expected a finite number > 0 (the band's "
                      "half width, m), got " +
                      number_text(band));
      s.background = band / s.voxel_size;
    }
    return s;
  }
};

SequenceReader::SequenceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SequenceReader::~SequenceReader() = default;
SequenceReader::SequenceReader(SequenceReader&&) noexcept = default;

const std::string& SequenceReader::name() const {
  return impl_->name;
}
double SequenceReader::frame_rate() const {
  return impl_->frame_rate;
}
int SequenceReader::dimension() const {
  return impl_->dimension;
}
std::size_t SequenceReader::frame_count() const {
  return impl_->times.size();
}
std::size_t SequenceReader::point_count() const {
  return impl_->points;
}
const std::vector<double>& SequenceReader::times() const {
  return impl_->times;
}
const std::vector<std::int64_t>& SequenceReader::frames() const {
  return impl_->frames;
}
std::vector<std::string> SequenceReader::point_arrays() const {
  return impl_->point_arrays;
}
std::vector<std::string> SequenceReader::grids() const {
  return impl_->grids;
}
std::vector<std::string> SequenceReader::topologies() const {
  return impl_->topologies;
}

std::optional<std::size_t> SequenceReader::frame_index(std::int64_t frame) const {
  const auto& f = impl_->frames;
  auto it = std::lower_bound(f.begin(), f.end(), frame);
  if (it == f.end() || *it != frame) return std::nullopt;
  return static_cast<std::size_t>(it - f.begin());
}

Attributes SequenceReader::attributes() const {
  const h5::ReadScope reading(impl_->file_name + ": " + impl_->group_path);
  Handle g(H5Gopen2(impl_->file->get(), impl_->group_path.c_str(), H5P_DEFAULT), H5Gclose);
  Attributes out;
  const std::string where = impl_->file_name + ": " + impl_->group_path;
  for (const auto& n : h5::attribute_names(g.get(), where))
    out[n] = h5::read_attribute(g.get(), n, where);
  return out;
}

bool SequenceReader::has(const std::string& path) const {
  const h5::ReadScope reading(impl_->file_name + ": " + impl_->group_path + "/" + path);
  return h5::link_exists(impl_->file->get(), impl_->group_path + "/" + path);
}

bool SequenceReader::is_per_frame(const std::string& path) const {
  return impl_->dataset(path).per_frame;
}

Shape SequenceReader::shape(const std::string& path) const {
  return impl_->dataset(path).info.shape;
}

template <class T>
Array<T> SequenceReader::read_frame(const std::string& path, std::size_t index) const {
  const auto& o = impl_->dataset(path);
  if (!o.per_frame) throw IoError(impl_->where(path) + ": expected a per-frame dataset");
  if (index >= frame_count()) {
    throw IoError(impl_->where(path) + ": frame index " + std::to_string(index) +
                  " outside the sequence's " + std::to_string(frame_count()) + " frames");
  }
  // The frame as the cache numbers it (the `frame` dataset, what --frames and dd-cache info
  // show), not the 0-based index, which read one less.
  const std::vector<std::int64_t>& numbers = frames();
  const std::string frame = index < numbers.size() ? ": frame " + std::to_string(numbers[index])
                                                   : " frame index " + std::to_string(index);
  Array<T> a = read_slab<T>(o.ds.get(), impl_->where(path) + frame, o.info.shape, index);
  require_float32_range(a, o.info.type, impl_->where(path) + frame);
  return a;
}

template <class T>
Array<T> SequenceReader::read_static(const std::string& path) const {
  const auto& o = impl_->dataset(path);
  Array<T> a = read_slab<T>(o.ds.get(), impl_->where(path), o.info.shape, std::nullopt);
  require_float32_range(a, o.info.type, impl_->where(path));
  return a;
}

Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> SequenceReader::positions(
    std::size_t index) const {
  return read_frame<double>("points/position", index).matrix();
}

namespace {

/// The static index array `rel` of `s`, every index checked to lie in [0, count); `counted`
/// names what the indices count in the message ("" for the points).
Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> checked_indices(
    const SequenceReader& s, const std::string& where, const std::string& rel, std::size_t count,
    const std::string& counted) {
  Array<std::int32_t> a = s.read_static<std::int32_t>(rel);
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (a.data[i] < 0 || static_cast<std::size_t>(a.data[i]) >= count)
      throw IoError(where + ": index " + std::to_string(a.data[i]) + " at element " +
                    std::to_string(i) + " outside [0, " + std::to_string(count) + ")" +
                    (counted.empty() ? "" : " (" + counted + ")"));
  return a.matrix();
}

}  // namespace

Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> SequenceReader::topology(
    const std::string& kind) const {
  const std::string rel = "topology/" + kind;
  if (!has(rel)) throw IoError(impl_->where(rel) + ": the sequence has no " + kind);
  return checked_indices(*this, impl_->where(rel), rel, impl_->points, "");
}

Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> SequenceReader::uv_corners(
    const std::string& kind) const {
  const std::string rel = "uv/" + kind;
  if (!has(rel)) throw IoError(impl_->where(rel) + ": the sequence has no texture coordinates");
  return checked_indices(*this, impl_->where(rel), rel, shape("uv/coordinates").at(0),
                         "the rows of uv/coordinates");
}

Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> SequenceReader::uv_coordinates() const {
  const std::string rel = "uv/coordinates";
  if (!has(rel)) throw IoError(impl_->where(rel) + ": the sequence has no texture coordinates");
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> uv = read_static<double>(rel).matrix();
  for (Eigen::Index i = 0; i < uv.rows(); ++i)
    if (!uv.row(i).allFinite())
      throw IoError(impl_->where(rel) + ": row " + std::to_string(i) + " is not finite (" +
                    std::to_string(uv(i, 0)) + ", " + std::to_string(uv(i, 1)) + ")");
  return uv;
}

GridSpec SequenceReader::grid_spec(const std::string& name) const {
  return impl_->grid_spec(name);
}

// --------------------------------------------------------------------------------------------
// CacheReader

namespace {

/// Throws IoError unless `path` opens as a regular file, with the reason in words. HDF5's own
/// open blocked for ever on a FIFO, and called a file without read permission "not an HDF5 file"
/// and a loop of symbolic links "no such file".
void check_cache_file(const std::filesystem::path& path) {
  // stat first: opening a FIFO to classify it would release (and then break) a writer blocked
  // on it, and opening a device can have side effects.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw IoError(path.string() + ": " +
                  (err == ENOENT  ? std::string("no such file")
                   : err == ELOOP ? std::string("cannot open: a loop of symbolic links")
                                  : "cannot open: " + std::string(std::strerror(err))));
  }
  if (S_ISDIR(st.st_mode)) throw IoError(path.string() + ": is a directory");
  if (!S_ISREG(st.st_mode))
    throw IoError(path.string() +
                  ": not a regular file (a pipe, socket or device): a cache is read from a file");
  // HDF5 calls a file it may not read "not an HDF5 file".
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw IoError(path.string() + ": cannot open: " + std::strerror(err));
  }
  ::close(fd);
}

}  // namespace

struct CacheReader::Impl {
  std::filesystem::path path;
  std::string file_name;
  std::shared_ptr<Handle> file;
  int version = 0;
};

CacheReader::CacheReader(std::filesystem::path path) : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  Impl& r = *impl_;
  r.path = std::move(path);
  r.file_name = r.path.string();
  const h5::ReadScope reading(r.file_name);
  check_cache_file(r.path);
  if (H5Fis_hdf5(r.file_name.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw IoError(r.file_name + ": not an HDF5 file (empty, damaged or another format)");
  }
  r.file = std::make_shared<Handle>(
      h5::check_id(H5Fopen(r.file_name.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()),
                   H5Fclose, r.file_name + ": cannot open the HDF5 file (truncated or damaged?)"));
  Handle root(H5Gopen2(r.file->get(), "/", H5P_DEFAULT), H5Gclose);
  const std::string w = r.file_name + ": /";
  if (!h5::attribute_exists(root.get(), "format", w))
    throw IoError(w +
                  ": attribute format: expected \"datadyn-cache\", got none (not a datadyn cache)");
  const AttributeValue fmt = h5::read_attribute(root.get(), "format", w);
  if (fmt != AttributeValue(std::string(kCacheFormat)))
    throw IoError(w + ": attribute format: expected \"datadyn-cache\", got " +
                  attribute_string(fmt));
  const AttributeValue ver = h5::read_attribute(root.get(), "format_version", w);
  const auto* v = std::get_if<std::int64_t>(&ver);
  if (!v || *v < 1 || *v > kCacheFormatVersion) {
    throw IoError(w + ": attribute format_version: expected 1 to " +
                  std::to_string(kCacheFormatVersion) + ", got " + attribute_string(ver) +
                  " (written by a newer datadyn?)");
  }
  r.version = static_cast<int>(*v);
}

CacheReader::~CacheReader() = default;
CacheReader::CacheReader(CacheReader&&) noexcept = default;

const std::filesystem::path& CacheReader::path() const {
  return impl_->path;
}
int CacheReader::format_version() const {
  return impl_->version;
}

Provenance CacheReader::provenance() const {
  const h5::ReadScope reading(impl_->file_name + ": /");
  Handle root(H5Gopen2(impl_->file->get(), "/", H5P_DEFAULT), H5Gclose);
  const std::string w = impl_->file_name + ": /";
  auto text = [&](const char* name) {
    if (!h5::attribute_exists(root.get(), name, w)) return std::string();
    const AttributeValue a = h5::read_attribute(root.get(), name, w);
    const auto* s = std::get_if<std::string>(&a);
    return s ? *s : attribute_string(a);
  };
  return {text("generator"), text("command_line"), text("config_json"), text("created_utc")};
}

std::vector<std::string> CacheReader::sequence_names() const {
  const h5::ReadScope reading(impl_->file_name + ": /sequences");
  if (!h5::link_exists(impl_->file->get(), "/sequences")) return {};
  Handle g = h5::check_id(H5Gopen2(impl_->file->get(), "/sequences", H5P_DEFAULT), H5Gclose,
                          impl_->file_name + ": /sequences: expected a group");
  return h5::child_names(g.get(), impl_->file_name + ": /sequences");
}

SequenceReader CacheReader::sequence(const std::string& name) const {
  const auto names = sequence_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw IoError(impl_->file_name + ": /sequences/" + name +
                  ": no such sequence (the cache has: " + (list.empty() ? "none" : list) + ")");
  }
  auto s = std::make_unique<SequenceReader::Impl>();
  s->file = impl_->file;
  s->file_name = impl_->file_name;
  s->name = name;
  s->group_path = "/sequences/" + name;
  s->validate();
  return SequenceReader(std::move(s));
}

bool CacheReader::exists(const std::string& path) const {
  const h5::ReadScope reading(impl_->file_name + ": " + path);
  return h5::link_exists(impl_->file->get(), path);
}

Attributes CacheReader::attributes(const std::string& object_path) const {
  const std::string w = impl_->file_name + ": " + object_path;
  const h5::ReadScope reading(w);
  if (!exists(object_path)) throw IoError(w + ": no such object");
  Handle o = h5::check_id(H5Oopen(impl_->file->get(), object_path.c_str(), H5P_DEFAULT), H5Oclose,
                          w + ": cannot open");
  Attributes out;
  for (const auto& n : h5::attribute_names(o.get(), w)) out[n] = h5::read_attribute(o.get(), n, w);
  return out;
}

Shape CacheReader::shape(const std::string& dataset_path) const {
  DatasetInfo info;
  open_dataset(impl_->file->get(), impl_->file_name, dataset_path, info);
  return info.shape;
}

template <class T>
Array<T> CacheReader::read_array(const std::string& dataset_path) const {
  DatasetInfo info;
  Handle ds = open_dataset(impl_->file->get(), impl_->file_name, dataset_path, info);
  return read_slab<T>(ds.get(), impl_->file_name + ": " + dataset_path, info.shape, std::nullopt);
}

#define DATADYN_INSTANTIATE(T)                                                            \
  template Array<T> SequenceReader::read_frame<T>(const std::string&, std::size_t) const; \
  template Array<T> SequenceReader::read_static<T>(const std::string&) const;             \
  template Array<T> CacheReader::read_array<T>(const std::string&) const;
DATADYN_INSTANTIATE(std::int8_t)
DATADYN_INSTANTIATE(std::uint8_t)
DATADYN_INSTANTIATE(std::int32_t)
DATADYN_INSTANTIATE(std::int64_t)
DATADYN_INSTANTIATE(float)
DATADYN_INSTANTIATE(double)
#undef DATADYN_INSTANTIATE

FaceVaryingUv read_face_uv(const SequenceReader& sequence) {
  FaceVaryingUv uv;
  if (!sequence.has("uv/triangles")) return uv;
  uv.coordinates = sequence.uv_coordinates();
  uv.corners = sequence.uv_corners("triangles");
  return uv;
}

}  // namespace datadyn::io
