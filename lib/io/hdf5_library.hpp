#pragma once
// What a tool sets up in the HDF5 library before using it (without including hdf5.h).

#include <string>

namespace datadyn::io {

/// Keeps the HDF5 library from closing, at process exit, what is still open. A file whose close
/// failed (a full disk, a file-size limit) stays registered, and the library's exit-time cleanup
/// then crashes on it (HDF5 1.10: a segfault after the tool had reported the error and was
/// exiting 1). Every file a tool writes is closed explicitly before it is renamed into place, so
/// nothing depends on that cleanup. Call first, before any other HDF5 function (Tool::run does).
void skip_hdf5_cleanup_at_exit();

/// Turns a message into one log line of the tool's (text or JSON, ending in a newline).
using LogLineFormat = std::string (*)(const std::string& message);

/// HDF5 1.10 follows some of a file's metadata without checking it, and a damaged cache can
/// crash the library itself: a root attribute whose name or datatype is damaged ends
/// H5Aiterate2 in a segmentation fault, a damaged global heap ends H5Aread of a string in one.
/// This installs SIGSEGV and SIGBUS handlers for that case: when the faulting instruction is in
/// the HDF5 library, or in the C library under it (a memcpy of H5HG_read), while io reads a
/// file, the process writes a line naming the file and object
/// (`format` makes it when the read starts, never in the handler; its time is that start's),
/// removes its temporary files and exits 1, the code of a bad cache, instead of ending with a
/// bare "Segmentation fault" (exit 139). Any other fault, and a signal sent by another process,
/// goes to the handler there was before (the default action, a core dump where enabled, or a
/// sanitizer's report). Call once, from the main thread.
void report_hdf5_crashes(LogLineFormat format);

}  // namespace datadyn::io
