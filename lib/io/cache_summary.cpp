#include "io/cache_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "io/cache.hpp"
#include "io/hdf5_handle.hpp"

namespace datadyn::io {

namespace {

using h5::Handle;

/// An attribute for a listing: long strings (configs, JSON) cut to their start and length.
std::string listed_attribute(const AttributeValue& value) {
  if (const auto* text = std::get_if<std::string>(&value); text && text->size() > 100) {
    std::size_t cut = 60;  // not inside a UTF-8 sequence
    while (cut > 0 && (static_cast<unsigned char>((*text)[cut]) & 0xC0) == 0x80) --cut;
    return '"' + text->substr(0, cut) + "...\" (" + std::to_string(text->size()) + " bytes)";
  }
  return attribute_string(value);
}

/// Whether the object at `info` was met before in this walk. A hard link back to a group above it
/// makes the file's graph a cycle, which a walk that follows every link never leaves.
bool seen_before(const H5O_info_t& info, std::set<haddr_t>& seen) {
  return !seen.insert(info.addr).second;
}

/// Lists the datasets and attributes at and under `path` (a group or a dataset), named relative
/// to `base`. For the walk's start, `skip` names children to leave out and `own_attributes` says
/// whether its attributes are listed (a sequence's and the root's are listed elsewhere).
void list_objects(hid_t file, const std::string& path, const std::string& base,
                  const std::string& indent, const std::vector<std::string>& skip,
                  bool own_attributes, const std::string& file_name, std::set<haddr_t>& seen,
                  std::ostringstream& os) {
  const std::string where = file_name + ": " + path;
  const h5::ReadScope reading(where);
  Handle obj =
      h5::check_id(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose, where + ": cannot open");
  H5O_info_t info;
  h5::check_status(H5Oget_info2(obj.get(), &info, H5O_INFO_BASIC), where + ": cannot read");
  const std::string name = path.size() > base.size() ? path.substr(base.size()) : "";
  if (seen_before(info, seen)) {
    os << indent << name << " (a link to an object listed above)\n";
    return;
  }
  if (info.type == H5O_TYPE_DATASET) {
    Handle type(H5Dget_type(obj.get()), H5Tclose);
    ElementType element;
    const bool known = type.valid() && h5::classify(type.get(), element);
    os << indent << name << " " << (known ? element_type_name(element) : "(other type)") << " "
       << shape_string(h5::dataset_shape(obj.get())) << "\n";
  }
  const std::string prefix = name.empty() ? "" : name + "/";
  if (own_attributes)
    for (const auto& a : h5::attribute_names(obj.get(), where))
      os << indent << prefix << "@" << a << " = "
         << listed_attribute(h5::read_attribute(obj.get(), a, where)) << "\n";
  if (info.type != H5O_TYPE_GROUP) return;
  for (const auto& child : h5::child_names(obj.get(), where))
    if (std::find(skip.begin(), skip.end(), child) == skip.end())
      list_objects(file, (path == "/" ? "/" : path + "/") + child, base, indent, {}, true,
                   file_name, seen, os);
}

}  // namespace

std::string cache_summary(const std::filesystem::path& path) {
  const h5::ReadScope reading(path.string());
  CacheReader r(path);
  const Provenance p = r.provenance();
  std::ostringstream os;
  os << path.string() << ": datadyn cache, format version " << r.format_version() << "\n"
     << "  generator:    " << p.generator << "\n"
     << "  created:      " << p.created_utc << "\n"
     << "  command line: " << p.command_line << "\n";
  const auto names = r.sequence_names();
  os << "  sequences:    " << names.size() << "\n";
  // Every sequence's own layout (docs/cache-format.md); anything else under it is listed below.
  static const std::vector<std::string> kLayout{"time",     "frame", "points", "rest",
                                                "topology", "uv",    "grids"};
  Handle file = h5::check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()),
                             H5Fclose, path.string() + ": cannot open");
  std::set<haddr_t> seen;
  for (const auto& name : names) {
    const SequenceReader s = r.sequence(name);
    os << "  /sequences/" << name << ": " << s.frame_count() << " frames";
    if (s.frame_count() > 0)
      os << " (" << s.frames().front() << "-" << s.frames().back() << ", t " << s.times().front()
         << "-" << s.times().back() << " s)";
    os << " at " << s.frame_rate() << " fps, " << s.dimension() << "D, " << s.point_count()
       << " points\n";
    for (const auto& a : s.point_arrays())
      os << "    points/" << a << " " << shape_string(s.shape("points/" + a))
         << (s.is_per_frame("points/" + a) ? " per frame" : " static") << "\n";
    if (s.has("rest/position"))
      os << "    rest/position " << shape_string(s.shape("rest/position")) << "\n";
    for (const auto& t : s.topologies())
      os << "    topology/" << t << " " << shape_string(s.shape("topology/" + t)) << "\n";
    for (const char* k : {"coordinates", "triangles", "quads"})
      if (s.has(std::string("uv/") + k))
        os << "    uv/" << k << " " << shape_string(s.shape(std::string("uv/") + k)) << "\n";
    for (const auto& g : s.grids()) {
      const GridSpec spec = s.grid_spec(g);
      os << "    grids/" << g << " " << shape_string(s.shape("grids/" + g)) << " "
         << (spec.grid_class == GridClass::LevelSet ? "level_set" : "density") << ", voxel "
         << spec.voxel_size << " m, origin (" << spec.origin.x() << ", " << spec.origin.y() << ", "
         << spec.origin.z() << ")\n";
    }
    for (const auto& [k, v] : s.attributes())
      if (k != "frame_rate" && k != "dimension")
        os << "    @" << k << " = " << listed_attribute(v) << "\n";
    // What else a tool keeps with the sequence (mps-gen's tank/position and tank/type).
    const std::string group = "/sequences/" + name;
    list_objects(file.get(), group, group + "/", "    ", kLayout, false, path.string(), seen, os);
  }
  // The tools' own groups (/springs, /model, /features, /elastic ...); the root's attributes are
  // the provenance, given at the top.
  list_objects(file.get(), "/", "", "  ", {"sequences"}, false, path.string(), seen, os);
  return os.str();
}

