// mesh-export: datadyn caches to the files DCC tools and renderers open: OBJ/PLY sequences,
// PC2/MDD point caches, USDA, OpenVDB level sets, and XDMF sidecars for ParaView
// (docs/tools/mesh-export.md).

#include <cstdio>

#include <spdlog/spdlog.h>

#include "app/mesh_export_params.hpp"
#include "app/tool.hpp"
#include "io/mesh_export.hpp"

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("mesh-export", "Export datadyn caches to OBJ, PLY, PC2, MDD, USDA, VDB, XDMF");
  app::MeshExportFlags flags;
  CLI::App& cli = tool.main(
      [&](app::Context& ctx) {
        io::Provenance provenance;
        const io::MeshExportParams params = app::mesh_export_params(ctx, flags, provenance);
        auto note = [](io::NoteLevel level, const std::string& text) {
          if (level == io::NoteLevel::Warning)
            spdlog::warn("{}", text);
          else
            spdlog::info("{}", text);
        };
        if (params.dry_run) {
          const auto plan = io::export_cache(params, provenance, {}, note);
          std::printf("would write %s (%s):\n",
                      app::counted(plan.files.size(), "file", "files").c_str(),
                      app::counted(plan.frames, "frame", "frames").c_str());
          for (const auto& f : plan.files) std::printf("%s\n", f.c_str());
          return;
        }
        // Count the frames first (a dry run reads no frame data), so progress shows a total.
        io::MeshExportParams plan_params = params;
        plan_params.dry_run = true;
        const auto plan = io::export_cache(plan_params, provenance, {}, {});
        app::Progress progress("frame", plan.frames);
        io::export_cache(params, provenance, progress.callback(), note);
        progress.finish();
      },
      app::Splits{.frames = true,
                  .shards = true,
                  .input_help = "The cache to export; exactly one, required",
                  .output_help = "Output file, or a path template with #### for the frame "
                                 "number (one file per frame) and {sequence} for the sequence"});
  app::add_mesh_export_flags(cli, flags);
  return tool.run(argc, argv);
}
