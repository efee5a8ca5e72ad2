// How the target-cloth solver scales with its size and shape: set-up (assembly, AMD ordering,
// LDL^T factor and the two-thread schedule) and one step, per particle, for squares and long
// strips of the same particle counts, measured in one run. A linear solver keeps the figures per
// particle flat; the ratio of the largest strip's to the smallest square's is printed last.
//
// Strips are where the schedule of the substitutions (cloth/three_column_ldlt.hpp) was quadratic
// in the elimination tree's branches: a 16001 x 33 cloth spent two thirds of its set-up there.

#include <chrono>
#include <cstdio>
#include <string>

#include "cloth/mass_spring_solver.hpp"
#include "load_average.hpp"

namespace {

using datadyn::bench::load_average;

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct PerParticle {
  double setup_us = 0.0, step_us = 0.0;
};

PerParticle measure(int nx, int ny) {
  datadyn::cloth::ClothParams p;
  p.nx = nx;
  p.ny = ny;
  const double n = static_cast<double>(nx) * ny;
  const auto t0 = Clock::now();
  datadyn::cloth::MassSpringSolver sim(p);
  PerParticle r;
  r.setup_us = us_since(t0) / n;
  const int steps = 3;
  const auto t1 = Clock::now();
  for (int s = 0; s < steps; ++s)
    if (!sim.step().ok) std::printf("  %d x %d diverged at step %d\n", nx, ny, s + 1);
  r.step_us = us_since(t1) / (n * steps);
  return r;
}

}  // namespace

int main() {
  const std::string load_before = load_average();
  std::printf("cloth solver scaling (defaults: projective, 10 iterations), per particle\n");
  std::printf("  %-14s %10s %14s %14s\n", "grid", "particles", "set-up (us)", "step (us)");
  struct Case {
    int nx, ny;
  };
  // Squares and strips 33 wide of about the same particle counts.
  const Case cases[] = {{129, 129}, {505, 33}, {257, 257}, {2001, 33}, {8001, 33}, {16001, 33}};
  PerParticle first{}, last{};
  for (const Case& c : cases) {
    const PerParticle r = measure(c.nx, c.ny);
    if (&c == &cases[0]) first = r;
    last = r;
    std::printf("  %5d x %-6d %10d %14.3f %14.3f\n", c.nx, c.ny, c.nx * c.ny, r.setup_us,
                r.step_us);
  }
  std::printf(
      "  16001 x 33 against 129 x 129 (32x the particles), per particle: set-up %.2fx, "
      "step %.2fx\n",
      last.setup_us / first.setup_us, last.step_us / first.step_us);
  std::printf("  load average (1 min) before %s, after %s\n", load_before.c_str(),
              load_average().c_str());
}
