#pragma once
/// @file
/// How the cache writer lays out datasets, shared with the canonical copy and the merge of
/// shard outputs (cache_merge.cpp) so that both produce what a single writer would. Private to
/// lib/io.

#include <filesystem>
#include <string>
#include <vector>

#include "io/hdf5_handle.hpp"

namespace datadyn::io::detail {

/// Bytes per element of a file type.
size_t element_size(ElementType t);
/// Dataset creation properties of every cache dataset: object times off; with a chunk shape,
/// chunked, and shuffle + deflate when `deflate` > 0.
h5::Handle dataset_create_plist(const std::vector<hsize_t>& chunk, int deflate);
/// The creation properties of an existing dataset, for a copy of it: HDF5 does not report that
/// object times were off, so they are turned off again here.
h5::Handle creation_plist_of(hid_t dataset);
/// "/a/b" for "/a/b/c"; "/" for "/c".
std::string parent_of(const std::string& path);
/// Writes a whole array as a new dataset at absolute path `path`, chunked in about 1 MiB slabs
/// along axis 0 (as CacheWriter::write_array and SequenceWriter::write_static do).
void write_dataset(hid_t file, const std::string& file_name, const std::string& path,
                   const ArrayView& data, ElementType ftype, int deflate);

/// Creates an empty cache file with the writer's file creation properties.
h5::Handle create_cache_file(const std::filesystem::path& path, const std::string& file_name);

/// Copies one chunk raw (still compressed) from dataset `from` at `from_offset` to dataset `to`
/// at `to_offset`, through `buffer`. Returns false, copying nothing, if `from` has no chunk
/// there (never written). Throws IoError naming from_where / to_where.
bool copy_chunk(hid_t from, const hsize_t* from_offset, hid_t to, const hsize_t* to_offset,
                std::vector<unsigned char>& buffer, const std::string& from_where,
                const std::string& to_where);

/// Copies dataset `from_ds` as `name` under group `to_parent`: same type, shape, creation
/// properties and attributes (by name); chunks copied raw in offset order. Errors name
/// `from_where` for what is read, `to_where` for what is written (a full disk names the output).
void copy_dataset(hid_t from_ds, hid_t to_parent, const std::string& name,
                  const std::string& from_where, const std::string& to_where);

/// Rewrites the HDF5 file `from` into `to` in a canonical order: groups, datasets and attributes
/// by name, chunks by their offsets, copied raw (no recompression). Two files with the same
/// groups, attributes, dataset properties and chunk contents - however and in whatever order
/// they were written - give the same bytes. Throws IoError naming `file_name` and the object.
void write_canonical_copy(const std::filesystem::path& from, const std::filesystem::path& to,
                          const std::string& file_name);

}  // namespace datadyn::io::detail
