#pragma once
/// @file
/// sm-example-sim's glue (docs/tools/sm-example-sim.md): the scene config (ConfigReader read
/// functions with defaults in code), building the bodies from lattices, TetGen meshes, closed OBJ
/// surfaces (tetrahedralised with TetGen) and example poses from files or procedural
/// deformations, and the simulation loop that writes the cache:
///
///   /sequences/<body>             the exported surface (embedded render mesh or tet boundary):
///                                 points/position [F, R, 3], topology/triangles, rest/position
///   /sequences/<body>_particles   the simulation particles: points/position and points/velocity
///                                 [F, N, 3], rest/position, topology/tetrahedra, points/mass,
///                                 points/group, points/pinned (static)
///   /elastic/<body>/weights       float64 [F, G, K+1]: per frame and group the weights of the
///                                 rest pose (column 0) and of the K examples; attribute
///                                 `columns` names them. Written when the run ends.
///   /elastic/<body>/frame         int64 [F], the frame numbers of the rows of weights
///
/// Frame f is the state at time (f − 1) / frame_rate: frame 1 is the initial state. A run that
/// diverges keeps the frames before the one that diverged (the cache is committed) and reports
/// the frame, body and particle.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "app/config.hpp"
#include "core/shard.hpp"
#include "elastic/scene.hpp"
#include "io/cache.hpp"

