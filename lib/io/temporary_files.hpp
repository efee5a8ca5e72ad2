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

/// The signal that asked the process to stop (SIGINT, SIGTERM), 0 for none. The tools'
/// interrupt handler notes it (async-signal-safe); the writers check it just before a finished
/// file takes its real name, so that a signal that came during the last write (a canonical copy
/// of a large cache takes seconds) discards the output, as it does earlier, instead of letting
/// it replace the old one with exit 0.
void note_stop_signal(int sig) noexcept;
int stop_signal() noexcept;
/// "SIGTERM" for SIGTERM, and so on, for messages.
std::string signal_name(int sig);
/// Throws RunError naming `file` if a stop signal has come.
void refuse_commit_if_stopped(const std::string& file);

/// Removes every registered temporary file (errors ignored) and returns how many were there.
/// Thread-safe; the registry lives until the process ends, so this may run while static
/// destructors do.
std::size_t remove_registered_temporaries() noexcept;

/// As remove_registered_temporaries, from a signal handler after a crash: no allocation, and
/// nothing if another thread holds the registry. Returns how many were removed.
std::size_t remove_registered_temporaries_after_crash() noexcept;

/// Notes a file the writers have just renamed from its temporary name into place, for the tool's
/// closing log line. Thread-safe.
void note_committed(const std::filesystem::path& path) noexcept;
/// The files noted since the last call, in the order they were committed; clears the list.
std::vector<std::filesystem::path> take_committed();

}  // namespace datadyn::io
