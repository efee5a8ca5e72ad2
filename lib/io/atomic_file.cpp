#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace datadyn::io {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

/// A finished temporary file waiting for its name.
struct Held {
  std::filesystem::path tmp, path;
  std::string name;
  TemporaryRegistration registration;
};

/// The scopes and what each holds: the innermost scope is `innermost`.
struct HeldFiles {
  std::mutex mutex;
  HeldCommits* innermost = nullptr;
  std::map<const HeldCommits*, std::vector<Held>> files;
};

HeldFiles& held_files() {
  static HeldFiles h;
  return h;
}

/// The error of a finished file that cannot take its name.
IoError cannot_rename(const std::string& name, const std::string& why) {
  return IoError(name + ": cannot rename the finished file into place: " + why);
}

/// Renames `h` into place. Throws IoError (RunError after a stop signal) with the temporary
/// removed.
void rename_into_place(Held& h) {
  std::error_code ec;
  if (stop_signal()) std::filesystem::remove(h.tmp, ec);
  refuse_commit_if_stopped(h.name);
  std::filesystem::rename(h.tmp, h.path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(h.tmp, ec);
    throw cannot_rename(h.name, why);
  }
  h.registration = {};
}

/// A file of a group renamed into place, and what its name held before: a hard link to the
/// earlier file (`<path>.old-<pid>`) to put back if a later file of the group fails, none if the
/// name was free, or none that can be put back (a file system without hard links).
struct Renamed {
  std::filesystem::path path, backup;
  bool was_free = false;
  TemporaryRegistration registration;  // the backup's, while it exists
};

/// Keeps what `path` holds under a second name, for rename_all to put back.
Renamed keep_earlier(const std::filesystem::path& path) {
  Renamed r{path, {}, false, {}};
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    r.was_free = true;
    return r;
  }
  std::filesystem::path backup = path;
  backup += ".old-" + std::to_string(::getpid());
  std::filesystem::remove(backup, ec);
  // link(2) names the file itself, a symbolic link included, without copying it.
  if (::link(path.c_str(), backup.c_str()) == 0) {
    r.backup = std::move(backup);
    r.registration = TemporaryRegistration(r.backup);
  }
  return r;
}

/// Renames `files` in order, all or none: a file that cannot take its name (an existing
/// directory is found before any is renamed; a failed rename or a stop signal as it comes) puts
/// the group's earlier files back as they were, the earlier version where there was one. At a
/// failure the files not yet tried stay in `files`; those tried leave it, the failed one with its
/// temporary removed (a retry would fail on the missing file and sink a run that had caught the
/// first failure, as wave-edit does for its features cache).
void rename_all(std::vector<Held>& files) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(files[i].path, ec)) {
      const Held failed = std::move(files[i]);
      files.erase(files.begin() + static_cast<std::ptrdiff_t>(i));
      std::filesystem::remove(failed.tmp, ec);
      throw cannot_rename(failed.name, std::make_error_code(std::errc::is_a_directory).message());
    }
  }
  std::vector<Renamed> renamed;
  std::size_t tried = 0;
  try {
    while (tried < files.size()) {
      Held& h = files[tried++];
      Renamed r = keep_earlier(h.path);
      try {
        rename_into_place(h);
      } catch (...) {
        std::error_code ec;  // the earlier file kept its name: its second one goes
        if (!r.backup.empty()) std::filesystem::remove(r.backup, ec);
        throw;
      }
      renamed.push_back(std::move(r));
    }
  } catch (...) {
    std::error_code ec;
    for (auto r = renamed.rbegin(); r != renamed.rend(); ++r) {
      if (!r->backup.empty())
        std::filesystem::rename(r->backup, r->path, ec);
      else if (r->was_free)
        std::filesystem::remove(r->path, ec);
    }
    files.erase(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(tried));
    throw;
  }
  for (Renamed& r : renamed) {
    std::error_code ec;
    if (!r.backup.empty()) std::filesystem::remove(r.backup, ec);
    note_committed(r.path);
  }
  files.clear();
}

}  // namespace

HeldCommits::HeldCommits() {
  HeldFiles& h = held_files();
  const std::lock_guard lock(h.mutex);
  outer_ = h.innermost;
  h.innermost = this;
  h.files[this];
}

HeldCommits::~HeldCommits() {
  HeldFiles& h = held_files();
  const std::lock_guard lock(h.mutex);
  std::error_code ec;
  for (const Held& f : h.files[this]) std::filesystem::remove(f.tmp, ec);
  h.files.erase(this);
  h.innermost = outer_;
}

void HeldCommits::commit() {
  HeldFiles& h = held_files();
  const std::lock_guard lock(h.mutex);
  std::vector<Held>& mine = h.files[this];
  if (outer_) {
    std::vector<Held>& theirs = h.files[outer_];
    std::move(mine.begin(), mine.end(), std::back_inserter(theirs));
    mine.clear();
    return;
  }
  rename_all(mine);
}

void commit_held_files() {
  HeldFiles& h = held_files();
  const std::lock_guard lock(h.mutex);
  // Outermost first: their files were finished before the inner scopes began.
  std::vector<const HeldCommits*> order;
  for (const HeldCommits* s = h.innermost; s; s = s->outer_) order.insert(order.begin(), s);
  for (const HeldCommits* s : order) rename_all(h.files[s]);
}

