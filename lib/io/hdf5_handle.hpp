#pragma once
/// @file
/// Thin RAII and helpers over the HDF5 C API, private to lib/io (never included by a public
/// header). Every failure becomes an IoError whose message names the file and object.

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "io/array.hpp"
#include "io/cache.hpp"

namespace datadyn::io::h5 {

/// Owns an hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      closer_ = o.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Gives up ownership: the caller closes the id.
  hid_t release() { return std::exchange(id_, -1); }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

/// Names what HDF5 reads on this thread while it lives, for the line written if the library
/// crashes on a damaged file (report_hdf5_crashes, io/hdf5_library.hpp). Scopes nest; the
/// innermost names the object. Cheap enough for every attribute.
class ReadScope {
 public:
  /// `what`: the file and object, as in IoError messages ("cache.h5: /sequences/a").
  explicit ReadScope(const std::string& what);
  ~ReadScope();
  ReadScope(const ReadScope&) = delete;
  ReadScope& operator=(const ReadScope&) = delete;

 private:
  std::string line_;
  const std::string* outer_;
};

/// Turns off HDF5's printing of its error stack (we report errors ourselves). Idempotent.
void silence_errors();
/// The most specific message on HDF5's error stack ("" if none); clears the stack.
std::string last_error();
/// HDF5's description of an error as a message says it: the file driver's write and read
/// failures ("file write failed: time = ..., errno = 28, error message = 'No space left on
/// device', buf = 0x..., bytes actually written = 18446744073709551615, ...") become "file write
/// failed: No space left on device"; anything else is kept, on one line.
std::string readable_error(std::string text);

Handle check_id(hid_t id, Handle::Closer closer, const std::string& what);
void check_status(herr_t status, const std::string& what);

hid_t memory_type(ElementType t);
hid_t file_type(ElementType t);
/// Element type that holds a dataset of the given HDF5 type without loss, if it is one we read.
bool classify(hid_t type, ElementType& out);

Handle string_type();
Handle group_create_plist();
/// File access properties for every file io opens or creates. HDF5 grows each open file's
/// metadata cache up to 32 MB by default, keeping the object headers and chunk indices of
/// datasets long closed: writing 4,000 sequences peaked at 289 MB, and the canonical copy, which
/// reads one file and writes another, twice that. Here it is held at 1 MB: the same run peaks at
/// 41 MB. The file's bytes do not depend on it (compared with the default on caches of 480 and
/// 1,000 sequences).
Handle file_access_plist();

/// Opens `path` (absolute within the file) if it is a group, or creates it and its parents.
Handle ensure_group(hid_t file, const std::string& path, const std::string& file_name);

void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     const std::string& where);
AttributeValue read_attribute(hid_t object, const std::string& name, const std::string& where);
/// The names of an object's attributes, or of a group's links; a listing HDF5 cannot finish
/// (damaged metadata) throws IoError naming `where` instead of returning part of it.
std::vector<std::string> attribute_names(hid_t object, const std::string& where);
std::vector<std::string> child_names(hid_t group, const std::string& where);
Shape dataset_shape(hid_t dataset);
/// Throws IoError naming `where` when a dataset that holds elements has storage for only part of
/// them (or none): the tools write every element, so its shape was damaged (a flipped bit made
/// 8 x 36 weights 910,533,066,760 x 36) or the file was cut short. Checked before reading, where
/// such a shape hung a read of fill values or ran out of memory without naming the dataset.
void check_fully_written(hid_t dataset, const std::string& where);
/// Whether every link of `path` exists; a lookup HDF5 cannot do (damaged metadata) throws
/// IoError naming the file and the link rather than answering false.
bool link_exists(hid_t file, const std::string& path);
/// Whether `object` has the attribute `name`; a lookup HDF5 cannot do (a damaged object header)
/// throws IoError naming `where` and the attribute rather than answering false.
bool attribute_exists(hid_t object, const std::string& name, const std::string& where);
/// Whether `group` has a link `name` (one name, no path); a lookup HDF5 cannot do throws IoError
/// naming `where` (the file and the link's path).
bool child_exists(hid_t group, const std::string& name, const std::string& where);

}  // namespace datadyn::io::h5
