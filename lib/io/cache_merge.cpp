#include "io/cache_merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "core/frame_list.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/cache_layout.hpp"
#include "io/cache_summary.hpp"
#include "io/temporary_files.hpp"

namespace datadyn::io {

namespace {

/// "= a differs from f's b" for short values; for long ones (a config's JSON) the first place
/// they differ, with a little text around it: "differs at character 212 (...l0\":0.0125...
/// against ...l0\":0.025...) from f's".
std::string difference(const AttributeValue& a, const AttributeValue& b,
                       const std::string& b_file) {
  if (attribute_string(a).size() + attribute_string(b).size() <= 160)
    return "= " + attribute_string(a) + " differs from " + b_file + "'s " + attribute_string(b);
  const auto text = [](const AttributeValue& v) {
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : attribute_string(v);
  };
  const std::string x = text(a), y = text(b);
  std::size_t at = 0;
  while (at < x.size() && at < y.size() && x[at] == y[at]) ++at;
  const std::size_t from = at > 30 ? at - 30 : 0;
  return "differs at character " + std::to_string(at + 1) + " (..." + x.substr(from, 60) +
         "... against ..." + y.substr(from, 60) + "...) from " + b_file + "'s";
}

using h5::Handle;

/// One input's object at a path.
struct Source {
  std::size_t input;  // index into the inputs
  hid_t id;           // group or dataset, owned elsewhere
};

/// Merged frame order of one frame group: row j of the result is row `row` of input `input`.
struct FrameOrder {
  struct Row {
    std::int64_t frame;
    std::size_t input, row;
  };
  std::vector<Row> rows;
  std::size_t inputs_used = 0;
};

struct Merger {
  std::vector<std::filesystem::path> inputs;
  std::vector<Handle> files;
  std::string out_name;
  MergeResult result;
  ProgressCallback progress;
  std::size_t chunks_total = 0;  // per-frame chunks of the inputs' sequences
  std::size_t chunks_done = 0;
  std::vector<std::set<haddr_t>> visited;  // per input: the groups merged so far

  void poll() const {
    if (progress) progress(chunks_done, chunks_total);
  }

  std::string name(std::size_t input) const { return inputs[input].string(); }

  static std::string join(const std::string& path, const std::string& child) {
    return (path == "/" ? "/" : path + "/") + child;
  }

