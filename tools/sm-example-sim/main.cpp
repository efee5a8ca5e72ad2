// sm-example-sim: example-based elastic bodies by shape matching (Koyama et al. 2013). Simulates
// the scene of the config (built-in default: a twisted cuboid dropped on the floor) and writes one
// cache with the exported surface, the particles and the example weights of every body
// (docs/tools/sm-example-sim.md). A run that diverges keeps the frames before it and exits 1.

#include <cstdio>

#include <spdlog/spdlog.h>

#include "app/frame_range.hpp"
#include "app/tool.hpp"
#include "core/errors.hpp"
#include "elastic/elastic_io.hpp"
#include "io/atomic_file.hpp"

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("sm-example-sim",
                 "Example-based elastic bodies by shape matching (Koyama et al. 2013)");
  tool.main(
      [](app::Context& ctx) {
        const auto config = ctx.config<elastic::SceneConfig>(elastic::read_scene_config);
        const auto frames = shard_part(
            app::frames_within(config.frames, ctx.frames(), " (the scene's frames)"), ctx.shard());
        const auto note = [](elastic::Note level, const std::string& text) {
          spdlog::log(level == elastic::Note::Warning ? spdlog::level::warn : spdlog::level::info,
                      "{}", text);
        };
        elastic::Scene scene = elastic::build_scene(config, ctx.config_origins(), note);
        const auto out = ctx.output();
        if (ctx.dry_run()) {
          std::printf(
              "would simulate %s to frame %lld and write %s to %s (%s of frame arrays "
              "before compression)\n",
              app::counted(scene.bodies.size(), "body", "bodies").c_str(),
              frames.empty() ? 0LL : static_cast<long long>(frames.back()),
              app::counted(frames.size(), "frame", "frames").c_str(), out.c_str(),
              app::byte_text(elastic::frame_bytes(scene) * frames.size()).c_str());
          return;
        }
        app::Progress progress("frame", frames.size());
        const auto report = elastic::simulate_to_cache(
            scene, config, frames, out, ctx.provenance(), [&](std::size_t, std::size_t, double ms) {
              char text[48];
              std::snprintf(text, sizeof text, "%.3f ms/step", ms);
              progress.tick(1, text);
            });
        progress.finish();
        if (!report.ok) {
          io::commit_held_files();  // the frames before the divergence are kept
          throw RunError(report.message);
        }
      },
      app::Splits{.frames = true,
                  .shards = true,
                  .config_default = "built-in scene",
                  .inputs = false,
                  .output_default = "elastic.h5"});
  return tool.run(argc, argv);
}