namespace {

/// Throws IoError for rows [first, first + count) of a dataset that did not read: the first row
/// that does not read on its own, named by its frame for per-frame data (the number in the
/// sequence's `frame` dataset, as --frames and `dd-cache info` give it), so that a damaged frame
/// can be simulated again; the range if every row reads alone.
[[noreturn]] void throw_unreadable_row(hid_t file, const std::string& path,
                                       const std::string& where, hid_t ds, hid_t native,
                                       const std::vector<hsize_t>& dims, hsize_t first,
                                       hsize_t count, bool per_frame) {
  Handle space(H5Dget_space(ds), H5Sclose);
  hsize_t row = 1;
  for (std::size_t d = 1; d < dims.size(); ++d) row *= dims[d];
  std::vector<unsigned char> buffer;
  std::string detail;  // HDF5's reason, from the last read that failed
  const auto reads = [&](hsize_t from, hsize_t rows) {
    std::vector<hsize_t> start(dims.size(), 0), shape = dims;
    start[0] = from;
    shape[0] = rows;
    buffer.resize(static_cast<std::size_t>(rows * row) * H5Tget_size(native));
    Handle memory(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                  H5Sclose);
    const bool ok = H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                        shape.data(), nullptr) >= 0 &&
                    H5Dread(ds, native, memory.get(), space.get(), H5P_DEFAULT, buffer.data()) >= 0;
    const std::string error = h5::last_error();
    if (!ok) detail = error;
    return ok;
  };
  // Halves the rows that do not read until one is left: a few reads, not one per row.
  hsize_t r = first, n = count;
  while (n > 1) {
    const hsize_t half = n / 2;
    if (reads(r, half)) {
      r += half;
      n -= half;
    } else {
      n = half;
    }
  }
  if (reads(r, 1))
    throw IoError(where + ": cannot read rows " + std::to_string(first) + "-" +
                  std::to_string(first + count - 1) + " together, though each reads alone");
  std::string name = "row " + std::to_string(r);
  // In /sequences/<name>/, per-frame data: the frame's number from the sequence's frame list.
  const std::string prefix = "/sequences/";
  const std::size_t slash = path.find('/', prefix.size());
  if (per_frame && path.rfind(prefix, 0) == 0 && slash != std::string::npos) {
    const std::string frames = path.substr(0, slash) + "/frame";
    std::int64_t number = 0;
    const hsize_t at[1] = {r}, one[1] = {1};
    if (h5::link_exists(file, frames)) {
      Handle f(H5Dopen2(file, frames.c_str(), H5P_DEFAULT), H5Dclose);
      Handle fs(f.valid() ? H5Dget_space(f.get()) : -1, H5Sclose);
      Handle m(H5Screate_simple(1, one, nullptr), H5Sclose);
      if (fs.valid() && H5Sget_simple_extent_npoints(fs.get()) > static_cast<hssize_t>(r) &&
          H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, at, nullptr, one, nullptr) >= 0 &&
          H5Dread(f.get(), H5T_NATIVE_INT64, m.get(), fs.get(), H5P_DEFAULT, &number) >= 0)
        name = "frame " + std::to_string(number) + " (row " + std::to_string(r) + ")";
    }
    (void)h5::last_error();
  }
  throw IoError(where + ": cannot read " + name +
                (detail.empty() ? std::string() : " (" + detail + ")"));
}

