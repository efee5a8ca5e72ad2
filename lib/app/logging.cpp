#include "app/logging.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace datadyn::app {

namespace {

LogFormat g_format = LogFormat::Text;
std::string g_tool;

/// A time's calendar fields (UTC or local) and its milliseconds.
struct TimeFields {
  std::tm tm{};
  int ms = 0;
};

TimeFields time_fields(std::chrono::system_clock::time_point time, bool utc) {
  const auto t = std::chrono::system_clock::to_time_t(time);
  TimeFields f;
  if (utc)
    gmtime_r(&t, &f.tm);
  else
    localtime_r(&t, &f.tm);
  f.ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count() %
      1000);
  return f;
}

/// `{"time": ..., "level": ..., "tool": ..., "message": ...}` and a newline.
std::string json_log_line(const std::string& tool, const std::string& level,
                          const std::string& message, std::chrono::system_clock::time_point time) {
  const auto [tm, ms] = time_fields(time, true);
  char stamp[80];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  nlohmann::json j;
  j["time"] = stamp;
  j["level"] = level;
  j["tool"] = tool;
  j["message"] = message;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// One JSON object per line on stderr, flushed per message.
class JsonLinesSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JsonLinesSink(std::string tool) : tool_(std::move(tool)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    const std::string line =
        json_log_line(tool_, std::string(level.data(), level.size()),
                      std::string(msg.payload.data(), msg.payload.size()), msg.time);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  std::string tool_;
};

}  // namespace

void log_early_error(const std::string& tool, const std::string& message, bool json) {
  const std::string line =
      json ? json_log_line(tool, "error", message, std::chrono::system_clock::now())
           : tool + ": " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void setup_logging(const std::string& tool, const std::string& level, const std::string& format) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw UsageError("--log-level '" + level +
                     "': expected one of trace, debug, info, warn, error, off");
  }
  spdlog::sink_ptr sink;
  if (format == "text") {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::automatic);
    sink->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    g_format = LogFormat::Text;
  } else if (format == "json") {
    sink = std::make_shared<JsonLinesSink>(tool);
    g_format = LogFormat::Json;
  } else {
    throw UsageError("--log-format '" + format + "': expected text or json");
  }
  g_tool = tool;
  auto logger = std::make_shared<spdlog::logger>(tool, sink);
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::trace);  // farm logs must show progress as it happens
  spdlog::set_default_logger(logger);
}

LogFormat log_format() {
  return g_format;
}

std::string error_log_line(const std::string& message) {
  const auto now = std::chrono::system_clock::now();
  if (g_format == LogFormat::Json) return json_log_line(g_tool, "error", message, now);
  const auto [tm, ms] = time_fields(now, false);  // spdlog's pattern shows local time
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%02d:%02d:%02d.%03d]", tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return std::string(stamp) + " [error] " + message + "\n";
}

}  // namespace datadyn::app
