#include "app/tool.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "app/config.hpp"
#include "app/frame_range.hpp"
#include "app/logging.hpp"
#include "app/version.hpp"
#include "core/errors.hpp"
#include "core/simd.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_library.hpp"
#include "io/temporary_files.hpp"

namespace datadyn::app {

namespace {

/// The most --threads takes: more than any farm node has cores.
constexpr int kMaxThreads = 4096;

// The file's size, or none if it cannot be read.
std::optional<std::uintmax_t> file_bytes(const std::filesystem::path& file) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  return ec ? std::nullopt : std::optional(bytes);
}

std::string sized(const std::filesystem::path& file) {
  const auto bytes = file_bytes(file);
  return bytes ? file.string() + " (" + byte_text(*bytes) + ")" : file.string();
}

}  // namespace

std::string committed_line(const std::vector<std::filesystem::path>& files, double seconds,
                           bool ok) {
  // A file rewritten in one run (a features cache made again) is named once, however spelt; one
  // removed since is not named at all.
  std::vector<std::filesystem::path> unique;
  for (const auto& f : files) {
    std::error_code ec;
    const auto p = f.lexically_normal();
    if (std::filesystem::exists(p, ec) &&
        std::find(unique.begin(), unique.end(), p) == unique.end())
      unique.push_back(p);
  }
  if (unique.empty()) return "";
  std::string what, range;
  if (unique.size() <= 4) {
    for (std::size_t k = 0; k < unique.size(); ++k)
      what += (k == 0 ? "" : k + 1 == unique.size() ? " and " : ", ") + sized(unique[k]);
  } else {
    std::uintmax_t total = 0;
    for (const auto& f : unique) total += file_bytes(f).value_or(0);
    what = std::to_string(unique.size()) + " files (" + byte_text(total) + ")";
    range = ", from " + unique.front().string() + " to " + unique.back().string();
  }
  if (!ok) return "kept " + what + range + ", written before the failure";
  char time[32];
  if (seconds < 1e-3)
    std::snprintf(time, sizeof time, "%.2g ms", seconds * 1e3);
  else if (seconds < 59.95)
    std::snprintf(time, sizeof time, "%.3g s", seconds);
  else {
    const long s = std::lround(seconds);
    std::snprintf(time, sizeof time, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  }
  return "wrote " + what + " in " + time + range;
}

std::string shell_quote(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-+=/.,:@%#") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::vector<std::string> reproducible_args(const std::vector<std::string>& args) {
  // Flags that by contract cannot change an output: threads and logging.
  static const std::vector<std::string> with_value{"--threads", "--log-level", "--log-format"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // -q, -v, -vv and their clusters (-qv): CLI11 takes them in any spelling, and "-q -v" and
    // "-qv" must give the same bytes.
    if (i > 0 && (a == "--quiet" || a == "--verbose" ||
                  (a.size() >= 2 && a[0] == '-' && a[1] != '-' &&
                   a.find_first_not_of("qv", 1) == std::string::npos)))
      continue;
    bool skip = false;
    for (const auto& f : with_value) {
      if (a == f) {
        ++i;  // and its value
        skip = true;
      } else if (a.rfind(f + "=", 0) == 0) {
        skip = true;
      }
    }
    if (!skip) out.push_back(i == 0 ? std::filesystem::path(a).filename().string() : a);
  }
  return out;
}

std::vector<std::string> shell_split(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\'') {
        quoted = false;
      } else {
        word += c;
      }
    } else if (c == ' ') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

namespace {
std::vector<std::string> words_without_shard(const std::string& command_line) {
  const std::vector<std::string> words = shell_split(command_line);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--shard")
      ++i;
    else if (words[i].rfind("--shard=", 0) != 0)
      out.push_back(words[i]);
  }
  return out;
}
}  // namespace

std::string unsharded_command_line(const std::string& command_line) {
  return shell_quote(words_without_shard(command_line));
}

std::string merged_command_line(const std::string& shard_command_line, const std::string& output) {
  const std::vector<std::string> words = words_without_shard(shard_command_line);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "-o" || w == "--output") && i + 1 < words.size()) {
      out.push_back(w);
      out.push_back(output);
      ++i;
    } else if (w.rfind("--output=", 0) == 0) {
      out.push_back("--output=" + output);
    } else if (w.size() > 2 && w.rfind("-o", 0) == 0) {  // -oFILE, attached
      out.push_back("-o" + output);
    } else {
      out.push_back(w);
    }
  }
  return shell_quote(out);
}