/// Reads every attribute and every dataset at and under `path`, in slabs along the first axis,
/// so that damage HDF5 notices anywhere (a group it cannot list, a chunk that does not inflate,
/// a bad heap) is an error naming the object - also in groups no sequence reader opens
/// (/springs, /model, /features). Throws IoError.
void read_every_object(hid_t file, const std::string& path, const std::string& file_name,
                       std::set<haddr_t>& seen) {
  const std::string where = file_name + ": " + path;
  const h5::ReadScope reading(where);
  Handle obj =
      h5::check_id(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose, where + ": cannot open");
  bool per_frame = false;  // the cache layout's per_frame = 1: row r is the sequence's frame r
  for (const auto& a : h5::attribute_names(obj.get(), where)) {
    const AttributeValue v = h5::read_attribute(obj.get(), a, where);
    if (a == "per_frame")
      per_frame = std::holds_alternative<std::int64_t>(v) && std::get<std::int64_t>(v) == 1;
  }
  H5O_info_t info;
  h5::check_status(H5Oget_info2(obj.get(), &info, H5O_INFO_BASIC), where + ": cannot read");
  if (seen_before(info, seen)) return;  // read already, by another link
  if (info.type == H5O_TYPE_GROUP) {
    for (const auto& child : h5::child_names(obj.get(), where))
      read_every_object(file, (path == "/" ? "/" : path + "/") + child, file_name, seen);
    return;
  }
  if (info.type != H5O_TYPE_DATASET) return;
  Handle space(H5Dget_space(obj.get()), H5Sclose);
  Handle type(H5Dget_type(obj.get()), H5Tclose);
  Handle native(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
  if (!space.valid() || !type.valid() || !native.valid())
    throw IoError(where + ": cannot read its type or shape");
  if (H5Tdetect_class(native.get(), H5T_VLEN) > 0 || H5Tis_variable_str(native.get()) > 0)
    return;  // the tools write no variable-length datasets
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const std::size_t element = H5Tget_size(native.get());
  if (std::find(dims.begin(), dims.end(), hsize_t{0}) != dims.end()) return;  // nothing stored
  h5::check_fully_written(obj.get(), where);
  if (rank <= 0) {
    std::vector<unsigned char> buffer(element);
    h5::check_status(H5Dread(obj.get(), native.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
                     where + ": cannot read");
    return;
  }
  // A tool's own float arrays in a sequence (mps-gen's tank/position) are finite too
  // (docs/cache-format.md); the layout's own arrays are checked after, with their frames named.
  bool check_finite = false;
  if (path.rfind("/sequences/", 0) == 0 && H5Tget_class(native.get()) == H5T_FLOAT &&
      (element == sizeof(float) || element == sizeof(double))) {
    const std::size_t slash = path.find('/', std::string("/sequences/").size());
    const std::string rel = slash == std::string::npos ? "" : path.substr(slash + 1);
    check_finite = !rel.empty();
    for (const char* layout : {"points/", "grids/", "rest/", "uv/", "time"})
      if (rel.rfind(layout, 0) == 0) check_finite = false;
  }
  hsize_t row = 1;
  for (int d = 1; d < rank; ++d) row *= dims[static_cast<std::size_t>(d)];
  const hsize_t rows_per_slab =
      std::max<hsize_t>(1, (hsize_t{16} << 20) / std::max<hsize_t>(1, row * element));
  std::vector<unsigned char> buffer;
  for (hsize_t first = 0; first < dims[0]; first += rows_per_slab) {
    std::vector<hsize_t> start(dims.size(), 0), count = dims;
    start[0] = first;
    count[0] = std::min(rows_per_slab, dims[0] - first);
    buffer.resize(static_cast<std::size_t>(count[0] * row) * element);
    Handle memory(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
    h5::check_status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                         count.data(), nullptr),
                     where + ": cannot select rows");
    if (H5Dread(obj.get(), native.get(), memory.get(), space.get(), H5P_DEFAULT, buffer.data()) < 0)
      throw_unreadable_row(file, path, where, obj.get(), native.get(), dims, first, count[0],
                           per_frame);
    if (check_finite) {
      const std::size_t n = buffer.size() / element;
      for (std::size_t i = 0; i < n; ++i) {
        double v = 0;
        if (element == sizeof(float)) {
          float x = 0;
          std::memcpy(&x, buffer.data() + i * element, element);
          v = x;
        } else {
          std::memcpy(&v, buffer.data() + i * element, element);
        }
        if (!std::isfinite(v))
          throw IoError(where + ": row " + std::to_string(first + i / row) +
                        " holds NaN or infinity; expected finite numbers, as in every float "
                        "array of a sequence");
      }
    }
  }
}

}  // namespace

