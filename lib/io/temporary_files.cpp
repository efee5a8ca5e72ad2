#include "io/temporary_files.hpp"

#include <atomic>
#include <csignal>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <unistd.h>

#include "core/errors.hpp"

namespace datadyn::io {

namespace {

struct Registry {
  std::mutex mutex;
  std::multiset<std::string> paths;
  std::vector<std::filesystem::path> committed;
};

// Never destroyed: the watchdog thread may use it while the main thread runs exit().
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace

void note_stop_signal(int sig) noexcept {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);
}

int stop_signal() noexcept {
  return g_stop_signal.load();
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

void refuse_commit_if_stopped(const std::string& file) {
  if (const int sig = stop_signal())
    throw RunError(file + ": interrupted by " + signal_name(sig) +
                   " before the finished file was put in place; it was discarded");
}

TemporaryRegistration::TemporaryRegistration(const std::filesystem::path& path)
    : path_(path.string()) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.paths.insert(*path_);
}

TemporaryRegistration::~TemporaryRegistration() {
  release();
}

TemporaryRegistration::TemporaryRegistration(TemporaryRegistration&& o) noexcept
    : path_(std::exchange(o.path_, std::nullopt)) {}

TemporaryRegistration& TemporaryRegistration::operator=(TemporaryRegistration&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::exchange(o.path_, std::nullopt);
  }
  return *this;
}

void TemporaryRegistration::release() noexcept {
  if (!path_) return;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto it = r.paths.find(*path_);
  if (it != r.paths.end()) r.paths.erase(it);
  path_.reset();
}

std::size_t remove_registered_temporaries() noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::size_t removed = 0;
  for (const auto& p : r.paths) {
    std::error_code ec;
    if (std::filesystem::remove(p, ec)) ++removed;
  }
  return removed;
}

std::size_t remove_registered_temporaries_after_crash() noexcept {
  Registry& r = registry();
  if (!r.mutex.try_lock()) return 0;
  std::size_t removed = 0;
  for (const auto& p : r.paths)
    if (::unlink(p.c_str()) == 0) ++removed;
  r.mutex.unlock();
  return removed;
}

void note_committed(const std::filesystem::path& path) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  try {
    r.committed.push_back(path);
  } catch (...) {  // out of memory: the file is in place, only the closing line misses it
  }
}

std::vector<std::filesystem::path> take_committed() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  return std::exchange(r.committed, {});
}

}  // namespace datadyn::io
