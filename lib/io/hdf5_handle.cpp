#include "io/hdf5_handle.hpp"

#include <link.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/errors.hpp"
#include "io/hdf5_library.hpp"
#include "io/temporary_files.hpp"

namespace datadyn::io::h5 {

namespace {

LogLineFormat g_line_format = nullptr;  // set by report_hdf5_crashes before any read
// The line to write if HDF5 crashes on this thread now: the innermost ReadScope's. A pointer
// with a constant initializer, so that the signal handler can read it.
thread_local const std::string* t_crash_line = nullptr;

// The machine code of the HDF5 library and of the C library under it (H5HG_read of a damaged
// heap faults in memcpy), found at installation: a crash is the library's only when the
// faulting instruction is in one of them (a scope also covers some of our own code around the
// calls, and a fault there must keep its core dump).
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
constexpr int kMaxRanges = 16;
CodeRange g_library_code[kMaxRanges];
int g_library_ranges = 0;
struct sigaction g_previous[2];  // SIGSEGV's and SIGBUS's handlers before ours

/// dl_iterate_phdr's callback: adds the executable segments of the object holding any of the
/// addresses `probes` points to (a null-terminated list).
int add_library_code(dl_phdr_info* info, std::size_t, void* probes) {
  CodeRange ranges[kMaxRanges];
  int n = 0;
  bool here = false;
  for (int i = 0; i < info->dlpi_phnum && n < kMaxRanges; ++i) {
    const ElfW(Phdr)& h = info->dlpi_phdr[i];
    if (h.p_type != PT_LOAD || !(h.p_flags & PF_X)) continue;
    ranges[n] = {info->dlpi_addr + h.p_vaddr, info->dlpi_addr + h.p_vaddr + h.p_memsz};
    for (auto* p = static_cast<const std::uintptr_t*>(probes); *p != 0; ++p)
      here = here || (*p >= ranges[n].begin && *p < ranges[n].end);
    ++n;
  }
  for (int i = 0; here && i < n && g_library_ranges < kMaxRanges; ++i)
    g_library_code[g_library_ranges++] = ranges[i];
  return 0;
}

/// Whether the instruction that faulted is in HDF5 or the C library; true where that cannot be
/// told (another architecture, or the libraries' code not found).
bool crashed_in_hdf5(const void* context) {
  std::uintptr_t pc = 0;
#if defined(__x86_64__)
  pc = static_cast<std::uintptr_t>(
      static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  pc = static_cast<std::uintptr_t>(static_cast<const ucontext_t*>(context)->uc_mcontext.pc);
#endif
  if (pc == 0 || g_library_ranges == 0) return true;
  for (int i = 0; i < g_library_ranges; ++i)
    if (pc >= g_library_code[i].begin && pc < g_library_code[i].end) return true;
  return false;
}

extern "C" void on_crash(int sig, siginfo_t* info, void* context) {
  const std::string* line = t_crash_line;
  // A signal another process (or raise) sent is no fault: si_code <= 0 (SI_USER, SI_TKILL).
  const bool sent = info == nullptr || info->si_code <= 0;
  if (line == nullptr || sent || !crashed_in_hdf5(context)) {
    // Not HDF5 reading a file: whatever handled the signal before (the default action, or a
    // sanitizer's report). A fault happens again on return; a sent signal is sent again.
    sigaction(sig, &g_previous[sig == SIGSEGV ? 0 : 1], nullptr);
    if (sent) std::raise(sig);
    return;
  }
  (void)!::write(STDERR_FILENO, line->data(), line->size());
  (void)remove_registered_temporaries_after_crash();
  ::_exit(1);
}

}  // namespace

ReadScope::ReadScope(const std::string& what) : outer_(t_crash_line) {
  const std::string message = what + ": the HDF5 library crashed reading this; the file is damaged";
  line_ = g_line_format ? g_line_format(message) : message + "\n";
  t_crash_line = &line_;
}

ReadScope::~ReadScope() {
  t_crash_line = outer_;
}

void silence_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string last_error() {
  std::vector<std::string> messages;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc && *e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
        return 0;
      },
      &messages);
  H5Eclear2(H5E_DEFAULT);
  if (messages.empty()) return {};
  return readable_error(messages.back());
}

