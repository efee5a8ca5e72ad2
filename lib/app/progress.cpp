#include "app/progress.hpp"

#include <semaphore.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "app/logging.hpp"
#include "app/tool.hpp"
#include "core/errors.hpp"
#include "io/temporary_files.hpp"

namespace datadyn::app {

namespace {

sem_t g_wake;  // posted by the handler (sem_post is async-signal-safe), awaited by the watchdog

// The first signal asks the work to stop at the next tick, where outputs are discarded cleanly.
// The watchdog makes sure the process ends soon anyway: one step can run for minutes, and a farm
// scheduler sends SIGKILL some seconds after SIGTERM (Slurm's KillWait: 30 s by default), which
// would leave the temporary files behind.
extern "C" void on_signal(int sig) {
  io::note_stop_signal(sig);
  sem_post(&g_wake);
}

void watchdog() {
  while (sem_wait(&g_wake) != 0) {
  }
  // The work has kInterruptGrace to stop by itself; a second signal cuts that short.
  timespec deadline{};
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += static_cast<time_t>(kInterruptGrace.count());
  int r;
  while ((r = sem_timedwait(&g_wake, &deadline)) != 0 && errno == EINTR) {
  }
  const int sig = io::stop_signal();
  const std::size_t removed = io::remove_registered_temporaries();
  spdlog::error(
      "interrupted by {}: {}; {} temporary file{} removed, the run ends", io::signal_name(sig),
      r == 0 ? std::string("a second signal came before the work stopped")
             : "the work did not stop within " + std::to_string(kInterruptGrace.count()) + " s",
      removed, removed == 1 ? "" : "s");
  if (const std::string kept = committed_line(io::take_committed(), 0.0, false); !kept.empty())
    spdlog::warn("{}", kept);
  spdlog::default_logger()->flush();
  std::_Exit(1);
}

std::string clock_text(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "--:--:--";
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

std::string rate_text(double seconds_per_unit) {
  char buf[32];
  if (seconds_per_unit < 1.0)
    std::snprintf(buf, sizeof buf, "%.3g ms", seconds_per_unit * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g s", seconds_per_unit);
  return buf;
}

}  // namespace

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    sem_init(&g_wake, 0, 0);
    std::thread(watchdog).detach();
  });
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A reader of the log that went away (`tool ... 2>&1 | head`) ended the process at the next
  // line it wrote, and left its temporary file behind. The run goes on to its end instead: the
  // log lines are lost, the outputs are whole (and stdout's reader going away is no error).
  std::signal(SIGPIPE, SIG_IGN);
}

void check_interrupted() {
  if (const int sig = io::stop_signal()) {
    throw RunError("interrupted by " + io::signal_name(sig) +
                   "; unfinished outputs were discarded");
  }
}

Progress::Progress(std::string unit, std::size_t total, bool every_unit)
    : unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      every_unit_(every_unit) {
  bar_ = isatty(STDERR_FILENO) && log_format() == LogFormat::Text &&
         spdlog::default_logger()->level() == spdlog::level::info;
}

Progress::~Progress() {
  if (!finished_ && done_ > base_ && bar_) std::fputc('\n', stderr);
}

std::string Progress::format_line(const std::string& unit, std::size_t done, std::size_t total,
                                  double seconds, const std::string& note, std::size_t base) {
  const double per = done > base ? seconds / static_cast<double>(done - base) : 0.0;
  const int pct =
      total ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total))
            : 100;
  std::string line = unit + " " + std::to_string(done) + "/" + std::to_string(total) + " (" +
                     std::to_string(pct) + "%) " + rate_text(per) + "/" + unit + ", eta " +
                     clock_text(per * static_cast<double>(total > done ? total - done : 0));
  if (!note.empty()) line += ", " + note;
  return line;
}

bool Progress::should_print(std::size_t done, std::size_t total, double since_last, bool verbose) {
  return verbose || done <= 1 || done >= total || since_last >= 1.0;
}

void Progress::tick(std::size_t n, const std::string& note) {
  check_interrupted();
  const bool first = done_ == base_;
  done_ += n;
  const auto now = std::chrono::steady_clock::now();
  if (!should_print(first ? 1 : done_, total_,
                    std::chrono::duration<double>(now - last_line_).count(),
                    every_unit_ || spdlog::default_logger()->level() <= spdlog::level::debug))
    return;
  last_line_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const std::string line = format_line(unit_, done_, total_, seconds, note, base_);
  if (bar_) {
    const int width = 30;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r[%s%s] %s\033[K", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), line.c_str());
    std::fflush(stderr);
  } else {
    spdlog::info(line);
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (bar_ && done_ > base_) std::fputc('\n', stderr);
  char buf[64];
  std::snprintf(buf, sizeof buf, " in %.3g s", seconds);
  const std::size_t ran = done_ - base_;
  spdlog::info(
      "{} {}{}{}{}", ran, unit_, ran == 1 ? "" : "s", buf,
      base_ ? " (" + std::to_string(done_) + " of " + std::to_string(total_) + " done)" : "");
}

ProgressCallback Progress::callback() {
  return [this](std::size_t done, std::size_t) {
    if (done > done_)
      tick(done - done_);
    else
      check_interrupted();
  };
}

}  // namespace datadyn::app
