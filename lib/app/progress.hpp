#pragma once
/// @file
/// Progress for long work: a flushed line on stderr through the logger, e.g.
///   frame 12/100 (12%) 3.1 ms/frame, eta 0:00:05
/// (a JSON line with --log-format json), or a bar redrawn in place when stderr is a terminal.
/// The line is printed for the first and the last unit and then at most once a second (every
/// unit at -v), so fast work does not flood a farm's log.
/// Each tick also checks for SIGINT/SIGTERM and throws RunError, so outputs under construction are
/// discarded cleanly (their writers remove the temporary files).

#include <chrono>
#include <cstddef>
#include <string>

#include "core/progress.hpp"

namespace datadyn::app {

class Progress {
 public:
  /// `unit` names one unit of work ("frame", "epoch", "simulation"). `every_unit`: a line for
  /// each unit, not at most one a second (units whose lines carry news, such as a loss).
  Progress(std::string unit, std::size_t total, bool every_unit = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Marks `n` more units done; `note` is appended to the line (e.g. "loss 1.2e-3").
  void tick(std::size_t n = 1, const std::string& note = "");
  /// Prints the summary line ("100 frames in 12.3 s"); called by the destructor if needed.
  void finish();
  /// Units done before this process (a resumed training): counted in the line and its percentage,
  /// not in the rate or the summary. Call before the first tick.
  void start_at(std::size_t done) { done_ = base_ = done; }
  /// A callback for kernels that forwards to tick (done counts are absolute).
  ProgressCallback callback();

  std::size_t done() const { return done_; }

  /// Whether the line for unit `done` of `total` is printed, `since_last` s after the last one.
  static bool should_print(std::size_t done, std::size_t total, double since_last, bool verbose);

  /// The line for a given state, as printed (for tests).
  /// `base` units were done before `seconds` started (start_at).
  static std::string format_line(const std::string& unit, std::size_t done, std::size_t total,
                                 double seconds, const std::string& note, std::size_t base = 0);

 private:
  std::string unit_;
  std::size_t total_, done_ = 0, base_ = 0;
  std::chrono::steady_clock::time_point start_, last_line_;
  bool every_unit_ = false, bar_ = false, finished_ = false;
};

/// How long the work has to stop by itself after SIGINT/SIGTERM before the process ends anyway.
inline constexpr std::chrono::seconds kInterruptGrace{10};

/// Installs SIGINT/SIGTERM handlers that make the next Progress::tick (or check_interrupted)
/// throw RunError, and a watchdog thread: if the process still runs kInterruptGrace after the
/// signal (a single step longer than that), or a second signal comes, the watchdog removes the
/// registered temporary files (io/temporary_files.hpp) and exits 1. Called by the tool runner.
void install_interrupt_handlers();
/// Throws RunError if a SIGINT/SIGTERM arrived.
void check_interrupted();

}  // namespace datadyn::app
