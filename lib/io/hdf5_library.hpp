#pragma once
// What a tool sets up in the HDF5 library before using it (without including hdf5.h).

namespace datadyn::io {

/// Keeps the HDF5 library from closing, at process exit, what is still open. A file whose close
/// failed (a full disk, a file-size limit) stays registered, and the library's exit-time cleanup
/// then crashes on it (HDF5 1.10: a segfault after the tool had reported the error and was
/// exiting 1). Every file a tool writes is closed explicitly before it is renamed into place, so
/// nothing depends on that cleanup. Call first, before any other HDF5 function (Tool::run does).
void skip_hdf5_cleanup_at_exit();

}  // namespace datadyn::io