std::string readable_error(std::string text) {
  // One log line an error: HDF5's write failure carries a ctime() stamp that ends in a newline
  // ("time = Mon Nov 30 23:02:17 2026\n, filename = ...").
  for (std::size_t at = 0; (at = text.find('\n', at)) != std::string::npos;) text.erase(at, 1);
  // The driver's failures list pointers and a byte count of (size_t)-1 around the reason.
  const std::string key = "error message = '";
  const std::size_t reason = text.find(key), head = text.find(':');
  if (reason == std::string::npos || head == std::string::npos || head > reason) return text;
  const std::size_t begin = reason + key.size(), end = text.find('\'', begin);
  if (end == std::string::npos) return text;
  return text.substr(0, head) + ": " + text.substr(begin, end - begin);
}

Handle check_id(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) {
    const std::string detail = last_error();
    throw IoError(what + (detail.empty() ? "" : " (" + detail + ")"));
  }
  return Handle(id, closer);
}

void check_status(herr_t status, const std::string& what) {
  if (status < 0) {
    const std::string detail = last_error();
    throw IoError(what + (detail.empty() ? "" : " (" + detail + ")"));
  }
}

hid_t memory_type(ElementType t) {
  switch (t) {
    case ElementType::Int8:
      return H5T_NATIVE_INT8;
    case ElementType::UInt8:
      return H5T_NATIVE_UINT8;
    case ElementType::Int32:
      return H5T_NATIVE_INT32;
    case ElementType::Int64:
      return H5T_NATIVE_INT64;
    case ElementType::Float32:
      return H5T_NATIVE_FLOAT;
    case ElementType::Float64:
      return H5T_NATIVE_DOUBLE;
  }
  return -1;
}

hid_t file_type(ElementType t) {
  switch (t) {
    case ElementType::Int8:
      return H5T_STD_I8LE;
    case ElementType::UInt8:
      return H5T_STD_U8LE;
    case ElementType::Int32:
      return H5T_STD_I32LE;
    case ElementType::Int64:
      return H5T_STD_I64LE;
    case ElementType::Float32:
      return H5T_IEEE_F32LE;
    case ElementType::Float64:
      return H5T_IEEE_F64LE;
  }
  return -1;
}

bool classify(hid_t type, ElementType& out) {
  const size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      if (size == 4)
        out = ElementType::Float32;
      else if (size == 8)
        out = ElementType::Float64;
      else
        return false;
      return true;
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      if (size == 1)
        out = is_signed ? ElementType::Int8 : ElementType::UInt8;
      else if (size <= 4 && (is_signed || size < 4))
        out = ElementType::Int32;
      else if (size <= 8)
        out = ElementType::Int64;
      else
        return false;
      return true;
    }
    default:
      return false;
  }
}

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Handle group_create_plist() {
  Handle p(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  // No modification times in object headers: the same inputs give the same bytes.
  H5Pset_obj_track_times(p.get(), false);
  return p;
}

Handle file_access_plist() {
  Handle p(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5AC_cache_config_t c{};
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if (H5Pget_mdc_config(p.get(), &c) >= 0) {
    // A fixed 1 MB (HDF5's smallest default size), not resized by hit rate. The size counts
    // entries as stored; in memory they take many times that (about 25 MB of resident memory for
    // each MB of cache, measured on caches of thousands of sequences). Reads and writes of frames
    // ran as fast as with the defaults (bench/cache_io, cloth-train on 1,000-4,000 runs).
    c.set_initial_size = true;
    c.initial_size = c.min_size = c.max_size = std::size_t{1} << 20;
    c.incr_mode = H5C_incr__off;
    c.flash_incr_mode = H5C_flash_incr__off;
    c.decr_mode = H5C_decr__off;
    H5Pset_mdc_config(p.get(), &c);  // HDF5's defaults stay if it is refused
  }
  return p;
}

namespace {

/// "name: " of the file `id` belongs to, or "" when HDF5 cannot say.
std::string file_name(hid_t id) {
  const ssize_t length = H5Fget_name(id, nullptr, 0);
  if (length <= 0) return "";
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  H5Fget_name(id, name.data(), name.size());
  name.resize(static_cast<std::size_t>(length));
  return name + ": ";
}

}  // namespace

bool link_exists(hid_t file, const std::string& path) {
  if (path.empty() || path == "/") return true;
  // H5Lexists fails (rather than returning 0) if an intermediate link is missing: walk down.
  std::string prefix;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t next = path.find('/', pos + 1);
    if (next == std::string::npos) next = path.size();
    prefix = path.substr(0, next);
    if (prefix.size() > 1) {
      const htri_t found = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
      // Each parent was found above, so a failure is the group's own: damaged metadata, which
      // must not read as "absent" (a padded, cut file said "the cache has no sequence").
      if (found < 0)
        check_status(-1, file_name(file) + prefix + ": cannot look the link up (damaged file?)");
      if (found == 0) return false;
    }
    pos = next;
  }
  return true;
}

bool child_exists(hid_t group, const std::string& name, const std::string& where) {
  const htri_t found = H5Lexists(group, name.c_str(), H5P_DEFAULT);
  if (found < 0) check_status(-1, where + ": cannot look the link up (damaged file?)");
  return found > 0;
}

bool attribute_exists(hid_t object, const std::string& name, const std::string& where) {
  const htri_t found = H5Aexists(object, name.c_str());
  if (found < 0)
    check_status(-1, where + ": attribute " + name + ": cannot look it up (damaged file?)");
  return found > 0;
}

Handle ensure_group(hid_t file, const std::string& path, const std::string& file_name) {
  Handle gcpl = group_create_plist();
  std::string prefix;
  size_t pos = 0;
  Handle group(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  while (pos < path.size()) {
    size_t next = path.find('/', pos + 1);
    if (next == std::string::npos) next = path.size();
    prefix = path.substr(0, next);
    pos = next;
    if (prefix.size() <= 1) continue;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) > 0) {
      group = check_id(H5Gopen2(file, prefix.c_str(), H5P_DEFAULT), H5Gclose,
                       file_name + ": " + prefix + ": exists but is not a group");
    } else {
      group = check_id(H5Gcreate2(file, prefix.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                       H5Gclose, file_name + ": " + prefix + ": cannot create group");
    }
  }
  return group;
}

namespace {

template <class T>
void write_numeric_attribute(hid_t object, const std::string& name, const T* data, size_t n,
                             bool scalar, hid_t ftype, hid_t mtype, const std::string& where) {
  hsize_t dims[1] = {n};
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle attr =
      check_id(H5Acreate2(object, name.c_str(), ftype, space.get(), H5P_DEFAULT, H5P_DEFAULT),
               H5Aclose, where + ": cannot create attribute " + name);
  check_status(H5Awrite(attr.get(), mtype, data), where + ": cannot write attribute " + name);
}

void write_string_attribute(hid_t object, const std::string& name,
                            const std::vector<std::string>& values, bool scalar,
                            const std::string& where) {
  Handle type = string_type();
  hsize_t dims[1] = {values.size()};
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), H5Sclose);
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  Handle attr =
      check_id(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
               H5Aclose, where + ": cannot create attribute " + name);
  check_status(H5Awrite(attr.get(), type.get(), ptrs.data()),
               where + ": cannot write attribute " + name);
}

}  // namespace

