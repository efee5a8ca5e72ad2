#pragma once
/// @file
/// The breaking-wave database of Chiba, Dobashi & Yamamoto 2011
/// ("データベースを用いた水のアニメーション 編集", IPSJ SIG CG-143, sec. 4.2): many 2D MPS
/// simulations of the same tank whose initial water column varies (its height in the paper, fig. 2;
/// here also its width and initial velocity), each stored as particle positions per output frame.
/// This header describes the scene and the sweep and runs one simulation; writing caches is in
/// fluid_io.hpp.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/progress.hpp"
#include "core/types.hpp"
#include "fluid/mps_solver.hpp"
#include "fluid/tank.hpp"

namespace datadyn::fluid {

/// The initial water column: the lattice points of the rectangle [x, x + width] x [bottom,
/// bottom + height], moving at `velocity`.
struct WaterColumn {
  double x = 0.0;                                      ///< left edge (metres)
  double width = 0.3;                                  ///< metres, > 0
  double height = 0.4;                                 ///< metres above `bottom`, > 0
  double bottom = 0.0;                                 ///< metres
  Eigen::Vector2d velocity = Eigen::Vector2d::Zero();  ///< initial velocity (m/s)
};

/// What every simulation of a database shares.
struct Scene {
  TankShape tank;
  double l0 = 0.01;          ///< particle spacing (metres), > 0
  double duration = 2.0;     ///< simulated time (s), > 0
  double frame_rate = 30.0;  ///< output frames per second, > 0
  /// Still water over the whole tank up to this height (metres, 0: none): the layer waves run
  /// into and break over the beach.
  double water_level = 0.0;
  WaterColumn column;    ///< the base column the sweep varies
  int wall_layers = 2;   ///< >= 1
  int dummy_layers = 2;  ///< >= 0
};

/// The sweep: every combination of a column height, width and initial velocity is one simulation
/// (heights outermost, velocities innermost).
struct Sweep {
  std::vector<double> heights;  ///< column heights (metres); empty: the range below
  double height_from = 0.2;     ///< range of heights (metres), inclusive
  double height_to = 0.48;
  int height_count = 15;                    ///< >= 1 (1: height_from only)
  std::vector<double> widths;               ///< column widths (metres); empty: the scene's width
  std::vector<Eigen::Vector2d> velocities;  ///< initial velocities (m/s); empty: the scene's
};

/// One simulation of the database.
struct SimulationSpec {
  int index = 0;     ///< 0-based position in the sweep
  std::string name;  ///< "sim_000", ...: the sequence name
  WaterColumn column;
};

/// The simulations of a sweep, in order.
std::vector<SimulationSpec> sweep_simulations(const Scene& scene, const Sweep& sweep);

/// The initial particles of one simulation.
struct InitialWater {
  Points2 position;  ///< #F by 2 (metres), on the tank lattice, in lattice order
  Points2 velocity;  ///< #F by 2 (m/s)
  /// Non-empty when the column does not fit in the tank: names the first lattice point of the
  /// column outside the water domain, e.g. "particle at (1.105, 0.035) m is outside the tank
  /// (inside a wall or obstacle)", or the column or water level beyond the tank's extent (its
  /// bounding box, up to the tank's height above the rim).
  std::string error;
};
/// Water for `column` plus the still-water layer of the scene: lattice points in the tank's water
/// domain that lie in the column rectangle or below water_level.
InitialWater initial_water(const Tank& tank, const Scene& scene, const WaterColumn& column);

/// The largest speed the column can reach falling freely from its top to the tank's lowest
/// point plus its initial speed, |v0| + sqrt(2 |g| (top − lowest)) (m/s): the speed a fixed time
/// step is checked against before a run.
double estimated_max_speed(const Tank& tank, const WaterColumn& column,
                           const Eigen::Vector2d& gravity);

/// Output frame k (0-based) is at time k / frame_rate; frames 0 .. frame_count - 1 cover the
/// duration (the last one at or before it).
std::size_t frame_count(const Scene& scene);

/// Outcome of run_simulation.
struct SimulationResult {
  bool ok = true;
  std::size_t frames = 0;  ///< frames delivered to the callback
  long long steps = 0;
  double time = 0;      ///< simulated time reached (s)
  StepResult failure;   ///< the failed step (status != Ok) when !ok
  std::string message;  ///< "frame 38 (t = 1.2345 s, step 4567): <describe_failure>"
  StepTiming timing;
  int max_iterations = 0;  ///< most CG iterations in one step
};

/// Called with each output frame (0-based index, time in seconds) and the solver in that state. May
/// throw to cancel the run.
using FrameCallback = std::function<void(std::size_t frame, double time, const MpsSolver& solver)>;

/// Runs one simulation from `water` for frame_count(scene) frames: steps land exactly on the frame
/// times (each frame interval is split into equal steps no longer than the solver allows).
/// Progress is reported per frame through `progress` (may be empty). Stops at the first failed
/// step; the frames before it have been delivered.
SimulationResult run_simulation(const Tank& tank, const Scene& scene, const MpsParams& params,
                                const InitialWater& water, const FrameCallback& on_frame,
                                const ProgressCallback& progress = {});

}  // namespace datadyn::fluid
