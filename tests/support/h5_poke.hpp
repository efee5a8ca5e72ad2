#pragma once
/// @file
/// Damages an existing HDF5 file through the HDF5 C API: one value of a float dataset (the cache
/// writer refuses non-finite values, so tests of readers that must catch them make their damaged
/// files this way), or a stored chunk's bytes.

#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace datadyn::test {

/// Sets element `index` (C order, over the whole dataset) of the float dataset at `path` to `v`.
inline void poke_float(const std::filesystem::path& file, const std::string& path,
                       std::size_t index, double v) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) throw std::runtime_error(file.string() + ": cannot open");
  const hid_t ds = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  const hid_t space = ds < 0 ? -1 : H5Dget_space(ds);
  const hssize_t n = space < 0 ? 0 : H5Sget_simple_extent_npoints(space);
  std::vector<double> data(static_cast<std::size_t>(n));
  const bool ok = ds >= 0 && index < data.size() &&
                  H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  if (ok) data[index] = v;
  const bool written =
      ok && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  if (space >= 0) H5Sclose(space);
  if (ds >= 0) H5Dclose(ds);
  H5Fclose(f);
  if (!written) throw std::runtime_error(file.string() + ": " + path + ": cannot write element");
}

/// Sets the float64 attribute `name` of the object at `path` to `v`, as another writer (or a
/// damaged file) could have left it.
inline void poke_double_attribute(const std::filesystem::path& file, const std::string& path,
                                  const std::string& name, double v) {
  // Deleted and made again: H5Awrite on the caches' attributes fails in HDF5 1.10 ("can't locate
  // open attribute?"), their creation order being tracked.
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const bool deleted = f >= 0 && H5Adelete_by_name(f, path.c_str(), name.c_str(), H5P_DEFAULT) >= 0;
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = deleted ? H5Acreate_by_name(f, path.c_str(), name.c_str(), H5T_IEEE_F64LE, space,
                                              H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                          : -1;
  const bool written = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  if (f >= 0) H5Fclose(f);
  if (!written)
    throw std::runtime_error(file.string() + ": " + path + "@" + name + ": cannot write");
}

/// Removes the attribute `name` of the object at `path`, as a writer that never set it leaves it.
inline void delete_attribute(const std::filesystem::path& file, const std::string& path,
                             const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const bool deleted = f >= 0 && H5Adelete_by_name(f, path.c_str(), name.c_str(), H5P_DEFAULT) >= 0;
  if (f >= 0) H5Fclose(f);
  if (!deleted)
    throw std::runtime_error(file.string() + ": " + path + "@" + name + ": cannot delete");
}

/// Overwrites the middle of stored chunk `chunk` of `dataset` with a byte pattern, as a bad
/// sector or a bit rot would: the chunk no longer inflates.
inline void damage_chunk(const std::filesystem::path& file, const std::string& dataset,
                         hsize_t chunk = 0) {
  haddr_t address = 0;
  hsize_t size = 0;
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t ds = f < 0 ? -1 : H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    const hid_t space = ds < 0 ? -1 : H5Dget_space(ds);
    hsize_t offset[4] = {0, 0, 0, 0};
    unsigned mask = 0;
    const bool found =
        space >= 0 && H5Dget_chunk_info(ds, space, chunk, offset, &mask, &address, &size) >= 0;
    if (space >= 0) H5Sclose(space);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    if (!found || size <= 16)
      throw std::runtime_error(file.string() + ": " + dataset + ": no chunk to damage");
  }
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(static_cast<std::streamoff>(address + size / 4));
  const std::vector<char> junk(size / 2, '\x5a');
  io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

}  // namespace datadyn::test