void check_cache(const std::filesystem::path& path,
                 const std::function<void(const std::string&, std::size_t)>& on_sequence) {
  const h5::ReadScope reading(path.string());
  CacheReader r(path);
  {
    Handle file = h5::check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()),
                               H5Fclose, path.string() + ": cannot open");
    std::set<haddr_t> seen;
    read_every_object(file.get(), "/", path.string(), seen);
  }
  for (const auto& name : r.sequence_names()) {
    const SequenceReader s = r.sequence(name);
    const std::string where = path.string() + ": /sequences/" + name + "/";
    const auto finite = [&](const std::vector<double>& values, const std::string& rel) {
      for (std::size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]))
          throw IoError(where + rel + ": element " + std::to_string(i) + " is " +
                        std::to_string(values[i]) + ", expected a finite number");
    };
    std::vector<std::string> per_frame;
    for (const auto& a : s.point_arrays()) {
      const std::string rel = "points/" + a;
      if (s.is_per_frame(rel))
        per_frame.push_back(rel);
      else
        finite(s.read_static<double>(rel).data, rel);
    }
    for (const auto& g : s.grids()) per_frame.push_back("grids/" + g);
    if (s.has("rest/position"))
      finite(s.read_static<double>("rest/position").data, "rest/position");
    for (const auto& t : s.topologies()) (void)s.topology(t);  // checks index ranges
    if (s.has("uv/coordinates")) (void)s.uv_coordinates();     // checks they are finite
    for (const char* k : {"triangles", "quads"})
      if (s.has(std::string("uv/") + k)) (void)s.uv_corners(k);
    for (std::size_t f = 0; f < s.frame_count(); ++f) {
      for (const auto& rel : per_frame) {
        const Array<double> a = s.read_frame<double>(rel, f);
        for (double v : a.data) {
          if (!std::isfinite(v)) {
            throw IoError(path.string() + ": /sequences/" + name + "/" + rel + ": frame " +
                          std::to_string(s.frames()[f]) + " holds NaN or infinity");
          }
        }
      }
    }
    if (on_sequence) on_sequence(name, s.frame_count());
  }
}

}  // namespace datadyn::io