std::optional<Shard> command_line_shard(const std::string& command_line) {
  const std::vector<std::string> words = shell_split(command_line);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string text;
    if (words[i] == "--shard" && i + 1 < words.size())
      text = words[i + 1];
    else if (words[i].rfind("--shard=", 0) == 0)
      text = words[i].substr(8);
    else
      continue;
    try {
      return parse_shard(text);
    } catch (const UsageError&) {
      return std::nullopt;  // the task would not have run
    }
  }
  return std::nullopt;
}

std::string missing_shards(const std::vector<std::string>& command_lines) {
  std::set<int> seen;  // not a vector of N: N may be any int
  int count = 0;
  for (const auto& line : command_lines) {
    const auto shard = command_line_shard(line);
    if (!shard || (count != 0 && shard->count != count)) return "";
    count = shard->count;
    seen.insert(shard->index);
  }
  const auto missing = static_cast<long long>(count) - static_cast<long long>(seen.size());
  if (command_lines.empty() || missing == 0) return "";
  std::vector<std::string> named;
  for (int k = 1; k <= count && named.size() < 8; ++k)
    if (!seen.count(k)) named.push_back(std::to_string(k));
  if (missing == 1) return "shard " + named.front() + " of " + std::to_string(count);
  std::string list;
  for (std::size_t i = 0; i < named.size(); ++i)
    list += (i == 0 ? "" : i + 1 == named.size() && missing <= 8 ? " and " : ", ") + named[i];
  if (missing <= 8) return "shards " + list + " of " + std::to_string(count);
  return std::to_string(missing) + " of " + std::to_string(count) + " shards (" + list +
         " and more)";
}

std::string mixed_shard_splits(const std::vector<std::string>& command_lines) {
  std::set<std::string> splits;
  std::set<int> counts;
  for (const auto& line : command_lines)
    if (const auto s = command_line_shard(line)) {
      splits.insert(std::to_string(s->index) + "/" + std::to_string(s->count));
      counts.insert(s->count);
    }
  std::string list;
  if (counts.size() > 1)
    for (const auto& s : splits) list += (list.empty() ? "" : ", ") + s;
  return list;
}

// ------------------------------------------------------------------------------------------------
// Context

Context::Context(std::string tool, std::string command, CommonOptions options,
                 std::string command_line)
    : tool_(std::move(tool)),
      command_(std::move(command)),
      options_(std::move(options)),
      command_line_(std::move(command_line)) {}

void Context::accept_config(const json& resolved) {
  resolved_ = resolved;
  spdlog::info("resolved config: {}", json_dump(resolved_));  // provenance (STYLE 11)
  if (options_.print_config) {
    std::printf("%s\n", json_dump(resolved_, 2).c_str());
    std::fflush(stdout);
    throw ExitRequest{0};
  }
}

void Context::record_config_value(const std::string& pointer, const json& value) {
  resolved_[json::json_pointer(pointer)] = value;
}

io::Provenance Context::provenance() const {
  io::Provenance p;
  p.generator = tool_ + (command_.empty() ? "" : " " + command_) + " " + kVersion;
  p.command_line = command_line_;
  p.config_json = json_dump(resolved_);
  return p;
}

json provenance_json(const io::Provenance& provenance) {
  json config = parse_json(provenance.config_json);
  if (config.is_discarded()) config = json::object();
  return {{"generator", provenance.generator},
          {"command_line", provenance.command_line},
          {"config", std::move(config)}};
}

std::optional<std::vector<std::int64_t>> Context::frames() const {
  if (options_.frames.empty()) return std::nullopt;
  return parse_frame_range(options_.frames);
}

Shard Context::shard() const {
  return parse_shard(options_.shard);
}

int Context::threads() const {
  if (options_.threads > 0) return options_.threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<std::filesystem::path> Context::inputs() const {
  return {options_.inputs.begin(), options_.inputs.end()};
}

std::filesystem::path Context::input() const {
  if (options_.inputs.size() != 1) {
    throw UsageError("-i/--input: expected exactly one input file, got " +
                     std::to_string(options_.inputs.size()));
  }
  return options_.inputs.front();
}

std::filesystem::path Context::output(const std::string& fallback) const {
  const std::filesystem::path out = output_template(fallback);
  // "-o out" naming a directory is the same mistake as "-o out/" (it was exit 1 there, 2 here).
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::symlink_status(out, ec)))
    throw UsageError("-o/--output: " + out.string() +
                     " is a directory; give a file name (or a #### template) in it");
  // Before any work, in a dry run (the farm's check before the job) and in a real one: a missing
  // or read-only output directory showed up only after the work where the tool opens its output
  // at the end (spring-fit simulate and fit, cloth-train train).
  io::check_writable_directory(out);
  return out;
}