void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     const std::string& where) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::int64_t>) {
          write_numeric_attribute(object, name, &v, 1, true, H5T_STD_I64LE, H5T_NATIVE_INT64,
                                  where);
        } else if constexpr (std::is_same_v<V, double>) {
          write_numeric_attribute(object, name, &v, 1, true, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                  where);
        } else if constexpr (std::is_same_v<V, std::string>) {
          write_string_attribute(object, name, {v}, true, where);
        } else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) {
          write_numeric_attribute(object, name, v.data(), v.size(), false, H5T_STD_I64LE,
                                  H5T_NATIVE_INT64, where);
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          write_numeric_attribute(object, name, v.data(), v.size(), false, H5T_IEEE_F64LE,
                                  H5T_NATIVE_DOUBLE, where);
        } else {
          write_string_attribute(object, name, v, false, where);
        }
      },
      value);
}

AttributeValue read_attribute(hid_t object, const std::string& name, const std::string& where) {
  const ReadScope reading(where + ": attribute " + name);
  Handle attr = check_id(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose,
                         where + ": no attribute " + name);
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (rank > 1 || n < 0)
    throw IoError(where + ": attribute " + name + ": expected a scalar or 1-D");
  const bool scalar = rank == 0;
  const std::string what = where + ": cannot read attribute " + name;
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER: {
      std::vector<std::int64_t> v(static_cast<size_t>(n));
      check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()), what);
      if (scalar) return v.at(0);
      return v;
    }
    case H5T_FLOAT: {
      std::vector<double> v(static_cast<size_t>(n));
      check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, v.data()), what);
      if (scalar) return v.at(0);
      return v;
    }
    case H5T_STRING: {
      std::vector<std::string> out;
      if (H5Tis_variable_str(type.get()) > 0) {
        Handle mtype = string_type();
        std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
        check_status(H5Aread(attr.get(), mtype.get(), ptrs.data()), what);
        for (char* p : ptrs) out.emplace_back(p ? p : "");
        H5Dvlen_reclaim(mtype.get(), space.get(), H5P_DEFAULT, ptrs.data());
      } else {
        const size_t size = H5Tget_size(type.get());
        std::vector<char> buf(size * static_cast<size_t>(n) + 1, '\0');
        Handle mtype(H5Tcopy(type.get()), H5Tclose);
        check_status(H5Aread(attr.get(), mtype.get(), buf.data()), what);
        for (hssize_t i = 0; i < n; ++i) {
          const char* s = buf.data() + static_cast<size_t>(i) * size;
          out.emplace_back(s, strnlen(s, size));
        }
      }
      if (scalar) return out.at(0);
      return out;
    }
    default:
      throw IoError(where + ": attribute " + name +
                    ": expected an integer, float or string, got another HDF5 type");
  }
}

