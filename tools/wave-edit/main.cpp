// wave-edit: shape a 3D wave by drawing its cross-section (Chiba et al. 2011). Reads a database
// made by mps-gen, picks a simulation per slice (greedy eq. 8 or the exact maximum of eq. 7),
// and writes the blended 3D level set per frame, a JSON report and an SVG picture.

#include "app/tool.hpp"
#include "io/atomic_file.hpp"
#include "io/path_template.hpp"
#include "wave/wave_io.hpp"

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("wave-edit",
                 "Shape a 3D wave from a database of 2D simulations by its cross-section");
  std::string report, plot;
  CLI::App& cli = tool.main(
      [&](app::Context& ctx) {
        const auto params = ctx.config<wave::EditParams>(wave::read_edit_params);
        wave::EditRun run;
        run.origin = ctx.config_origins();
        run.database = ctx.input();
        run.output = ctx.output();
        run.report = ctx.side_output(report.empty() ? io::sidecar(run.output, ".report.json")
                                                    : std::filesystem::path(report),
                                     run.output, "--report");
        run.plot = ctx.side_output(
            plot.empty() ? io::sidecar(run.output, ".heights.svg") : std::filesystem::path(plot),
            run.output, "--plot");
        // The features cache is rewritten when it does not match: it must not be an input, the
        // output, the report or the picture (features = the database destroyed it).
        run.features =
            ctx.side_output(params.features.empty() ? io::sidecar(run.database, ".features.h5")
                                                    : std::filesystem::path(params.features),
                            run.output, ctx.config_origin("features") + ": /features");
        if (io::same_file(run.plot, run.report))
          throw UsageError("--plot: " + run.plot.string() +
                           " is also the report; give another file");
        for (const auto& [side, what] : {std::pair{run.report, "--report"}, {run.plot, "--plot"}})
          if (io::same_file(side, run.features))
            throw UsageError(std::string(what) + ": " + side.string() +
                             " is also the features cache; give another file");
        run.frames = ctx.frames();
        run.shard = ctx.shard();
        run.dry_run = ctx.dry_run();
        run.provenance = ctx.provenance();
        wave::run_wave_edit(params, run);
      },
      app::Splits{.frames = true,
                  .shards = true,
                  .config_default = "built-in edit (configs/water/edit.json's)",
                  .input_help = "The database (mps-gen's cache); exactly one, required",
                  .output_default = "surface.h5"});
  cli.add_option("--report", report, "Report JSON; default: <output without .h5>.report.json")
      ->type_name("FILE");
  cli.add_option(
         "--plot", plot,
         "Picture of target and achieved heights (SVG); default: <output without .h5>.heights.svg")
      ->type_name("FILE");
  return tool.run(argc, argv);
}
