#pragma once
// Runs a command line through /bin/sh and captures its exit code, stdout and stderr.

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "support/file_bytes.hpp"
#include "support/temp_dir.hpp"

namespace datadyn::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out, err;
};

inline ProcessResult run_command(const std::string& command) {
  TempDir dir;
  const auto out = dir / "stdout", err = dir / "stderr";
  const std::string full = command + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(full.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = file_bytes(out);
  r.err = file_bytes(err);
  return r;
}

/// A command's result and its peak resident memory.
struct MeasuredResult : ProcessResult {
  double peak_mb = -1.0;  ///< MiB, as GNU time's %M reports it (KiB / 1024); -1 if not reported
};

/// Runs a command under GNU time (`/usr/bin/time -f 'maxrss %M'`, whose line ends stderr).
inline MeasuredResult run_measured(const std::string& command) {
  MeasuredResult r;
  static_cast<ProcessResult&>(r) = run_command("/usr/bin/time -f 'maxrss %M' " + command);
  const auto at = r.err.rfind("maxrss ");
  if (at != std::string::npos) r.peak_mb = std::stod(r.err.substr(at + 7)) / 1024.0;
  return r;
}

}  // namespace datadyn::test

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <vector>

namespace datadyn::test {

/// Starts argv[0] with the arguments, without a shell; returns its pid (or -1). With
/// `stderr_file`, the process's standard error goes to that file.
inline pid_t spawn(std::vector<std::string> args, const std::string& stderr_file = "") {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stderr_file.empty())
    posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
  pid_t pid = -1;
  const int r = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return r == 0 ? pid : -1;
}

/// Sends SIGTERM and waits: the exit code, or 128 + the signal if the process was killed.
inline int terminate_and_wait(pid_t pid) {
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace datadyn::test
