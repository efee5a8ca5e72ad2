#pragma once
/// @file
/// Logging for every tool: spdlog to stderr, as text (`[12:00:01.123] [info] message`) or as JSON
/// lines (`{"time": ..., "level": "info", "tool": "mps-gen", "message": "..."}`) that a farm's log
/// collector can parse.

#include <string>

#include <spdlog/spdlog.h>

namespace datadyn::app {

enum class LogFormat { Text, Json };

/// Installs the default logger. `level` is one of trace, debug, info, warn, error, off.
/// Throws UsageError for an unknown level or format.
void setup_logging(const std::string& tool, const std::string& level, const std::string& format);

/// The format chosen by the last setup_logging call.
LogFormat log_format();

/// An error line as the logger would write it now, for what must be written without the logger
/// (io::report_hdf5_crashes writes it from a signal handler).
std::string error_log_line(const std::string& message);

/// An error found before the logger exists (the command line itself): "tool: message", or a
/// JSON line like the logger's when `json` (--log-format json was among the arguments).
void log_early_error(const std::string& tool, const std::string& message, bool json);

}  // namespace datadyn::app
