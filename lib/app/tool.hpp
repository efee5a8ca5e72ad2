#pragma once
/// @file
/// What every datadyn tool shares: the common flags of DESIGN.md, config loading, logging, threads,
/// progress, provenance, and the mapping of failures to exit codes (0 success; 1 a run that
/// failed: bad input data, divergence, I/O; 2 a usage or config error, CLI11's parse errors
/// included; --help and --version 0). A tool's main() is a few lines:
///
///   int main(int argc, char** argv) {
///     datadyn::app::Tool tool("mps-gen", "2D MPS breaking-wave database");
///     tool.main([](datadyn::app::Context& ctx) {
///       auto params = ctx.config<fluid::DatabaseParams>(fluid::read_params);
///       ...
///     });
///     return tool.run(argc, argv);
///   }

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/config.hpp"
#include "app/progress.hpp"
#include "core/shard.hpp"
#include "io/cache.hpp"

namespace datadyn::app {

/// The flags every tool and subcommand takes (DESIGN.md, "The command line").
struct CommonOptions {
  std::string config;               ///< -c, --config FILE
  std::vector<std::string> sets;    ///< --set key.path=value (repeatable)
  std::vector<std::string> inputs;  ///< -i, --input FILE (repeatable)
  std::string output;               ///< -o, --output FILE or template with ####
  std::string frames;               ///< --frames 1-100 | 1-100x2 | 1,5,10-20
  std::string shard = "1/1";        ///< --shard K/N
  int threads = 0;                  ///< --threads N (0: all cores)
  int verbose = 0;                  ///< -v (repeatable)
  bool quiet = false;               ///< -q
  std::string log_level;            ///< --log-level (overrides -v/-q)
  std::string log_format = "text";  ///< --log-format text|json
  bool print_config = false;        ///< --print-config
  bool dry_run = false;             ///< --dry-run
  std::string output_default;       ///< -o when not given (Splits::output_default)
};

/// Thrown to end a run early with an exit code (e.g. after --print-config).
struct ExitRequest {
  int code = 0;
};

/// What a tool's handler gets: the parsed common options and helpers built on them.
class Context {
 public:
  Context(std::string tool, std::string command, CommonOptions options, std::string command_line);

  const std::string& tool() const { return tool_; }
  /// The subcommand ("" for a tool without subcommands).
  const std::string& command() const { return command_; }
  const CommonOptions& options() const { return options_; }

  /// Reads the config (--config, --set) into a Params struct with `read`, rejects unknown keys,
  /// logs the resolved config (info level), and for --print-config prints it to stdout and
  /// ends the run (exit 0).
  template <class P>
  P config(const std::function<void(ConfigReader&, P&)>& read, P params = P{}) {
    ConfigReader reader = ConfigReader::load(
        options_.config.empty() ? std::nullopt
                                : std::optional<std::filesystem::path>(options_.config),
        options_.sets);
    read(reader, params);
    reader.finish();
    accept_config(reader.resolved());
    return params;
  }
  /// The config's name in messages: the --config file, or "<defaults>".
  std::string config_source() const {
    return options_.config.empty() ? "<defaults>" : options_.config;
  }
  /// Where the value of a config key (dotted: "meshing.iso_value") came from, named as config
  /// errors name it: "--set <key>" if a --set gave it or part of it, else config_source().
  std::string config_origin(const std::string& key) const { return config_origins()({key}); }
  /// The same for any keys, to pass to checks made while running (ConfigOrigin).
  ConfigOrigin config_origins() const { return ConfigOrigin(config_source(), options_.sets); }
  /// The resolved config of the last config() call (an empty object before).
  const json& resolved_config() const { return resolved_; }
  /// Records in the resolved config (and so in every output's provenance) a value that the run
  /// took from its inputs instead of the config's default, e.g. a model's DSDS factor: the
  /// stored config then reproduces the run. `pointer` is a JSON pointer ("/dsds_factor").
  void record_config_value(const std::string& pointer, const json& value);

  /// Provenance for outputs: generator "<tool> <version>", the command line, the resolved config.
  io::Provenance provenance() const;

  /// The --frames list, if given. Throws UsageError when malformed.
  std::optional<std::vector<std::int64_t>> frames() const;
  Shard shard() const;
  bool dry_run() const { return options_.dry_run; }
  int threads() const;

  /// The -i files (none if not given).
  std::vector<std::filesystem::path> inputs() const;
  /// Exactly one -i file; throws UsageError otherwise.
  std::filesystem::path input() const;
  /// The -o path, or `fallback` when -o was not given (empty fallback: the command's
  /// Splits::output_default; both empty: -o is required). Throws
  /// UsageError if it names an input, which writing it would destroy. Also checks that its
  /// directory takes files (IoError otherwise), so that no work is done for nothing.
  std::filesystem::path output(const std::string& fallback = "") const;
  /// The -o path template of a writer that expands it into files (`{sequence}` may name
  /// directories): as output(), but the directories are the writer's to check, file by file.
  std::filesystem::path output_template(const std::string& fallback = "") const;
  /// Throws UsageError naming `what` if `path`, a file the command will write, is an input.
  void refuse_input(const std::filesystem::path& path, const std::string& what) const;
  /// `path` as a second output (a report, a plot) beside `main_output`; throws UsageError naming
  /// `what` ("--report", "/report") if it is an input or the main output, which it would replace.
  std::filesystem::path side_output(const std::filesystem::path& path,
                                    const std::filesystem::path& main_output,
                                    const std::string& what) const;

