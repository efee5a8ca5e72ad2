// dd-cache: look into datadyn caches. `info` lists what a cache holds; `check` validates it and
// reads every frame of every dataset (exit 1 naming file, dataset and frame on the first fault).

#include <cstdio>

#include <spdlog/spdlog.h>

#include "app/tool.hpp"
#include "io/cache_summary.hpp"

int main(int argc, char** argv) {
  using datadyn::app::Context;
  datadyn::app::Tool tool("dd-cache", "Inspect and check datadyn caches");
  tool.command("info", "List the sequences, arrays, grids and provenance of caches",
               [](Context& ctx) {
                 if (ctx.inputs().empty())
                   throw datadyn::UsageError("-i/--input: give at least one cache");
                 for (const auto& in : ctx.inputs())
                   std::fputs(datadyn::io::cache_summary(in).c_str(), stdout);
               });
  tool.command("check", "Validate caches and read every frame of every dataset", [](Context& ctx) {
    if (ctx.inputs().empty()) throw datadyn::UsageError("-i/--input: give at least one cache");
    for (const auto& in : ctx.inputs()) {
      datadyn::io::check_cache(in, [&](const std::string& name, std::size_t frames) {
        spdlog::info("{}: /sequences/{}: {} frames ok", in.string(), name, frames);
      });
      std::printf("%s: ok\n", in.c_str());
    }
  });
  return tool.run(argc, argv);
}