void put_in_place(const std::filesystem::path& tmp, const std::filesystem::path& path,
                  TemporaryRegistration registration, const std::string& name) {
  Held file{tmp, path, name, std::move(registration)};
  {
    HeldFiles& h = held_files();
    const std::lock_guard lock(h.mutex);
    if (h.innermost) {
      // The same file finished again: its temporary is this one now (the same name), and the
      // earlier entry would rename it twice.
      for (auto& [scope, held] : h.files)
        std::erase_if(held, [&](const Held& f) { return f.tmp == tmp; });
      h.files[h.innermost].push_back(std::move(file));
      return;
    }
  }
  rename_into_place(file);
  note_committed(path);
}

std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  return tmp;
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  // Made absolute first: weakly_canonical leaves a relative path whose first part does not
  // exist as it is ("y.h5"), while "./y.h5" became "/dir/y.h5", so the two did not compare
  // equal and a report named ./y.h5 replaced the cache y.h5.
  const auto canonical = [](const std::filesystem::path& p) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(p, ec);
    if (ec) return p.lexically_normal();
    const auto c = std::filesystem::weakly_canonical(absolute, ec);
    return ec ? absolute.lexically_normal() : c;
  };
  if (canonical(a) == canonical(b)) return true;
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

AtomicFile::AtomicFile(std::filesystem::path path, std::string name)
    : path_(std::move(path)),
      tmp_(temporary_path_for(path_)),
      name_(name.empty() ? path_.string() : std::move(name)),
      active_(true) {
  check_replaceable(path_);
  registration_ = TemporaryRegistration(tmp_);
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) {
    const int err = errno;
    active_ = false;
    require_directory(path_);
    throw IoError(name_ + ": cannot create " + tmp_.string() + ": " + errno_text(err));
  }
  static constexpr std::size_t kBuffer = 1 << 20;
  std::setvbuf(file_, nullptr, _IOFBF, kBuffer);
}

AtomicFile::~AtomicFile() {
  discard();
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)),
      tmp_(std::move(o.tmp_)),
      name_(std::move(o.name_)),
      file_(std::exchange(o.file_, nullptr)),
      size_(o.size_),
      committed_(o.committed_),
      active_(std::exchange(o.active_, false)),
      registration_(std::move(o.registration_)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    discard();
    path_ = std::move(o.path_);
    tmp_ = std::move(o.tmp_);
    name_ = std::move(o.name_);
    file_ = std::exchange(o.file_, nullptr);
    size_ = o.size_;
    committed_ = o.committed_;
    active_ = std::exchange(o.active_, false);
    registration_ = std::move(o.registration_);
  }
  return *this;
}

void AtomicFile::discard() noexcept {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (active_ && !committed_) {
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  active_ = false;
  registration_ = {};
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (!file_) throw IoError(name_ + ": write after commit or on a by-name file");
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, file_) != bytes) {
    const int err = errno;
    discard();
    throw IoError(name_ + ": write failed after " + std::to_string(size_) +
                  " bytes: " + errno_text(err));
  }
  size_ += bytes;
}

void AtomicFile::flush() {
  if (file_ && std::fflush(file_) != 0) {
    const int err = errno;
    discard();
    throw IoError(name_ + ": write failed: " + errno_text(err));
  }
}

void AtomicFile::commit() {
  if (!active_) throw IoError(name_ + ": commit of a file that is not open");
  if (file_) {
    const bool flushed = std::fflush(file_) == 0;
    const int err = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) {
      discard();
      throw IoError(name_ + ": write failed: " + errno_text(err));
    }
  }
  std::error_code ec;
  if (!std::filesystem::exists(tmp_, ec)) {
    discard();
    throw IoError(name_ + ": the temporary file " + tmp_.string() + " was not written");
  }
  // From here the file belongs to put_in_place, which removes it if it fails.
  committed_ = true;
  active_ = false;
  put_in_place(tmp_, path_, std::move(registration_), path_.string());
}

void check_replaceable(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw IoError(path.string() +
                  ": cannot write: it exists and is not a regular file (a directory, a device or a "
                  "link), and renaming the output over it would replace it");
}

void require_directory(const std::filesystem::path& path) {
  const auto dir = directory_of(path);
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  // Name the first part of the directory that is missing or not a directory: for "a/b/../c"
  // with no "a", that is "a", where "directory a/b/.. does not exist" would leave the reader to
  // work it out.
  std::filesystem::path prefix;
  for (const auto& part : dir) {
    prefix /= part;
    const auto status = std::filesystem::status(prefix, ec);
    if (status.type() == std::filesystem::file_type::not_found)
      throw IoError(path.string() + ": cannot write: directory " + prefix.string() +
                    " does not exist");
    if (!std::filesystem::status_known(status))
      throw IoError(path.string() + ": cannot write: " + prefix.string() + ": " + ec.message());
    if (!std::filesystem::is_directory(status))
      throw IoError(path.string() + ": cannot write: " + prefix.string() + " is not a directory");
  }
  throw IoError(path.string() + ": cannot write: directory " + dir.string() + " cannot be reached");
}

void check_writable_directory(const std::filesystem::path& path) {
  check_replaceable(path);
  require_directory(path);
  const auto dir = directory_of(path);
  // access(W_OK) says yes to root everywhere; creating a file is the only reliable check
  // (read-only mounts, /proc, ACLs).
  const auto probe = dir / (".datadyn-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) return;  // a stale probe of the same pid: the directory is writable
    throw IoError(path.string() + ": cannot write in directory " + dir.string() + ": " +
                  errno_text(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace datadyn::io
