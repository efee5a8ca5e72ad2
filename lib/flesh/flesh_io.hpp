#pragma once
/// @file
/// The `spring-fit` tool's glue: config sections, cache reading with validation, and the three
/// subcommands (simulate, fit, apply). Numerics live in flesh/spring_*.hpp and
/// flesh/flesh_simulation.hpp.
///
/// Caches:
///   simulate -> /sequences/{skinned, quasistatic, dynamic}: points/position [F, N, 3],
///               rest/position [N, 3], topology/triangles [T, 3]; attrs frame_rate, motion
///   fit      -> /springs/ks, /springs/kd float64 [N] (1/s^2, 1/s), and /sequences/springs: one
///               frame of the rest pose with static points/ks, points/kd, points/kd2_minus_4ks
///               (for mesh-export vertex attributes); a report JSON beside it
///   apply    -> /sequences/dynamic (frames and sub-frames of the spring layer)

#include "app/config.hpp"
#include "app/tool.hpp"
#include "flesh/flesh_simulation.hpp"
#include "flesh/spring_fit.hpp"

namespace datadyn::flesh {

/// Config keys of `spring-fit simulate` (see docs/tools/spring-fit.md).
void read_simulation_params(app::ConfigReader& r, FleshSimulationParams& p);

/// motion.kind = "bvh": the chain follows joints of a motion-capture file (load_chain_motion).
struct MotionFileConfig {
  std::string file;  ///< BVH (or any skeleton animation assimp reads)
  std::string root = "Hips";
  std::vector<std::string> joints = {"LowerBack", "Spine", "Spine1"};  ///< one per bone
  double scale = 0.056444;  ///< file units to metres (CMU captures: inches / 0.45)
  double start = 0.0;       ///< s into the capture
};
/// body.mesh: a rigged mesh (any format assimp reads with a skinned mesh) instead of the
/// cylinder; it moves by its own first animation (motion.kind "skin", from motion.start).
struct MeshBodyConfig {
  std::string file;             ///< "" = the cylinder around the bone chain
  double scale = 1.0;           ///< file units to metres
  double max_tet_volume = 0.0;  ///< m^3, TetGen's volume bound; 0 = none
};
struct SimulateConfig {
  FleshSimulationParams sim;
  MotionFileConfig motion_file;
  MeshBodyConfig mesh;
  app::ConfigOrigin origin;  ///< where the config's values came from, for errors found later
};
void read_simulate_config(app::ConfigReader& r, SimulateConfig& c);

/// Config keys of `spring-fit fit`.
struct FitConfig {
  SpringFitParams fit;
  /// fit.shared_regions: lists of vertex ids, each list sharing one (ks, kd). Checked against
  /// the inputs' vertex count once they are read (ConfigError naming the key).
  std::vector<std::vector<std::int64_t>> shared_regions;
  /// fit.rigid_tolerance (m, >= 0; 0 = off): the vertices whose ground truth stays this close
  /// to the target in every frame (rigid_vertices), less those of explicit regions, share one
  /// more region.
  double rigid_tolerance = 0.0;
  /// teleport_distance (m, >= 0; 0 = off): a training sequence is cut where some target point
  /// moves farther than this in one frame, and each part is fitted as a sequence of its own
  /// (apply restarts the springs at the same frames).
  double teleport_distance = 0.0;
  app::ConfigOrigin origin;  ///< where the config's values came from, for errors found later
  std::string target_sequence = "quasistatic";
  std::string truth_sequence = "dynamic";
  std::string report;  ///< report JSON path; "" = <output without .h5>.report.json
};
void read_fit_config(app::ConfigReader& r, FitConfig& c);

/// Config keys of `spring-fit apply`.
struct ApplyConfig {
  std::string target_sequence = "quasistatic";
  std::string output_sequence = "dynamic";
  /// A ground-truth sequence to compare against if the input has it ("" to skip).
  std::string truth_sequence = "dynamic";
  int subframes = 1;
  /// Frame numbers of the target sequence where the springs restart at rest on the target.
  std::vector<std::int64_t> reset_frames;
  /// Metres, >= 0: also restart where some target point moves farther than this in one frame
  /// (a teleport); 0 = off.
  double teleport_distance = 0.0;
  /// Art direction on the fitted springs: deviation from the target times `amount` (0-100),
  /// every ks times `stiffness_scale` (1e-6 to 1e6), every kd times `damping_scale` (0-1e6).
  double amount = 1.0;
  double stiffness_scale = 1.0;
  double damping_scale = 1.0;
  std::string report;  ///< "" = <output without .h5>.report.json (written only with a truth)
};
void read_apply_config(app::ConfigReader& r, ApplyConfig& c);

/// The subcommands: read config and inputs, run, write the output cache (and reports).
void run_simulate(app::Context& ctx);
void run_fit(app::Context& ctx);
void run_apply(app::Context& ctx);

}  // namespace datadyn::flesh
