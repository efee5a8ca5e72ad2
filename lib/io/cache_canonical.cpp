// The canonical rewrite of a cache (cache_layout.hpp). HDF5 places objects and chunks in the
// order they are written, so the same content written sequence by sequence, frame by frame, or
// merged from shards would give different bytes. Copying into a fresh file in name order, with
// chunks copied raw in offset order, removes the history and keeps only the content.

#include <algorithm>
#include <vector>

#include "core/errors.hpp"
#include "io/cache_layout.hpp"

namespace datadyn::io::detail {

namespace {

using h5::Handle;

void copy_attributes(hid_t from, hid_t to, const std::string& from_where,
                     const std::string& to_where) {
  for (const auto& name : h5::attribute_names(from, from_where))  // by name (H5_INDEX_NAME)
    h5::write_attribute(to, name, h5::read_attribute(from, name, from_where), to_where);
}

void copy_group(hid_t from, hid_t to, const std::string& path, const std::string& file_name) {
  copy_attributes(from, to, file_name + ": " + path, file_name + ": " + path);
  for (const auto& name : h5::child_names(from, file_name + ": " + path)) {  // by name
    const std::string child = (path == "/" ? "/" : path + "/") + name;
    H5O_info_t info;
    h5::check_status(H5Oget_info_by_name2(from, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT),
                     file_name + ": " + child + ": cannot read");
    if (info.type == H5O_TYPE_GROUP) {
      Handle g(H5Gopen2(from, name.c_str(), H5P_DEFAULT), H5Gclose);
      Handle gcpl = h5::group_create_plist();
      Handle copy = h5::check_id(H5Gcreate2(to, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                                 H5Gclose, file_name + ": " + child + ": cannot create group");
      copy_group(g.get(), copy.get(), child, file_name);
    } else if (info.type == H5O_TYPE_DATASET) {
      Handle ds = h5::check_id(H5Dopen2(from, name.c_str(), H5P_DEFAULT), H5Dclose,
                               file_name + ": " + child + ": cannot open");
      copy_dataset(ds.get(), to, name, file_name + ": " + child, file_name + ": " + child);
    } else {
      throw IoError(file_name + ": " + child + ": neither a group nor a dataset");
    }
  }
}

}  // namespace

bool copy_chunk(hid_t from, const hsize_t* from_offset, hid_t to, const hsize_t* to_offset,
                std::vector<unsigned char>& buffer, const std::string& from_where,
                const std::string& to_where) {
  hsize_t bytes = 0;
  if (H5Dget_chunk_storage_size(from, from_offset, &bytes) < 0 || bytes == 0) return false;
  buffer.resize(static_cast<size_t>(bytes));
  uint32_t mask = 0;
  h5::check_status(H5Dread_chunk(from, H5P_DEFAULT, from_offset, &mask, buffer.data()),
                   from_where + ": cannot read a chunk (damaged file?)");
  h5::check_status(
      H5Dwrite_chunk(to, H5P_DEFAULT, mask, to_offset, static_cast<size_t>(bytes), buffer.data()),
      to_where + ": cannot write a chunk");
  return true;
}

void copy_dataset(hid_t from_ds, hid_t to_parent, const std::string& name,
                  const std::string& from_where, const std::string& to_where) {
  const std::string& where = from_where;
  Handle type(H5Dget_type(from_ds), H5Tclose);
  Handle space(H5Dget_space(from_ds), H5Sclose);
  Handle dcpl = detail::creation_plist_of(from_ds);
  if (!type.valid() || !space.valid() || !dcpl.valid())
    throw IoError(where + ": cannot read its type, shape or creation properties");
  Handle to_ds = h5::check_id(H5Dcreate2(to_parent, name.c_str(), type.get(), space.get(),
                                         H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                              H5Dclose, to_where + ": cannot create the copy");
  copy_attributes(from_ds, to_ds.get(), from_where, to_where);

  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    hsize_t count = 0;
    h5::check_status(H5Dget_num_chunks(from_ds, space.get(), &count), where + ": chunk count");
    std::vector<std::vector<hsize_t>> offsets;
    offsets.reserve(count);
    for (hsize_t i = 0; i < count; ++i) {
      std::vector<hsize_t> offset(static_cast<size_t>(rank));
      unsigned mask = 0;
      haddr_t address = 0;
      hsize_t bytes = 0;
      h5::check_status(
          H5Dget_chunk_info(from_ds, space.get(), i, offset.data(), &mask, &address, &bytes),
          where + ": chunk info");
      offsets.push_back(std::move(offset));
    }
    std::sort(offsets.begin(), offsets.end());
    std::vector<unsigned char> buffer;
    for (const auto& offset : offsets)
      copy_chunk(from_ds, offset.data(), to_ds.get(), offset.data(), buffer, from_where, to_where);
    return;
  }
  // Contiguous or compact: small arrays; read and write whole in the file's own type.
  const hssize_t elements = H5Sget_simple_extent_npoints(space.get());
  if (elements <= 0) return;
  std::vector<unsigned char> buffer(static_cast<size_t>(elements) * H5Tget_size(type.get()));
  h5::check_status(H5Dread(from_ds, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
                   where + ": cannot read");
  h5::check_status(H5Dwrite(to_ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
                   to_where + ": cannot write");
}

void write_canonical_copy(const std::filesystem::path& from, const std::filesystem::path& to,
                          const std::string& file_name) {
  Handle in = h5::check_id(H5Fopen(from.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()),
                           H5Fclose, file_name + ": cannot reopen " + from.string());
  Handle out = create_cache_file(to, file_name);
  Handle in_root(H5Gopen2(in.get(), "/", H5P_DEFAULT), H5Gclose);
  Handle out_root(H5Gopen2(out.get(), "/", H5P_DEFAULT), H5Gclose);
  copy_group(in_root.get(), out_root.get(), "/", file_name);
  out_root.reset();
  h5::check_status(H5Fflush(out.get(), H5F_SCOPE_GLOBAL), file_name + ": cannot flush");
  const hid_t id = out.release();
  h5::check_status(H5Fclose(id), file_name + ": cannot close " + to.string());
}

}  // namespace datadyn::io::detail