 private:
  void accept_config(const json& resolved);

  std::string tool_, command_;
  CommonOptions options_;
  std::string command_line_;
  json resolved_ = json::object();
};

using Handler = std::function<void(Context&)>;

/// The ways a command splits its work. `--frames` or `--shard K/N` given to a command that does
/// not split that way is refused (exit 2) before any work starts, never silently ignored.
struct Splits {
  bool frames = false;  ///< honours --frames
  bool shards = false;  ///< honours --shard K/N
  bool config = true;   ///< reads a JSON config (-c, --set); false: either flag is a usage error
  /// What the command runs on without -c, for --help ("built-in scene", "built-in defaults").
  std::string config_default = "built-in defaults";
  bool inputs = true;  ///< reads -i files; false: -i is a usage error (it would be ignored)
  /// What the -i files are and how many the command reads (one, one or more, required), for
  /// --help: "The database (mps-gen's cache); exactly one, required".
  std::string input_help = "Input cache (repeatable)";
  bool output = true;  ///< writes -o; false: -o is a usage error (it would be ignored)
  /// The output when -o is not given ("": -o is required); --help shows it.
  std::string output_default{};
  /// What -o names, for --help.
  std::string output_help = "Output file";
};

class Tool {
 public:
  Tool(std::string name, std::string description);
  ~Tool();

  /// For a tool without subcommands: the handler and the CLI11 app (to add tool flags to).
  CLI::App& main(Handler handler, Splits splits = {});
  /// A subcommand with the common flags.
  CLI::App& command(const std::string& name, const std::string& description, Handler handler,
                    Splits splits = {});

  /// Parses argv, sets up logging and threads, runs the chosen handler and returns the exit code.
  int run(int argc, char** argv);

 private:
  struct Entry;
  void add_common_flags(CLI::App& app, CommonOptions& options, const Splits& splits);

  std::string name_;
  CLI::App app_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

/// Provenance for JSON reports: {"generator", "command_line", "config" (the resolved config as
/// an object)}. No time: a report is the same bytes for the same inputs.
json provenance_json(const io::Provenance& provenance);

/// argv as one shell-quoted line (provenance; re-runnable by copy and paste).
std::string shell_quote(const std::vector<std::string>& args);

/// argv without the flags that by contract cannot change an output (--threads, -v, -q,
/// --log-level, --log-format), so the recorded command line, and with it the output's bytes, is
/// the same for any thread count; the program by its file name, not the path it was run by.
std::vector<std::string> reproducible_args(const std::vector<std::string>& args);

/// The words of a line made by shell_quote (plain words, '...' quoting, \' escapes).
std::vector<std::string> shell_split(const std::string& line);

/// The closing log line of a run that put `files` in place (io::take_committed), or "" for none:
/// "wrote a.h5 (1.2 MB) in 3.4 s"; up to four files by name, more as a count with the first and
/// the last. `ok` false (the run failed): "kept a.h5 (1.2 MB), written before the failure".
/// Sizes are read from the files; a file that is gone is left out.
std::string committed_line(const std::vector<std::filesystem::path>& files, double seconds,
                           bool ok);

/// A recorded command line without `--shard K/N`: what mesh files record, so that a frame's file
/// is the same bytes whichever shard wrote it (a cache keeps the flag for dd-cache merge).
std::string unsharded_command_line(const std::string& command_line);

/// The command line a cache merged from shards records: a shard's recorded line without
/// `--shard K/N` and with its output (`-o`, `--output`) replaced by `output` - the line the
/// single-machine run writing `output` records, so that the merged bytes equal that run's.
std::string merged_command_line(const std::string& shard_command_line, const std::string& output);

/// The `--shard K/N` of a command line (either spelling), if it has one.
std::optional<Shard> command_line_shard(const std::string& command_line);

/// For the command lines of a run's shard outputs, the shards of the N they all name that none
/// of them is, so a merge can warn of a shard not given: "shard 2 of 3", "shards 2 and 5 of 10",
/// "9,990 of 10,000 shards (2, 3, ... 9 and more)" (at most eight named). Empty when they are
/// complete, when one has no --shard, or when their N differ.
std::string missing_shards(const std::vector<std::string>& command_lines);

/// The `K/N` of each command line ("1/3, 2/2") when they name shards of more than one N (splits
/// of one run that cover it by chance only), else empty.
std::string mixed_shard_splits(const std::vector<std::string>& command_lines);

}  // namespace datadyn::app