std::filesystem::path Context::output_template(const std::string& fallback) const {
  std::filesystem::path out = options_.output;
  if (out.empty()) {
    out = fallback.empty() ? options_.output_default : fallback;
    if (out.empty()) throw UsageError("-o/--output: an output path is required");
  }
  // "out/" named a directory and became hidden files in it ("out/.obj"). (A directory named
  // without the slash is refused where the file is written: it is not replaced.)
  if (!out.has_filename())
    throw UsageError("-o/--output: " + out.string() +
                     " names a directory; give a file name (or a #### template) in it");
  refuse_input(out, "-o/--output");
  return out;
}

void Context::refuse_input(const std::filesystem::path& path, const std::string& what) const {
  for (const auto& in : options_.inputs)
    if (io::same_file(path, in))
      throw UsageError(what + ": " + path.string() +
                       " is also an input, which it would overwrite; give another file");
}

std::filesystem::path Context::side_output(const std::filesystem::path& path,
                                           const std::filesystem::path& main_output,
                                           const std::string& what) const {
  refuse_input(path, what);
  if (io::same_file(path, main_output))
    throw UsageError(what + ": " + path.string() +
                     " is also the output, which it would replace; give another file");
  return path;
}

// ------------------------------------------------------------------------------------------------
// Tool

struct Tool::Entry {
  CLI::App* app = nullptr;
  std::string command;
  CommonOptions options;
  Handler handler;
  Splits splits;
};

Tool::Tool(std::string name, std::string description)
    : name_(std::move(name)), app_(std::move(description), name_) {
  app_.set_version_flag("--version", name_ + " " + kVersion);
  app_.get_formatter()->column_width(34);
}

Tool::~Tool() = default;

void Tool::add_common_flags(CLI::App& app, CommonOptions& o, const Splits& splits) {
  // A flag the command does not honour still parses, so that it is refused with a message that
  // says why (Tool::run), but --help leaves it out: the help lists what the command takes.
  const auto shown = [](CLI::Option* option, bool honoured) {
    if (!honoured) option->group("");
  };
  shown(app.add_option("-c,--config", o.config,
                       "JSON config (comments allowed); default: " + splits.config_default)
            ->type_name("FILE"),
        splits.config);
  shown(app.add_option(
               "--set", o.sets,
               "Override one config value: a key as --print-config shows it, nested keys joined by "
               "dots (repeatable)")
            ->type_name("KEY=VALUE")
            ->allow_extra_args(false),
        splits.config);
  shown(app.add_option("-i,--input", o.inputs, splits.input_help)
            ->type_name("FILE")
            ->allow_extra_args(false),
        splits.inputs);
  o.output_default = splits.output_default;
  shown(app.add_option("-o,--output", o.output,
                       splits.output_help + (splits.output_default.empty()
                                                 ? std::string("; required")
                                                 : "; default: " + splits.output_default))
            ->type_name("PATH"),
        splits.output);
  shown(app.add_option("--frames", o.frames,
                       "Frames to compute or export: 1-100, 1-100x2, 1,5,10-20; default: all")
            ->type_name("LIST"),
        splits.frames);
  // Defaults in the text, as for the other flags: CLI11's "=1/1" after the type read as part of
  // it ("--threads N:N=0" with the validator's name).
  shown(app.add_option("--shard", o.shard,
                       "Do the K-th (1-based) of N equal parts of the work; default: 1/1")
            ->type_name("K/N"),
        splits.shards);
  // CLI11's NonNegativeNumber answered "abc" with a range up to a 300-digit number. A count of
  // a billion ran for 20 s and ended "out of memory" without naming the flag.
  const CLI::Validator whole_count(
      [](std::string& text) -> std::string {
        int n = -1;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec == std::errc() && end == text.data() + text.size() && n >= 0 && n <= kMaxThreads)
          return "";
        return "expected a whole number in [0, " + std::to_string(kMaxThreads) +
               "] (0: all cores), got '" + text + "'";
      },
      "");
  app.add_option("--threads", o.threads, "Worker threads; default 0 = all cores")
      ->type_name("N")
      ->check(whole_count);
  app.add_flag("-v,--verbose", o.verbose, "More log output (-v debug, -vv trace)");
  app.add_flag("-q,--quiet", o.quiet, "Only warnings and errors");
  app.add_option("--log-level", o.log_level,
                 "trace|debug|info|warn|error|off; overrides -v/-q; default: info (debug with -v, "
                 "trace with -vv, warn with -q)")
      ->type_name("LEVEL");
  app.add_option("--log-format", o.log_format,
                 "Log lines as text or as JSON objects; default: text")
      ->type_name("text|json");
  shown(app.add_flag("--print-config", o.print_config,
                     "Print the resolved config (defaults filled in) and exit"),
        splits.config);
  app.add_flag("--dry-run", o.dry_run,
               "Validate everything, print what would be done, write nothing");
}

