// dd-cache: look into datadyn caches. `info` lists what a cache holds; `check` validates it and
// reads every frame of every dataset (exit 1 naming file, dataset and frame on the first fault);
// `merge` joins the outputs of a sharded run into the cache the single run would have written.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include <spdlog/spdlog.h>

#include "app/progress.hpp"
#include "app/tool.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/cache_merge.hpp"
#include "io/cache_summary.hpp"

namespace {

/// The merge holds every shard open at once: it raises the process's soft limit of open files to
/// the hard one where `inputs` need it (a farm's 1,024 failed a merge of a frame-per-task array
/// at shard 1,020), and says how to merge where even the hard limit is too low.
void ensure_open_files(std::size_t inputs) {
  const rlim_t need = static_cast<rlim_t>(inputs) + 8;  // stdio, the output, the libraries
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= need) return;
  const rlim_t can = limit.rlim_max;
  limit.rlim_cur = std::min(need, can);
  setrlimit(RLIMIT_NOFILE, &limit);
  if (can < need)
    throw datadyn::UsageError(
        "-i/--input: " + std::to_string(inputs) + " shards, but this process may open only " +
        std::to_string(can) +
        " files at once (ulimit -Hn): merge them in groups, then merge the groups' caches (the "
        "result is the same)");
}

using datadyn::app::Context;
using datadyn::app::counted;

void info(Context& ctx) {
  if (ctx.inputs().empty()) throw datadyn::UsageError("-i/--input: give at least one cache");
  for (const auto& in : ctx.inputs()) std::fputs(datadyn::io::cache_summary(in).c_str(), stdout);
}

void check(Context& ctx) {
  if (ctx.inputs().empty()) throw datadyn::UsageError("-i/--input: give at least one cache");
  for (const auto& in : ctx.inputs()) {
    datadyn::io::check_cache(in, [&](const std::string& name, std::size_t frames) {
      spdlog::info("{}: /sequences/{}: {} frames ok", in.string(), name, frames);
    });
    std::printf("%s: ok\n", in.c_str());
  }
}

/// Warns of work the merged cache `out` may lack although every input merged: gaps in a
/// sequence's frames, shards a failed run kept, shards of different splits, and shards that
/// are not among the inputs.
void warn_of_missing_work(const std::vector<std::filesystem::path>& inputs,
                          const std::filesystem::path& out,
                          const datadyn::io::MergeResult& merged) {
  for (const auto& gap : merged.gaps)
    spdlog::warn("{}: /sequences/{} (a shard missing or cut short?)", out.string(), gap);
  // A shard of a run split by simulations (mps-gen, cloth-train) leaves no gap in any
  // sequence's frames when it is missing: the command lines name the shards there were.
  std::vector<std::string> lines;
  for (const auto& in : inputs) {
    const datadyn::io::CacheReader reader(in);
    lines.push_back(reader.provenance().command_line);
    // A run that failed and kept what it finished says so (mps-gen's shard cut short).
    const auto attributes = reader.attributes("/");
    if (const auto it = attributes.find("incomplete"); it != attributes.end())
      spdlog::warn("{}: /@incomplete: {}: {} lacks what that run did not finish", in.string(),
                   datadyn::io::attribute_string(it->second), out.string());
  }
  // Shards of different splits of one run (1/3 with 2/2) cover its work by chance only.
  if (const auto mixed = datadyn::app::mixed_shard_splits(lines); !mixed.empty())
    spdlog::warn(
        "{}: the inputs are shards of different splits ({}): simulations or frames may be "
        "missing",
        out.string(), mixed);
  if (const auto missing = datadyn::app::missing_shards(lines); !missing.empty())
    spdlog::warn(
        "{}: {} not among the inputs (their command lines name --shard): their sequences or "
        "frames are missing",
        out.string(), missing);
}

void merge(Context& ctx) {
  if (ctx.inputs().empty()) throw datadyn::UsageError("-i/--input: give the shards' caches");
  const auto out = ctx.output();
  if (out.empty()) throw datadyn::UsageError("-o/--output: give the merged cache");
  ensure_open_files(ctx.inputs().size());
  if (ctx.dry_run()) {
    // A sequence split across shards (sm-example-sim's frames) is one sequence of the merged
    // cache, as the merge counts it: the sum over the shards counted it once per shard.
    std::set<std::string> sequences;
    for (const auto& in : ctx.inputs())
      for (const auto& name : datadyn::io::CacheReader(in).sequence_names()) sequences.insert(name);
    datadyn::io::check_writable_directory(out);
    std::printf("would merge %s (%s in all) into %s\n",
                counted(ctx.inputs().size(), "cache", "caches").c_str(),
                counted(sequences.size(), "sequence", "sequences").c_str(), out.c_str());
    return;
  }
  spdlog::info("reading every frame of the {} first (a damaged shard stops the merge)",
               counted(ctx.inputs().size(), "cache", "caches"));
  // The chunk count is known once the merge has read the inputs.
  std::optional<datadyn::app::Progress> progress;
  const auto r = datadyn::io::merge_caches(
      ctx.inputs(), out,
      [&](const std::string& shard_line) {
        return datadyn::app::merged_command_line(shard_line, out.string());
      },
      [&](std::size_t done, std::size_t total) {
        if (!progress && total > 0) progress.emplace("chunk", total);
        if (!progress) return datadyn::app::check_interrupted();
        const bool last = done == total && progress->done() < total;
        progress->callback()(done, total);
        if (!last) return;
        progress->finish();  // the copy is done; the canonical rewrite takes about as long again
        spdlog::info("rewriting {} in the canonical layout and reading it back", out.string());
      });
  spdlog::info("merged {} into {}: {}, {} ({} split)",
               counted(ctx.inputs().size(), "cache", "caches"), out.string(),
               counted(r.sequences, "sequence", "sequences"), counted(r.frames, "frame", "frames"),
               r.split_sequences);
  warn_of_missing_work(ctx.inputs(), out, r);
}

}  // namespace

int main(int argc, char** argv) {
  datadyn::app::Tool tool("dd-cache", "Inspect, check and merge datadyn caches");
  tool.command("info", "List the sequences, arrays, grids and provenance of caches", info,
               {.config = false,
                .input_help = "Caches to list; one or more, repeatable, required",
                .output = false});
  tool.command("check", "Validate caches and read every frame of every dataset", check,
               {.config = false,
                .input_help = "Caches to check; one or more, repeatable, required",
                .output = false});
  tool.command("merge", "Merge the caches of a sharded run (-i per shard) into one (-o)", merge,
               {.config = false,
                .input_help = "The shards' caches, one -i per shard, in any order; required"});
  return tool.run(argc, argv);
}