namespace datadyn::elastic {

/// Where a body's tet mesh comes from.
enum class MeshKind { Box, Cylinder, TetGen, Obj, Voxels };

struct MeshConfig {
  MeshKind kind = MeshKind::Box;
  // box: the standard cuboid of the paper (5 x 9 x 5 particles, 640 tets)
  std::array<int, 3> resolution{5, 9, 5};          ///< lattice points along x, y, z
  Eigen::Vector3d min_corner{-0.25, 0.24, -0.25};  ///< metres
  Eigen::Vector3d max_corner{0.25, 1.36, 0.25};    ///< metres
  int tets_per_cell = 5;                           ///< 5 or 6
  // cylinder (around y)
  double radius = 0.25;  ///< metres
  double height = 1.0;   ///< metres
  int rings = 2, segments = 12, layers = 8;
  Eigen::Vector3d base{0.0, 0.0, 0.0};  ///< centre of the bottom disk, metres
  // tetgen / obj
  std::string file;                ///< .node/.ele stem or file, or a closed .obj surface
  double max_volume = 0.0;         ///< obj: TetGen's largest tet volume (m^3), 0 = none
  double radius_edge_ratio = 2.0;  ///< obj: TetGen's quality bound, 0 = none
  double scale = 1.0;              ///< tetgen / obj / voxels: factor on the file's coordinates
  // voxels: a lattice filling an .obj surface that need not be closed (core/voxel_lattice.hpp)
  double cell_size = 0.1;         ///< metres, after scale
  std::string fill = "cover";     ///< cover | inside
  bool largest_component = true;  ///< drop cells not connected to the largest group
};

/// One example pose: a procedural deformation of the rest pose, or a file with the same vertices.
struct ExampleConfig {
  std::string name;             ///< default: the type (or the file's stem)
  std::string type = "twist";   ///< twist | bend | s_shape | shear | scale | file | surface
  std::string axis = "y";       ///< x | y | z
  std::string direction = "x";  ///< x | y | z (bend, s_shape, shear)
  double angle = 180.0;         ///< degrees (twist: over the whole body; bend; s_shape)
  double amount = 0.5;          ///< shear, metres per metre
  Eigen::Vector3d factors{1.0, 1.0, 1.0};  ///< scale
  std::string file;  ///< type file: .node/.ele or .obj, one vertex per particle; type surface:
                     ///< .obj, one vertex per render-mesh vertex
  double smoothness = 1e-4;  ///< type surface: relative weight of the harmonic interior fill
};

struct GroupConfig {
  std::string axis = "y";      ///< x | y | z
  std::vector<double> splits;  ///< fractions in (0, 1) of the body's extent along axis
};

struct PinConfig {
  bool enabled = false;
  std::string axis = "y";  ///< x | y | z
  double below = 0.0;      ///< pins particles at fractions <= below of the extent along axis
};

struct RenderConfig {
  std::string type = "boundary";  ///< boundary | obj
  std::string file;               ///< obj: a polygon mesh in the body frame
  double scale = 1.0;             ///< factor applied to the OBJ's coordinates
};

struct BodyConfig {
  std::string name = "cuboid";
  MeshConfig mesh;
  double density = 1000.0;  ///< kg/m^3
  BodyParams params;
  Eigen::Vector3d position{0.0, 1.5, 0.0};          ///< displacement of the rest pose (metres)
  Eigen::Vector3d rotation{0.0, 0.0, 30.0};         ///< degrees about x, then y, then z
  Eigen::Vector3d velocity{0.0, 0.0, 0.0};          ///< m/s
  Eigen::Vector3d angular_velocity{0.0, 0.0, 0.0};  ///< rad/s
  std::vector<ExampleConfig> examples{ExampleConfig{}};
  GroupConfig groups;
  PinConfig pins;
  RenderConfig render;
};

struct PlaneConfig {
  Eigen::Vector3d point{0.0, 0.0, 0.0};
  Eigen::Vector3d normal{0.0, 1.0, 0.0};
  double restitution = 0.6;
  double friction = 0.3;
  double resting_speed = 0.1;  ///< m/s
};

/// The whole scene; the defaults are the twisted cuboid dropped on the floor.
struct SceneConfig {
  int frames = 120;          ///< frames to simulate, frame 1 = the initial state
  double frame_rate = 60.0;  ///< frames per second
  int substeps = 5;          ///< steps per frame: h = 1 / (frame_rate substeps)
  Eigen::Vector3d gravity{0.0, -9.81, 0.0};
  double max_speed = 1000.0;  ///< m/s; faster means diverged
  std::vector<PlaneConfig> planes{PlaneConfig{}};
  std::vector<BodyConfig> bodies{BodyConfig{}};
};

/// Reads the scene config (docs/tools/sm-example-sim.md lists every key).
void read_scene_config(app::ConfigReader& reader, SceneConfig& config);

/// Called with notes worth a log line (mesh sizes, warnings about dependent examples).
enum class Note { Info, Warning };
using NoteCallback = std::function<void(Note, const std::string&)>;

/// Builds the bodies from the files the config names (read_scene_config resolved and checked
/// them). Throws IoError for unusable files (naming the file and the config key), ConfigError for
/// inconsistent values (naming the key, and the config file or --set that gave it: `origin`).
Scene build_scene(const SceneConfig& config, const app::ConfigOrigin& origin,
                  const NoteCallback& note = {});

struct SimulationReport {
  bool ok = true;
  std::string message;  ///< for a diverged run: body, frame, particle and why
  std::size_t frames_written = 0;
};

/// The bytes simulate_to_cache writes per frame, before compression (a --dry-run's estimate of
/// the cache's size): each body's surface positions, particle positions and velocities (float32,
/// 3 each) and its example weights (float64, groups x (examples + 1), held until the end).
std::uintmax_t frame_bytes(const Scene& scene);

/// Called after each written frame with (frames done, frames in total, wall ms per step).
using FrameCallback = std::function<void(std::size_t, std::size_t, double)>;

/// Simulates from frame 1 to the last frame in `frames` and writes the frames listed to a cache at
/// `output` (atomically). On divergence the frames before are committed and ok = false.
SimulationReport simulate_to_cache(Scene& scene, const SceneConfig& config,
                                   const std::vector<std::int64_t>& frames,
                                   const std::filesystem::path& output,
                                   const io::Provenance& provenance,
                                   const FrameCallback& on_frame = {});

}  // namespace datadyn::elastic