CLI::App& Tool::main(Handler handler, Splits splits) {
  auto e = std::make_unique<Entry>();
  e->splits = splits;
  e->app = &app_;
  e->handler = std::move(handler);
  add_common_flags(app_, e->options, splits);
  entries_.push_back(std::move(e));
  return app_;
}

CLI::App& Tool::command(const std::string& name, const std::string& description, Handler handler,
                        Splits splits) {
  auto e = std::make_unique<Entry>();
  e->splits = splits;
  e->app = app_.add_subcommand(name, description);
  // Every command takes the common flags, --version included (docs/command-line.md).
  e->app->set_version_flag("--version", name_ + " " + kVersion);
  e->command = name;
  e->handler = std::move(handler);
  add_common_flags(*e->app, e->options, splits);
  app_.require_subcommand(1);
  CLI::App& sub = *e->app;
  entries_.push_back(std::move(e));
  return sub;
}

namespace {

/// The common flags' grammar and what the command takes (docs/command-line.md), and the
/// environment variables a run reads; throws UsageError before any work starts. `what` names the
/// command in messages ("mps-gen", "cloth-train train").
void check_flags_and_environment(const CLI::App& app, const Splits& splits, const CommonOptions& o,
                                 const Context& ctx, const std::string& what) {
  // An empty path or list given on purpose is a mistake (an unset shell variable), not "use the
  // default".
  for (const auto& [flag, empty] :
       {std::pair{"-o", o.output.empty()}, std::pair{"-c", o.config.empty()},
        std::pair{"--frames", o.frames.empty()}})
    if (empty && app.count(flag) > 0)
      throw UsageError(std::string(flag) + ": expected a value, got an empty one");
  for (const auto& in : o.inputs)
    if (in.empty()) throw UsageError("-i/--input: expected a file, got an empty path");
  if (ctx.frames() && !splits.frames)
    throw UsageError("--frames: " + what + " works on whole sequences and takes no frame list");
  if (ctx.shard().count != 1 && !splits.shards)
    throw UsageError("--shard: " + what + " cannot be split into shards");
  if (!splits.inputs && !o.inputs.empty())
    throw UsageError("-i/--input: " + what + " reads no input file");
  if (!splits.output && app.count("-o") > 0)
    throw UsageError("-o/--output: " + what + " writes no file (it prints to stdout)");
  if (!splits.config && (!o.config.empty() || !o.sets.empty() || o.print_config))
    throw UsageError(std::string(!o.config.empty() ? "-c/--config"
                                 : !o.sets.empty() ? "--set"
                                                   : "--print-config") +
                     ": " + what + " takes no config");
  // A malformed SOURCE_DATE_EPOCH fell back to the clock, and outputs silently stopped being
  // reproducible (reproducible-builds.org asks tools to fail instead). Up to the end of 9999,
  // so that created_utc stays ISO 8601.
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    const std::string text = epoch;
    const bool digits = !text.empty() && text.size() <= 12 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(text) > 253402300799LL)
      throw UsageError(
          "SOURCE_DATE_EPOCH: expected whole seconds since 1970 up to 253402300799 "
          "(9999-12-31), got \"" +
          text + "\"");
  }
  if (const char* simd = std::getenv("DATADYN_SIMD"); simd && !parse_simd_level(simd))
    throw UsageError(std::string("DATADYN_SIMD: expected baseline, avx2 or avx512, got \"") + simd +
                     "\"");
}

