// datadyn-fixture: a small tool built only for the tests, on the same shared command line as the
// real tools. It writes a travelling sine wave as a point sequence, and can be told to fail at a
// frame or to work slowly, so exit codes, atomic outputs and signals can be tested as processes.

#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include "app/tool.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "io/atomic_file.hpp"

namespace {

struct WaveParams {
  int points = 100;
  int frames = 48;
  double frame_rate = 24.0;
  double amplitude = 0.1;
  int fail_at_frame = -1;    // a run that "diverges" at this frame
  double sleep_ms = 0.0;     // per frame, to test signals
  std::string side_file;     // put in place before the frames: a file a failed run keeps
  std::string report_file;   // written after the cache, as a tool's report
  bool fail_at_end = false;  // fails after the cache and the report are finished
};

void read_wave(datadyn::app::ConfigReader& r, WaveParams& p) {
  using namespace datadyn::app;
  r.get("points", p.points, at_least(1));
  r.get("frames", p.frames, at_least(1));
  r.get("frame_rate", p.frame_rate, positive());
  r.get("amplitude", p.amplitude, positive());
  r.get("fail_at_frame", p.fail_at_frame);
  r.get("sleep_ms", p.sleep_ms, non_negative());
  r.get("side_file", p.side_file);
  r.get("report_file", p.report_file);
  r.get("fail_at_end", p.fail_at_end);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace datadyn;
  app::Tool tool("datadyn-fixture", "Test fixture: writes a sine wave point sequence");
  tool.main(
      [](app::Context& ctx) {
        const auto p = ctx.config<WaveParams>(read_wave);
        std::vector<std::int64_t> frames;
        for (int f = 1; f <= p.frames; ++f) frames.push_back(f);
        if (auto sel = ctx.frames()) frames = *sel;
        const auto part = shard_range(frames.size(), ctx.shard());
        const auto out = ctx.output("wave.h5");
        if (ctx.dry_run()) {
          std::printf("would write %zu frames of %d points to %s\n", part.size(), p.points,
                      out.c_str());
          return;
        }
        if (!p.side_file.empty()) {
          io::AtomicFile side(p.side_file);
          side.write("side\n");
          side.commit();
          io::commit_held_files();  // kept whatever follows, as a finished file a run keeps
        }
        io::CacheWriter writer(out, ctx.provenance());
        auto& seq = writer.add_sequence("wave", {p.frame_rate, 3});
        app::Progress progress("frame", part.size());
        for (std::size_t k = part.begin; k < part.end; ++k) {
          const std::int64_t f = frames[k];
          if (f == p.fail_at_frame)
            throw RunError("wave: frame " + std::to_string(f) + ": particle 0 diverged (test)");
          const double t = static_cast<double>(f - 1) / p.frame_rate;
          Points3 x(p.points, 3);
          parallel_for(static_cast<std::size_t>(p.points), 16, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
              x.row(static_cast<Eigen::Index>(i)) << 0.01 * static_cast<double>(i),
                  p.amplitude * std::sin(0.2 * static_cast<double>(i) - 3.0 * t), 0.0;
          });
          seq.append_frame(f, t, {{"points/position", io::view(x)}});
          if (p.sleep_ms > 0)
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(p.sleep_ms));
          progress.tick();
        }
        progress.finish();
        writer.commit();
        if (!p.report_file.empty()) {
          io::AtomicFile report(p.report_file);
          report.write("amplitude " + std::to_string(p.amplitude) + "\n");
          report.commit();
        }
        if (p.fail_at_end) throw RunError("wave: failed after the cache and the report (test)");
      },
      datadyn::app::Splits{.frames = true, .shards = true});
  return tool.run(argc, argv);
}