  static H5O_type_t object_type(hid_t group, const std::string& child) {
    H5O_info_t info;
    if (H5Oget_info_by_name2(group, child.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
      return H5O_TYPE_UNKNOWN;
    return info.type;
  }

  /// Raw content of a dataset in its file type.
  std::vector<unsigned char> read_raw(hid_t ds, const std::string& where) const {
    const h5::ReadScope reading(where);
    h5::check_fully_written(ds, where);
    Handle type(H5Dget_type(ds), H5Tclose);
    Handle space(H5Dget_space(ds), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::vector<unsigned char> buffer(static_cast<size_t>(std::max<hssize_t>(n, 0)) *
                                      H5Tget_size(type.get()));
    if (n > 0)
      h5::check_status(H5Dread(ds, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
                       where + ": cannot read");
    return buffer;
  }

  static bool same_type(hid_t a, hid_t b) {
    Handle ta(H5Dget_type(a), H5Tclose), tb(H5Dget_type(b), H5Tclose);
    return H5Tequal(ta.get(), tb.get()) > 0;
  }

  void merge_attributes(const std::vector<Source>& sources, hid_t to, const std::string& path,
                        const std::vector<std::string>& skip = {}) const {
    std::map<std::string, std::pair<AttributeValue, std::size_t>> seen;
    for (const auto& s : sources) {
      auto names = h5::attribute_names(s.id, name(s.input) + ": " + path);
      // Files of two tools differ first in their generator, which says so in a few words (the
      // configs' difference was 2 kB of JSON).
      std::stable_partition(names.begin(), names.end(),
                            [](const std::string& a) { return a == "generator"; });
      for (const auto& a : names) {
        if (std::find(skip.begin(), skip.end(), a) != skip.end()) continue;
        AttributeValue v = h5::read_attribute(s.id, a, name(s.input) + ": " + path);
        auto it = seen.find(a);
        if (it == seen.end()) {
          seen.emplace(a, std::make_pair(std::move(v), s.input));
        } else if (path == "/" && a == "incomplete") {
          // Each shard a failed run kept says what it lacks: the merge says all of it.
          if (!(it->second.first == v))
            it->second.first =
                std::get<std::string>(it->second.first) + "; " + std::get<std::string>(v);
        } else if (!(it->second.first == v)) {
          throw IoError(name(s.input) + ": " + path + ": attribute " + a + " " +
                        difference(v, it->second.first, name(it->second.second)) +
                        " (shards of one run agree on everything but their frames)");
        }
      }
    }
    for (const auto& [a, v] : seen) h5::write_attribute(to, a, v.first, out_name + ": " + path);
  }

  /// The merged order of the frames of a frame group (each source has a `frame` dataset).
  FrameOrder frame_order(const std::vector<Source>& sources, const std::string& path) const {
    FrameOrder order;
    for (const auto& s : sources) {
      const h5::ReadScope reading(name(s.input) + ": " + join(path, "frame"));
      Handle ds = h5::check_id(H5Dopen2(s.id, "frame", H5P_DEFAULT), H5Dclose,
                               name(s.input) + ": " + join(path, "frame") + ": cannot open");
      const Shape shape = h5::dataset_shape(ds.get());
      std::vector<std::int64_t> frames(shape.empty() ? 0 : shape[0]);
      if (!frames.empty())
        h5::check_status(
            H5Dread(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, frames.data()),
            name(s.input) + ": " + join(path, "frame") + ": cannot read");
      for (std::size_t r = 0; r < frames.size(); ++r) order.rows.push_back({frames[r], s.input, r});
      order.inputs_used += frames.empty() ? 0 : 1;
    }
    std::stable_sort(order.rows.begin(), order.rows.end(),
                     [](const auto& a, const auto& b) { return a.frame < b.frame; });
    for (std::size_t j = 1; j < order.rows.size(); ++j)
      if (order.rows[j].frame == order.rows[j - 1].frame)
        throw IoError(name(order.rows[j].input) + ": " + path + ": frame " +
                      std::to_string(order.rows[j].frame) + " is also in " +
                      name(order.rows[j - 1].input) + " (shards must not overlap)");
    return order;
  }

  /// The merged frames' numbers in order.
  static std::vector<std::int64_t> frame_numbers(const FrameOrder& order) {
    std::vector<std::int64_t> frames;
    for (const auto& row : order.rows) frames.push_back(row.frame);
    return frames;
  }

  /// Whether frames (ascending) miss some between their first and last: their steps differ.
  static bool has_gaps(const std::vector<std::int64_t>& frames) {
    for (std::size_t j = 2; j < frames.size(); ++j)
      if (frames[j] - frames[j - 1] != frames[1] - frames[0]) return true;
    return false;
  }

  /// Opens `child` in every source that has it.
  std::vector<Handle> open_all(const std::vector<Source>& sources, const std::string& child,
                               bool group, std::vector<Source>& opened,
                               const std::string& path) const {
    std::vector<Handle> handles;
    std::optional<H5O_type_t> kind;
    for (const auto& s : sources) {
      const h5::ReadScope reading(name(s.input) + ": " + path);
      // Listed by some input; a lookup that fails is damage, not "this input lacks it" (the
      // merge would have left the input's part out).
      if (!h5::child_exists(s.id, child, name(s.input) + ": " + path)) continue;
      const H5O_type_t t = object_type(s.id, child);
      if (kind && *kind != t)
        throw IoError(name(s.input) + ": " + path + ": a group in one input, a dataset in another");
      kind = t;
      if (t != (group ? H5O_TYPE_GROUP : H5O_TYPE_DATASET)) continue;
      hid_t id = group ? H5Gopen2(s.id, child.c_str(), H5P_DEFAULT)
                       : H5Dopen2(s.id, child.c_str(), H5P_DEFAULT);
      handles.push_back(h5::check_id(id, group ? H5Gclose : H5Dclose,
                                     name(s.input) + ": " + path + ": cannot open"));
      opened.push_back({s.input, handles.back().get()});
    }
    return handles;
  }

  /// A dataset that is the same in every input: checked, then copied once.
  void merge_static(const std::vector<Source>& sources, hid_t to, const std::string& child,
                    const std::string& path) const {
    const auto first = read_raw(sources[0].id, name(sources[0].input) + ": " + path);
    const Shape shape = h5::dataset_shape(sources[0].id);
    for (std::size_t k = 1; k < sources.size(); ++k) {
      if (!same_type(sources[0].id, sources[k].id) || h5::dataset_shape(sources[k].id) != shape ||
          read_raw(sources[k].id, name(sources[k].input) + ": " + path) != first)
        throw IoError(name(sources[k].input) + ": " + path + ": differs from " +
                      name(sources[0].input) +
                      "'s (shards of one run share every array that is not per frame)");
    }
    detail::copy_dataset(sources[0].id, to, child, name(sources[0].input) + ": " + path,
                         out_name + ": " + path);
  }

  /// A per-frame array of a sequence: created with the first input's properties at the merged
  /// frame count, its one-frame chunks copied raw from the inputs in frame order.
  void merge_frame_chunks(const std::vector<Source>& sources, hid_t to, const std::string& child,
                          const std::string& path, const FrameOrder& order) {
    const hid_t ds0 = sources[0].id;
    Handle type(H5Dget_type(ds0), H5Tclose);
    Handle dcpl = detail::creation_plist_of(ds0);
    Handle space0(H5Dget_space(ds0), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space0.get());
    std::vector<hsize_t> dims(static_cast<size_t>(rank)), maxdims(dims.size()), chunk(dims.size());
    H5Sget_simple_extent_dims(space0.get(), dims.data(), maxdims.data());
    if (rank < 1 || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
        H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank || chunk[0] != 1)
      throw IoError(name(sources[0].input) + ": " + path +
                    ": expected a per-frame array stored one chunk per frame");
    std::vector<hid_t> by_input(inputs.size(), -1);
    for (const auto& s : sources) {
      const Shape shape = h5::dataset_shape(s.id);
      if (!same_type(ds0, s.id) ||
          !std::equal(shape.begin() + 1, shape.end(), dims.begin() + 1, dims.end()))
        throw IoError(name(s.input) + ": " + path + ": type or per-frame shape differs from " +
                      name(sources[0].input) + "'s");
      by_input[s.input] = s.id;
    }
    dims[0] = order.rows.size();
    Handle space(H5Screate_simple(rank, dims.data(), maxdims.data()), H5Sclose);
    Handle out = h5::check_id(H5Dcreate2(to, child.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                         dcpl.get(), H5P_DEFAULT),
                              H5Dclose, out_name + ": " + path + ": cannot create dataset");
    merge_attributes(sources, out.get(), path);
    std::vector<hsize_t> from(dims.size(), 0), at(dims.size(), 0);
    std::vector<unsigned char> buffer;
    for (std::size_t j = 0; j < order.rows.size(); ++j) {
      poll();
      const auto& r = order.rows[j];
      const hid_t ds = by_input[r.input];
      const std::string where = name(r.input) + ": " + path + ": frame " + std::to_string(r.frame);
      if (ds < 0) throw IoError(where + ": missing (the sequence's other arrays have it)");
      from[0] = r.row;
      at[0] = j;
      // An empty frame (no points) has no chunk to copy.
      detail::copy_chunk(ds, from.data(), out.get(), at.data(), buffer, where,
                         out_name + ": " + path);
      ++chunks_done;
    }
    poll();
  }

  /// A per-frame array stored whole (a sequence's time and frame, the tables of frame groups
  /// outside /sequences): rows gathered in frame order and written as the writer writes them.
  void merge_frame_rows(const std::vector<Source>& sources, hid_t to, const std::string& child,
                        const std::string& path, const FrameOrder& order, bool extendible) const {
    const hid_t ds0 = sources[0].id;
    Handle type(H5Dget_type(ds0), H5Tclose);
    Handle dcpl = detail::creation_plist_of(ds0);
    const Shape shape0 = h5::dataset_shape(ds0);
    if (shape0.empty()) throw IoError(name(sources[0].input) + ": " + path + ": expected [F, ...]");
    std::size_t row_bytes = H5Tget_size(type.get());
    for (std::size_t d = 1; d < shape0.size(); ++d) row_bytes *= shape0[d];
    std::vector<std::vector<unsigned char>> data(inputs.size());
    for (const auto& s : sources) {
      const Shape shape = h5::dataset_shape(s.id);
      if (!same_type(ds0, s.id) || shape.size() != shape0.size() ||
          !std::equal(shape.begin() + 1, shape.end(), shape0.begin() + 1))
        throw IoError(name(s.input) + ": " + path + ": type or row shape differs from " +
                      name(sources[0].input) + "'s");
      data[s.input] = read_raw(s.id, name(s.input) + ": " + path);
    }
    std::vector<unsigned char> merged(order.rows.size() * row_bytes);
    for (std::size_t j = 0; j < order.rows.size(); ++j) {
      const auto& r = order.rows[j];
      if ((r.row + 1) * row_bytes > data[r.input].size())
        throw IoError(name(r.input) + ": " + path + ": fewer rows than the group's frames");
      std::memcpy(merged.data() + j * row_bytes, data[r.input].data() + r.row * row_bytes,
                  row_bytes);
    }
    Shape shape = shape0;
    shape[0] = order.rows.size();
    if (extendible) {
      std::vector<hsize_t> dims(shape.begin(), shape.end()), maxdims(dims);
      maxdims[0] = H5S_UNLIMITED;
      Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()),
                   H5Sclose);
      Handle out = h5::check_id(H5Dcreate2(to, child.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                           dcpl.get(), H5P_DEFAULT),
                                H5Dclose, out_name + ": " + path + ": cannot create dataset");
      if (!merged.empty())
        h5::check_status(
            H5Dwrite(out.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, merged.data()),
            out_name + ": " + path + ": cannot write");
      merge_attributes(sources, out.get(), path);
      return;
    }
    // Written by CacheWriter::write_array: the same chunking rule and deflate level.
    ElementType et;
    if (!h5::classify(type.get(), et))
      throw IoError(name(sources[0].input) + ": " + path + ": unsupported element type");
    int deflate = 0;
    for (int f = 0; f < H5Pget_nfilters(dcpl.get()); ++f) {
      unsigned flags = 0, values[4] = {0, 0, 0, 0};
      size_t n = 4;
      if (H5Pget_filter2(dcpl.get(), static_cast<unsigned>(f), &flags, &n, values, 0, nullptr,
                         nullptr) == H5Z_FILTER_DEFLATE)
        deflate = n > 0 ? static_cast<int>(values[0]) : 0;
    }
    // The view's memory type is the file type: write_dataset converts nothing.
    ArrayView view{merged.data(), et, shape};
    detail::write_dataset(to, out_name, path, view, et, deflate);
    Handle out(H5Dopen2(to, child.c_str(), H5P_DEFAULT), H5Dclose);
    merge_attributes(sources, out.get(), path);
  }

  void merge_group(const std::vector<Source>& sources, hid_t to, const std::string& path,
                   const FrameOrder* frames_of_parent, bool in_sequence) {
    const bool is_sequence = path.rfind("/sequences/", 0) == 0 &&
                             path.find('/', std::string("/sequences/").size()) == std::string::npos;
    // A group with a `frame` dataset orders its per-frame arrays.
    std::optional<FrameOrder> own;
    bool has_frame = false;
    for (const auto& s : sources)
      has_frame = has_frame ||
                  (h5::child_exists(s.id, "frame", name(s.input) + ": " + join(path, "frame")) &&
                   object_type(s.id, "frame") == H5O_TYPE_DATASET);
    if (has_frame && (is_sequence || !in_sequence)) {
      own = frame_order(sources, path);
      if (is_sequence) {
        ++result.sequences;
        result.frames += own->rows.size();
        result.split_sequences += own->inputs_used > 1 ? 1 : 0;
        if (const auto frames = frame_numbers(*own); has_gaps(frames))
          result.gaps.push_back(path.substr(std::string("/sequences/").size()) + ": frames " +
                                frame_list_text(frames));
      }
    }
    // A cache links each group once; a hard link back to a group above made the merge copy
    // the loop until the disk or the memory ran out.
    for (const auto& s : sources) {
      H5O_info_t info;
      h5::check_status(H5Oget_info2(s.id, &info, H5O_INFO_BASIC),
                       name(s.input) + ": " + path + ": cannot read");
      if (!visited[s.input].insert(info.addr).second)
        throw IoError(name(s.input) + ": " + path +
                      ": a second link to a group already merged (a link back to a group above "
                      "it?); a cache links each group once");
    }
    const FrameOrder* frames = own ? &*own : frames_of_parent;
    const bool sequence_scope = in_sequence || is_sequence;
    if (path != "/") merge_attributes(sources, to, path);

    std::vector<std::string> children;
    for (const auto& s : sources)
      for (auto& c : h5::child_names(s.id, name(s.input) + ": " + path))
        children.push_back(std::move(c));
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    for (const auto& child : children) {
      poll();
      const std::string child_path = join(path, child);
      std::vector<Source> groups;
      auto group_handles = open_all(sources, child, true, groups, child_path);
      if (!groups.empty()) {
        Handle gcpl = h5::group_create_plist();
        Handle g = h5::check_id(H5Gcreate2(to, child.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                                H5Gclose, out_name + ": " + child_path + ": cannot create group");
        merge_group(groups, g.get(), child_path, frames, sequence_scope);
        continue;
      }
      std::vector<Source> datasets;
      auto dataset_handles = open_all(sources, child, false, datasets, child_path);
      if (datasets.empty()) continue;
      if (sequence_scope && frames) {
        const bool row_array = own && (child == "time" || child == "frame");
        // The attribute's presence marks a per-frame array, as the cache reader takes it (its
        // value was read as an integer, and a string there failed as "wrong index for variant").
        const bool per_frame = h5::attribute_exists(datasets[0].id, "per_frame",
                                                    name(datasets[0].input) + ": " + child_path);
        if (row_array) {
          merge_frame_rows(datasets, to, child, child_path, *frames, true);
        } else if (per_frame) {
          merge_frame_chunks(datasets, to, child, child_path, *frames);
        } else {
          merge_static(datasets, to, child, child_path);
        }
      } else if (own) {
        merge_frame_rows(datasets, to, child, child_path, *own, false);
      } else {
        merge_static(datasets, to, child, child_path);
      }
    }
  }
};

}  // namespace

MergeResult merge_caches(const std::vector<std::filesystem::path>& inputs,
                         const std::filesystem::path& output,
                         const std::function<std::string(const std::string&)>& command_line,
                         const ProgressCallback& progress) {
  if (inputs.empty()) throw IoError("merge: no input caches");
  // As every writer does before any work: the merged file is renamed over whatever is at
  // `output`, and /dev/null or a directory must not be replaced.
  require_directory(output);
  check_replaceable(output);
  Merger m;
  m.progress = progress;
  m.inputs = inputs;
  m.out_name = output.string();
  m.visited.resize(inputs.size());
  std::vector<Provenance> provenance;
  for (const auto& in : inputs) {
    // Validates the format and every sequence's shapes, naming file and dataset.
    CacheReader reader(in);
    for (const auto& name : reader.sequence_names()) {
      const SequenceReader s = reader.sequence(name);
      std::size_t per_frame = s.grids().size();
      for (const auto& a : s.point_arrays()) per_frame += s.is_per_frame("points/" + a) ? 1 : 0;
      m.chunks_total += per_frame * s.frame_count();
    }
    provenance.push_back(reader.provenance());
  }
  // Chunks are copied as stored, undecoded: a damaged chunk (one that no longer inflates) or a
  // NaN in an input went into a merged cache that took its name with exit 0. Every frame of
  // every input is read first, naming the shard, the dataset and the frame.
  for (const auto& in : inputs) {
    check_cache(in, [&](const std::string&, std::size_t) { m.poll(); });
    m.poll();
  }
  h5::silence_errors();
  for (const auto& in : inputs) {
    const h5::ReadScope reading(in.string());
    m.files.push_back(
        h5::check_id(H5Fopen(in.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()), H5Fclose,
                     in.string() + ": cannot open"));
  }

  std::filesystem::path tmp = output, canonical;
  tmp += ".tmp-" + std::to_string(::getpid());
  canonical = tmp;
  canonical += "-canonical";
  struct Cleanup {
    std::filesystem::path a, b;
    TemporaryRegistration ra{a}, rb{b};
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove(a, ec);
      std::filesystem::remove(b, ec);  // gone after the rename
    }
  } cleanup{tmp, canonical};
  {
    Handle out = detail::create_cache_file(tmp, m.out_name);
    std::vector<Handle> roots;
    std::vector<Source> sources;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      roots.emplace_back(H5Gopen2(m.files[i].get(), "/", H5P_DEFAULT), H5Gclose);
      sources.push_back({i, roots.back().get()});
    }
    Handle root(H5Gopen2(out.get(), "/", H5P_DEFAULT), H5Gclose);
    m.merge_attributes(sources, root.get(), "/", {"command_line", "created_utc"});
    const std::string where = m.out_name + ": /";
    h5::write_attribute(root.get(), "command_line", command_line(provenance[0].command_line),
                        where);
    h5::write_attribute(root.get(), "created_utc", provenance[0].created_utc, where);
    m.merge_group(sources, root.get(), "/", nullptr, false);
    root.reset();
    h5::check_status(H5Fflush(out.get(), H5F_SCOPE_GLOBAL), m.out_name + ": cannot flush");
    h5::check_status(H5Fclose(out.release()), m.out_name + ": cannot close " + tmp.string());
  }
  detail::write_canonical_copy(tmp, canonical, m.out_name);
  {
    // The result must read as a cache before it takes the real name.
    CacheReader check(canonical);
    for (const auto& s : check.sequence_names()) (void)check.sequence(s);
  }
  refuse_commit_if_stopped(m.out_name);  // the cleanup removes both files
  std::error_code ec;
  std::filesystem::rename(canonical, output, ec);
  if (ec) throw IoError(m.out_name + ": cannot rename the merged file into place: " + ec.message());
  note_committed(output);
  return m.result;
}

}  // namespace datadyn::io
