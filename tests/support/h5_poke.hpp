#pragma once
/// @file
/// Writes one value into a float dataset of an existing HDF5 file, through the HDF5 C API: the
/// cache writer refuses non-finite values, so tests of readers that must catch them make their
/// damaged files this way.

#include <hdf5.h>

#include <filesystem>
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

}  // namespace datadyn::test
