#pragma once
/// @file
/// The temporary files this process is writing (`<path>.tmp-<pid>` and their canonical copies),
/// so that a forced stop can remove them. The writers that make them (AtomicFile, CacheWriter,
/// merge_caches) register each one for as long as it exists; the registration does not remove
/// the file, its owner does. The one caller of remove_registered_temporaries is the interrupt
/// watchdog of the tools (app/progress.hpp), which ends the process right after.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace datadyn::io {

class TemporaryRegistration {
 public:
  TemporaryRegistration() = default;
  explicit TemporaryRegistration(const std::filesystem::path& path);
  ~TemporaryRegistration();
  TemporaryRegistration(const TemporaryRegistration&) = delete;
  TemporaryRegistration& operator=(const TemporaryRegistration&) = delete;
  TemporaryRegistration(TemporaryRegistration&& o) noexcept;
  TemporaryRegistration& operator=(TemporaryRegistration&& o) noexcept;

 private:
  void release() noexcept;
  std::optional<std::string> path_;
};

/// Removes every registered temporary file (errors ignored) and returns how many were there.
/// Thread-safe; the registry lives until the process ends, so this may run while static
/// destructors do.
std::size_t remove_registered_temporaries() noexcept;

/// Notes a file the writers have just renamed from its temporary name into place, for the tool's
/// closing log line. Thread-safe.
void note_committed(const std::filesystem::path& path) noexcept;
/// The files noted since the last call, in the order they were committed; clears the list.
std::vector<std::filesystem::path> take_committed();

}  // namespace datadyn::io
