#pragma once
/// @file
/// Exception types shared by every layer. Tools map them to exit codes:
/// ConfigError and UsageError -> 2, IoError and RunError -> 1, InternalError -> 1 ("internal
/// error").

#include <stdexcept>
#include <string>

namespace datadyn {

/// Base of every datadyn exception; what() is the full message shown to the user. A NUL byte in
/// it (a key or a name read from a file) is shown as \u0000: what() is a C string, and the
/// message ended there ("nul.json: /").
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(visible(message)) {}
  explicit Error(const char* message) : std::runtime_error(message) {}

 private:
  static std::string visible(const std::string& message) {
    if (message.find('\0') == std::string::npos) return message;
    std::string out;
    for (const char c : message) out += c == '\0' ? std::string("\\u0000") : std::string(1, c);
    return out;
  }
};

/// A bad command line (unparsable frame range, shard, flag combination). Exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A bad config value. The message reads `file: /json/pointer: expected ..., got ...`. Exit code 2.
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::string pointer, std::string expected, std::string got)
      : Error(file + ": " + pointer + ": expected " + expected + ", got " + got),
        file_(std::move(file)),
        pointer_(std::move(pointer)) {}
  struct FreeText {};
  /// A message that is not of the expected/got form (parse errors, unknown keys).
  ConfigError(FreeText, std::string file, std::string pointer, const std::string& message)
      : Error(file + ": " + (pointer.empty() ? "" : pointer + ": ") + message),
        file_(std::move(file)),
        pointer_(std::move(pointer)) {}
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }

 private:
  std::string file_, pointer_;
};

/// A file that cannot be read or written, or whose content is not what it should be. The message
/// names the file and, for caches, the dataset. Exit code 1.
class IoError : public Error {
 public:
  using Error::Error;
};

/// A run that failed on valid input: divergence, no convergence, NaN. The message names the
/// simulation, frame and particle where known. Exit code 1.
class RunError : public Error {
 public:
  using Error::Error;
};

/// A broken internal invariant (a bug). Raised by DATADYN_CHECK. Exit code 1.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace datadyn
