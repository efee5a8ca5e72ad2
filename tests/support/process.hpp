#pragma once
// Runs a command line through /bin/sh and captures its exit code, stdout and stderr.

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

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
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace datadyn::test
