#pragma once
/// @file
/// The time step of example-based shape matching (Koyama et al. 2013 eqs. 4-5) for several
/// bodies with gravity and collision planes, and the health check that finds a diverged run.
///
/// One step of length h for each body:
///  1. match every region to the current positions: c_r, R_r, S_r (eq. 1)
///  2. with examples: weights per group and projected strains S*_r (eqs. 6-7, β)
///  3. region goals M_r = R_r S*_r (or R_r), particle goals g_i (eqs. 2-3)
///  4. v_i += α (g_i − x_i) / h + h g (eq. 4); damping (rigid motion kept) and drag
///  5. x_i += h v_i (eq. 5); planes: particles below are put back on the plane, their normal
///     velocity reflected with the restitution (0 below the plane's resting_speed) and their
///     tangential velocity reduced by Coulomb friction (μ times the normal velocity change);
///     pinned particles reset.
/// Bodies do not collide with each other. Every loop runs in parallel over fixed chunks, so the
/// result is bitwise the same for any thread count.

#include <string>
#include <vector>

#include <Eigen/Core>

#include "elastic/body.hpp"

namespace datadyn::elastic {

/// An infinite plane; the solid side is behind the normal.
struct Plane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();    ///< a point on the plane (metres)
  Eigen::Vector3d normal = Eigen::Vector3d::UnitY();  ///< unit normal towards the free side
  double restitution = 0.6;  ///< normal velocity kept (reversed) on impact, in [0, 1]
  double friction = 0.3;     ///< Coulomb coefficient μ, >= 0
  /// Impacts slower than this (m/s, normal component) do not bounce: resting contact. Without it
  /// a particle at rest on the plane bounces by restitution × g h every step and never settles.
  double resting_speed = 0.1;
};

struct SceneParams {
  Eigen::Vector3d gravity{0.0, -9.81, 0.0};  ///< m/s²
  std::vector<Plane> planes;
  /// A particle faster than this (m/s), or with a non-finite position or velocity, means the run
  /// diverged.
  double max_speed = 1000.0;
};

struct Scene {
  SceneParams params;
  std::vector<Body> bodies;
};

/// Time spent in the parts of the step (seconds, summed), as Table 1 splits it.
struct StepTimings {
  double shape_matching = 0.0;  ///< t_sm: matching, goals, integration, collisions
  double projection = 0.0;      ///< t_proj: weights (eq. 7) and projected strains
  long steps = 0;
  /// Seconds from any fixed origin; null: the wall clock (std::chrono::steady_clock). A benchmark
  /// on a shared machine passes the thread's CPU time instead.
  double (*clock)() = nullptr;
};

/// One step of length h (seconds, > 0) for one body. Timings are added when `timings` is given.
void step_body(Body& body, const SceneParams& params, double h, StepTimings* timings = nullptr);

/// One step for every body.
void step_scene(Scene& scene, double h, StepTimings* timings = nullptr);

/// Result of a health check.
struct SceneHealth {
  bool ok = true;
  int body = -1;       ///< first body at fault
  int particle = -1;   ///< its first particle at fault (lowest index)
  double speed = 0.0;  ///< that particle's speed (m/s), NaN when not finite
  std::string reason;  ///< "non-finite position", "speed 1.2e3 m/s above max_speed 1e3 m/s"
};

/// Finds the first body and particle with a non-finite state or a speed above max_speed.
SceneHealth check_health(const Scene& scene);

}  // namespace datadyn::elastic
