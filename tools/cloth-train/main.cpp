// cloth-train: miniature cloth simulated cheaply and upscaled by a small network (Lee, Oh, Lee
// 2019; docs/tools/cloth-train.md). simulate -> train -> upscale -> evaluate.

#include "app/tool.hpp"
#include "cloth/cloth_io.hpp"

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("cloth-train", "Miniature cloth and upscaling network (Lee, Oh, Lee 2019)");
  auto config = [](app::Context& ctx) {
    return ctx.config<cloth::ClothConfig>(cloth::read_cloth_config);
  };
  tool.command(
      "simulate", "Simulate the target cloth: one sequence per run of the variations",
      [&](app::Context& ctx) { cloth::run_simulate(ctx, config(ctx)); },
      app::Splits{.shards = true,
                  .config_default = "built-in scene",
                  .inputs = false,
                  .output_default = "cloth_target.h5"});
  tool.command(
      "train", "Train the upscaling network on target caches (-i) into a model (-o)",
      [&](app::Context& ctx) { cloth::run_train(ctx, config(ctx)); },
      app::Splits{.config_default = "built-in scene",
                  .input_help = "Target caches (from simulate); one or more, repeatable, required",
                  .output_default = "cloth_model.h5"});
  std::string method;
  tool.command(
          "upscale", "Simulate the miniature (or read one, second -i) and upscale it",
          [&](app::Context& ctx) { cloth::run_upscale(ctx, config(ctx), method); },
          app::Splits{.shards = true,
                      .config_default = "built-in scene",
                      .input_help = "The model (from train; required for --method network), then "
                                    "at most one miniature cache (default: the miniature is "
                                    "simulated)",
                      .output_default = "cloth_upscaled.h5"})
      .add_option("--method", method,
                  "network | bilinear | biquadratic | bicubic (default: config upscale.method)")
      ->check(CLI::IsMember({"network", "bilinear", "biquadratic", "bicubic"}));
  tool.command(
      "evaluate", "Errors and ms/frame against a target cache (-i target.h5 -i model.h5 ...)",
      [&](app::Context& ctx) { cloth::run_evaluate(ctx, config(ctx)); },
      app::Splits{.config_default = "built-in scene",
                  .input_help = "The target cache (from simulate), then one or more models (from "
                                "train); at least two, required",
                  .output_default = "cloth_eval"});
  return tool.run(argc, argv);
}
