#pragma once
/// @file
/// mps-gen's glue: the database config (scene, sweep, solver, output) read from JSON with
/// ConfigReader, checked as a whole (the tank, every simulation's water column, a fixed time step
/// against the Courant bound), and the database run into a cache - one sequence per simulation
/// (docs/tools/mps-gen.md has the layout and every key).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "fluid/database.hpp"
#include "io/cache.hpp"

namespace datadyn::fluid {

/// Optional per-frame arrays of the output.
struct OutputOptions {
  bool velocity = false;  ///< points/velocity float32 [F, N, 2], m/s
  bool pressure = false;  ///< points/pressure float32 [F, N], Pa
};

/// Everything mps-gen reads. The defaults are the built-in breaking-wave database (15 water columns
/// collapsing into a shallow layer and breaking on a sloping beach, as in Chiba et al. 2011 fig.
/// 2).
struct DatabaseParams {
  Scene scene = default_scene();
  Sweep sweep;
  MpsParams solver;
  OutputOptions output;

  static Scene default_scene();
};

/// Fills `p` from the config (every key optional; defaults as in DatabaseParams) and checks the
/// whole: tank shape, the water column of every simulation of the sweep inside the tank, a fixed
/// time step within the Courant bound for the fastest column. Throws ConfigError naming the key.
void read_database_params(app::ConfigReader& r, DatabaseParams& p);

/// The summary of one finished simulation.
struct SimulationSummary {
  std::string name;
  std::size_t fluid = 0, frames = 0;
  long long steps = 0;
  int max_iterations = 0;
  double seconds = 0;  ///< wall clock
};

/// How to run the database.
struct RunOptions {
  /// Frame numbers to store (1-based: frame 1 is t = 0); empty: every frame.
  std::vector<std::int64_t> frames;
  /// Worker threads: up to this many simulations run at once.
  int threads = 1;
};

/// What a run would do, one line per simulation (for --dry-run): name, column, particle counts,
/// frames.
std::string database_plan(const DatabaseParams& params, const std::vector<SimulationSpec>& sims,
                          const std::vector<std::int64_t>& frames);

/// Runs `sims` (a contiguous part of the sweep) and writes each as /sequences/<name> of `writer`,
/// in order. Simulations run in parallel when there are several (each also parallel inside); HDF5
/// is only called on the calling thread. Progress goes to the log, one line per frame.
///
/// On a failure in simulation k (divergence, PPE not converged, a particle leaving the tank, NaN)
/// the simulations before k are written, the cache is committed, and RunError is thrown naming the
/// simulation, frame, time and particle. Interrupts (SIGINT/SIGTERM) throw RunError without
/// committing.
std::vector<SimulationSummary> write_database(const DatabaseParams& params,
                                              const std::vector<SimulationSpec>& sims,
                                              const RunOptions& options, io::CacheWriter& writer);

/// Frame numbers of a run: 1..frame_count(scene), or `requested` checked against that range
/// (throws UsageError naming --frames otherwise).
std::vector<std::int64_t> output_frames(const Scene& scene,
                                        const std::optional<std::vector<std::int64_t>>& requested);

}  // namespace datadyn::fluid