std::vector<std::string> attribute_names(hid_t object, const std::string& where) {
  std::vector<std::string> names;
  const ReadScope reading(where + ": the list of attributes");
  const herr_t status = H5Aiterate2(
      object, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* n, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(n);
        return 0;
      },
      &names);
  check_status(status, where + ": cannot list the attributes");
  return names;
}

std::vector<std::string> child_names(hid_t group, const std::string& where) {
  std::vector<std::string> names;
  const ReadScope reading(where + ": the list of links");
  const herr_t status = H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* n, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(n);
        return 0;
      },
      &names);
  check_status(status, where + ": cannot list the group");
  return names;
}

Shape dataset_shape(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return Shape(dims.begin(), dims.end());
}

void check_fully_written(hid_t dataset, const std::string& where) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) <= 0) return;  // nothing stored
  const Shape shape = dataset_shape(dataset);
  // Sizes saturate: a damaged shape can overflow 64 bits, and it is then simply too large.
  const auto times = [](std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
  };
  Handle plist(H5Dget_create_plist(dataset), H5Pclose);
  const H5D_layout_t layout = plist.valid() ? H5Pget_layout(plist.get()) : H5D_LAYOUT_ERROR;
  if (layout == H5D_LAYOUT_ERROR) {
    H5Eclear2(H5E_DEFAULT);
    throw IoError(where + ": cannot read its storage layout (file damaged?)");
  }
  std::uint64_t expected = 1, stored = 0;
  if (layout == H5D_CHUNKED) {
    // Compressed chunks are smaller than their elements, so their count is what says whether
    // every element was written.
    std::vector<hsize_t> chunk(shape.size());
    hsize_t count = 0;
    if (H5Pget_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()) !=
            static_cast<int>(chunk.size()) ||
        H5Dget_num_chunks(dataset, space.get(), &count) < 0) {
      H5Eclear2(H5E_DEFAULT);
      throw IoError(where + ": cannot read how much of it is stored (file damaged?)");
    }
    for (std::size_t d = 0; d < shape.size(); ++d)
      expected = times(expected, (shape[d] + chunk[d] - 1) / std::max<hsize_t>(chunk[d], 1));
    stored = count;
  } else if (layout == H5D_CONTIGUOUS) {
    Handle type(H5Dget_type(dataset), H5Tclose);
    expected = type.valid() ? H5Tget_size(type.get()) : 1;
    for (const std::size_t n : shape) expected = times(expected, n);
    stored = H5Dget_storage_size(dataset);
  } else {
    return;  // compact, or virtual: the elements are in the header or in other datasets
  }
  if (stored < expected)
    throw IoError(where + ": shape " + shape_string(shape) + ", but " +
                  (stored == 0 ? "no element of it is stored" : "only part of it is stored") +
                  " (a damaged shape, or a file cut short)");
}

}  // namespace datadyn::io::h5

namespace datadyn::io {

void skip_hdf5_cleanup_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] { H5dont_atexit(); });
}

void report_hdf5_crashes(LogLineFormat format) {
  static std::once_flag once;
  std::call_once(once, [format] {
    h5::g_line_format = format;
    // Its own stack, so that the line is written even when the crash is a stack overflow.
    static char stack[1 << 16];
    stack_t alternate{};
    alternate.ss_sp = stack;
    alternate.ss_size = sizeof stack;
    sigaltstack(&alternate, nullptr);
    static const std::uintptr_t probes[] = {reinterpret_cast<std::uintptr_t>(&H5Aread),
                                            reinterpret_cast<std::uintptr_t>(&std::memcpy), 0};
    dl_iterate_phdr(h5::add_library_code, const_cast<std::uintptr_t*>(probes));
    struct sigaction action {};
    action.sa_sigaction = h5::on_crash;
    action.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &h5::g_previous[0]);
    sigaction(SIGBUS, &action, &h5::g_previous[1]);
  });
}

}  // namespace datadyn::io
