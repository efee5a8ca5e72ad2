// What cloth self-collision (cloth/self_collision.hpp) costs and what it prevents, measured in one
// run: each scene simulated for its 120 frames without and with it, the solver's time per frame
// and their ratio, and the edge-triangle crossings summed over the frames (creases: an edge
// through a triangle within 2 rows and columns of it; layers: one part of the sheet through
// another). Counting the crossings is not timed.

#include <chrono>
#include <cstdio>
#include <string>

#include "cloth/mass_spring_solver.hpp"
#include "cloth/self_collision.hpp"
#include "load_average.hpp"

namespace {

using datadyn::bench::load_average;

using namespace datadyn::cloth;
using Clock = std::chrono::steady_clock;

struct Outcome {
  double ms_per_frame = 0.0;
  SheetCrossings crossings;
  bool ok = true;
};

Outcome run(const std::string& scene, int n, int substeps, bool self) {
  ClothParams p;
  p.nx = p.ny = n;
  p.spacing = 1.0 / (n - 1);
  apply_scene_preset(scene, p);
  if (substeps > 0) p.substeps = substeps;
  p.self_collision.enabled = self;
  MassSpringSolver sim(p);
  Outcome o;
  double seconds = 0.0;
  for (int f = 0; f < p.frames && o.ok; ++f) {
    const auto t0 = Clock::now();
    o.ok = sim.advance_frame().ok;
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    const SheetCrossings c = count_crossings(p, sim.positions());
    o.crossings.crease += c.crease;
    o.crossings.layers += c.layers;
  }
  o.ms_per_frame = 1e3 * seconds / p.frames;
  return o;
}

}  // namespace

int main() {
  const std::string load_before = load_average();
  std::printf(
      "cloth self-collision (thickness = spacing), 120 frames per scene, default threads\n");
  std::printf("  %-26s %10s %10s %7s   %-17s %-17s\n", "scene", "off ms/fr", "on ms/fr", "ratio",
              "off crease/layers", "on crease/layers");
  struct Case {
    const char* scene;
    int n, substeps;  // substeps 0: the scene's own
  };
  for (const Case& c :
       {Case{"curtain", 33, 0}, Case{"flag", 33, 0}, Case{"flag", 33, 16}, Case{"collision", 33, 0},
        Case{"collision", 33, 6}, Case{"collision", 49, 0}, Case{"collision", 49, 6}}) {
    const Outcome off = run(c.scene, c.n, c.substeps, false);
    const Outcome on = run(c.scene, c.n, c.substeps, true);
    const std::string name =
        std::string(c.scene) + " " + std::to_string(c.n) + "x" + std::to_string(c.n) +
        (c.substeps > 0 ? ", " + std::to_string(c.substeps) + " substeps" : "");
    std::printf("  %-26s %10.2f %10.2f %6.2fx   %7ld / %-7ld %7ld / %-7ld%s\n", name.c_str(),
                off.ms_per_frame, on.ms_per_frame, on.ms_per_frame / off.ms_per_frame,
                off.crossings.crease, off.crossings.layers, on.crossings.crease,
                on.crossings.layers, off.ok && on.ok ? "" : "  (diverged)");
  }
  std::printf("  load average (1 min) before %s, after %s\n", load_before.c_str(),
              load_average().c_str());
  return 0;
}
