// mps-gen: the breaking-wave database of Chiba et al. 2011 - many 2D MPS simulations of a water
// column collapsing in a tank with a beach, one cache sequence per simulation
// (docs/tools/mps-gen.md).

#include <cstdio>

#include <spdlog/spdlog.h>

#include "app/tool.hpp"
#include "fluid/fluid_io.hpp"

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("mps-gen", "2D MPS breaking-wave database (Chiba et al. 2011)");
  tool.main(
      [](app::Context& ctx) {
        const auto params = ctx.config<fluid::DatabaseParams>(fluid::read_database_params);
        const auto all = fluid::sweep_simulations(params.scene, params.sweep);
        const auto sims = shard_part(all, ctx.shard());
        fluid::RunOptions run;
        run.frames = fluid::output_frames(params.scene, ctx.frames());
        run.threads = ctx.threads();
        const auto out = ctx.output();
        if (ctx.dry_run()) {
          std::printf("would write %zu of %zu simulations to %s\n%s", sims.size(), all.size(),
                      out.c_str(), fluid::database_plan(params, sims, run.frames).c_str());
          return;
        }
        if (sims.empty())
          spdlog::warn("shard {} has no simulations: writing an empty cache", ctx.options().shard);
        io::CacheWriter writer(out, ctx.provenance());
        fluid::write_database(params, sims, run, writer);
        writer.commit();
      },
      app::Splits{.frames = true,
                  .shards = true,
                  .config_default = "built-in scene",
                  .inputs = false,
                  .output_default = "db.h5"});
  return tool.run(argc, argv);
}
