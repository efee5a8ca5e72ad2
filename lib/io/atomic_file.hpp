#pragma once
/// @file
/// Atomic output files: everything is written to `<path>.tmp-<pid>` and renamed to `<path>` by
/// commit(), so a crash, a kill or a full disk never leaves a half file under the real name. An
/// AtomicFile destroyed without commit() (an exception, a failed run) removes its temporary file.
/// Every writer of a non-HDF5 output (OBJ, PLY, PC2, MDD, USDA, VDB, XDMF) goes through it.

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "io/temporary_files.hpp"

namespace datadyn::io {

class AtomicFile {
 public:
  /// Creates `<path>.tmp-<pid>` for writing (binary). Throws IoError naming the path if it
  /// cannot be created (no such directory, not writable). `name` names the file in messages
  /// instead of the path: a scratch file that is never committed (a USDA writer's spool) is
  /// better named after the output it serves than by a path that never appears.
  explicit AtomicFile(std::filesystem::path path, std::string name = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&&) noexcept;
  AtomicFile& operator=(AtomicFile&&) noexcept;

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temporary_path() const { return tmp_; }

  /// Appends bytes. Throws IoError naming the file on a write error (e.g. a full disk).
  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// Flushes buffered bytes to the temporary file (to read it back before commit()).
  void flush();
  /// Bytes written so far.
  std::size_t size() const { return size_; }

  /// Flushes, closes and renames the temporary file to path(). Throws IoError if any of it fails
  /// (the temporary file is then removed). After commit() the object is spent.
  void commit();
  bool committed() const { return committed_; }

 private:
  void discard() noexcept;
  std::filesystem::path path_, tmp_;
  std::string name_;  ///< the file in messages
  std::FILE* file_ = nullptr;
  std::size_t size_ = 0;
  bool committed_ = false, active_ = false;
  TemporaryRegistration registration_;  // while tmp_ may exist
};

/// The files of a run take their names together. While a HeldCommits exists, a writer's commit()
/// (AtomicFile, CacheWriter) finishes its file under the temporary name and holds it; the
/// scope's commit() renames every file it holds into place, in the order they were finished,
/// and a scope destroyed without commit() (the run failed) removes them. So a run that fails
/// after some of its files (a point cache before its mesh, a cache before its report, frame 3
/// of 10) leaves every earlier output as it was, not a mix of old and new. A scope inside
/// another hands its files to the outer one on commit(). Without a scope, commit() renames at
/// once. The tools hold every run's files (app::Tool).
class HeldCommits {
 public:
  HeldCommits();
  ~HeldCommits();
  HeldCommits(const HeldCommits&) = delete;
  HeldCommits& operator=(const HeldCommits&) = delete;
  /// Renames the held files into place (or hands them to the enclosing scope), all or none.
  /// Throws IoError naming the first that cannot be renamed (or RunError after a stop signal),
  /// with those renamed before it put back (the earlier files kept under a hard link until the
  /// last is in place); those not yet renamed are removed with the scope.
  void commit();

 private:
  friend void commit_held_files();
  HeldCommits* outer_;
};

/// Renames every file held by any scope into place now: for files a run keeps whatever follows
/// (a training's checkpoint, the simulations finished before a failed one).
void commit_held_files();

/// Puts the finished temporary file `tmp` in place as `path`, or holds it (see HeldCommits);
/// `registration` keeps it registered until then. Throws IoError (the temporary removed) if the
/// rename fails, RunError after a stop signal. `name` names the file in messages.
void put_in_place(const std::filesystem::path& tmp, const std::filesystem::path& path,
                  TemporaryRegistration registration, const std::string& name);

/// `<path>.tmp-<pid>`: the name a file has while it is written.
std::filesystem::path temporary_path_for(const std::filesystem::path& path);

/// Whether two names reach the same file: the same canonical path (links and `..` resolved as
/// far as the paths exist), or, when both exist, the same file (hard links).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

/// Throws IoError unless the directory of `path` exists, naming the first part of it that is
/// missing or not a directory.
void require_directory(const std::filesystem::path& path);
/// Checks that files can be created in the directory of `path` (which must exist) by creating
/// and removing a probe file there, so that an unwritable output fails before any work starts.
/// Throws IoError naming the directory and the reason ("does not exist", "is not a directory",
/// "Permission denied", ...).
void check_writable_directory(const std::filesystem::path& path);
/// Throws IoError naming `path` if something other than a regular file is there (a directory, a
/// device such as /dev/null, a symbolic link): the finished output is renamed over whatever is at
/// its path, which would replace it. Also part of check_writable_directory().
void check_replaceable(const std::filesystem::path& path);

}  // namespace datadyn::io