/// Logs the exception being handled and returns its exit code: 2 for the command line and the
/// config, 1 for everything else (bad data, a failed run, I/O, memory), an ExitRequest's own.
int log_current_exception() {
  try {
    throw;
  } catch (const ExitRequest& r) {
    return r.code;
  } catch (const UsageError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const InternalError& e) {
    spdlog::error("internal error: {}", e.what());
  } catch (const std::bad_alloc&) {
    spdlog::error(
        "out of memory: the inputs or settings ask for more than this machine has "
        "(check sizes, counts and spacings in the config)");
  } catch (const std::length_error&) {
    spdlog::error(
        "out of memory: the inputs or settings ask for an array larger than any "
        "machine holds (check sizes, counts and spacings in the config)");
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  } catch (...) {
    spdlog::error("internal error: an exception of unknown type");
  }
  return 1;
}

}  // namespace

int Tool::run(int argc, char** argv) {
  io::skip_hdf5_cleanup_at_exit();
  // A misspelt command: CLI11 says only "A subcommand is required".
  std::vector<std::string> commands;
  for (const auto& e : entries_)
    if (!e->command.empty()) commands.push_back(e->command);
  // Errors in the command line come before the logger: with --log-format json they are JSON
  // lines too, so that a farm's log collector sees them (they were plain text).
  bool json = false;
  for (int i = 1; i < argc; ++i)
    json |= std::string_view(argv[i]) == "--log-format=json" ||
            (std::string_view(argv[i]) == "--log-format" && i + 1 < argc &&
             std::string_view(argv[i + 1]) == "json");
  if (!commands.empty() && argc > 1 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    log_early_error(name_,
                    "unknown command \"" + std::string(argv[1]) + "\"" +
                        nearest_of(argv[1], commands, "commands"),
                    json);
    return 2;
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (json && e.get_exit_code() != 0) {
      log_early_error(name_, e.what(), true);
      return 2;
    }
    errno = 0;  // a failed write of the help below leaves its reason here
    const int code = app_.exit(e);
    if (code != 0) return 2;  // CLI11 uses 100+ for parse errors; our contract says 2
    // --help or --version: what they print must reach stdout, as any run's output must.
    std::cout.flush();
    if ((!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) && errno != EPIPE) {
      log_early_error(name_,
                      std::string("stdout: cannot write what the run printed: ") +
                          std::strerror(errno != 0 ? errno : EIO),
                      json);
      return 1;
    }
    return 0;
  }
  Entry* chosen = nullptr;
  for (auto& e : entries_)
    if (e->command.empty() || e->app->parsed()) chosen = e.get();
  if (!chosen) {
    log_early_error(name_, "expected a subcommand (see --help)", json);
    return 2;
  }
  const CommonOptions& o = chosen->options;
  std::vector<std::string> args(argv, argv + argc);
  try {
    std::string level = o.log_level;
    if (level.empty())
      level = o.quiet ? "warn" : o.verbose >= 2 ? "trace" : o.verbose == 1 ? "debug" : "info";
    setup_logging(name_, level, o.log_format);
  } catch (const Error& e) {
    log_early_error(name_, e.what(), json && o.log_format == "json");
    return 2;
  }
  install_interrupt_handlers();
  io::report_hdf5_crashes(&error_log_line);
  const auto started = std::chrono::steady_clock::now();
  int code = 0;
  try {
    Context ctx(name_, chosen->command, o, shell_quote(reproducible_args(args)));
    check_flags_and_environment(*chosen->app, chosen->splits, o, ctx,
                                name_ + (chosen->command.empty() ? "" : " " + chosen->command));
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(ctx.threads()));
    spdlog::info("{}{} {} ({} thread{})", name_,
                 chosen->command.empty() ? "" : " " + chosen->command, kVersion, ctx.threads(),
                 ctx.threads() == 1 ? "" : "s");
    // Every file of the run takes its name when the run has succeeded (io::HeldCommits).
    io::HeldCommits held;
    chosen->handler(ctx);
    held.commit();
  } catch (...) {
    code = log_current_exception();
  }
  // What the run printed (--print-config, a listing, a dry run's files) must have reached
  // stdout: `--print-config > scene.json` on a full disk left an empty file with exit 0.
  // A reader that went away on purpose (`| head -1`) is not a failure.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    if (err != EPIPE) {
      spdlog::error("stdout: cannot write what the run printed: {}", std::strerror(err));
      if (code == 0) code = 1;
    }
  }
  const std::string line = committed_line(
      io::take_committed(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), code == 0);
  // What a failed run kept is a warning, so that -q (farm scripts) still shows it.
  if (!line.empty()) spdlog::log(code == 0 ? spdlog::level::info : spdlog::level::warn, "{}", line);
  return code;
}

}  // namespace datadyn::app
