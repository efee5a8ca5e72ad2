#pragma once
/// @file
/// An example-based elastic body (Koyama et al. 2013): particles on the vertices of a tet mesh,
/// one shape-matching region per particle (shape_matching.hpp), optional example poses with
/// groups (example_projection.hpp), pinned particles, and an embedded render mesh
/// (embedding.hpp). The time step is in scene.hpp.

#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/tet_mesh.hpp"
#include "core/types.hpp"
#include "elastic/embedding.hpp"
#include "elastic/example_projection.hpp"
#include "elastic/shape_matching.hpp"

namespace datadyn::elastic {

/// The least damping with which the default cuboid's undamped test cases settled (0.001 still blew
/// up on a floor): with less, the explicit step (eqs. 4-5) is only neutrally stable and contacts
/// and spin feed its wobble until the run diverges. A diverged run's message names it.
inline constexpr double kStableDamping = 0.005;

/// Per-body parameters of the time step (eqs. 4-7).
struct BodyParams {
  /// α of eq. 4 in [0, 1]: the fraction of the way to the goal a particle's velocity takes per
  /// step (1: rigid-like, small: soft). Authors' demo: 0.2.
  double alpha = 0.2;
  /// β in [0, 1] of the example blending: 1 follows the projected examples fully, 0 ignores them
  /// (plain shape matching). Paper: 0.995.
  double beta = 0.995;
  /// Fraction of each particle's velocity relative to the body's rigid motion (centre-of-mass
  /// velocity plus angular velocity) removed per step, in [0, 1]. Conserves linear and angular
  /// momentum: it damps the wobble, not the fall or the spin. Authors' demo: 0.03-0.04. Below
  /// kStableDamping the step gains energy (measured, docs/tools/sm-example-sim.md).
  double damping = 0.03;
  /// Fraction of the whole velocity removed per step (air drag), in [0, 1].
  double drag = 0.0;
  /// Relative ridge on LᵀL (example_projection.hpp), >= 0.
  double ridge = 1e-5;
  /// Keep the projected weights in the convex hull of the rest pose and the examples (each >= 0,
  /// summing to 1; example_projection.hpp): the paper's linear interpolation of examples, and
  /// its authors' default. false: eq. 7 as written, which extrapolates, and a body that gravity
  /// squashes past a squash example then flattens.
  bool convex_weights = true;
  /// Make every example pose an exact equilibrium (with β = 1). Eq. 3 fits one affine map
  /// R_r S*_r per region, so an example that is not affine on each 1-ring (a twist, a bend) is
  /// reproduced only up to the fit's residual, and the averaging of overlapping regions loses a
  /// little of the example at every step: left alone, even with β = 1, the body relaxes from the
  /// example towards the rest pose. With this on, each particle's residual at each example pose,
  /// δ_k,i = x_k,i − g_k,i (g_k the eq. 3 goal at pose k), is stored in the frame of the
  /// particle's own region, e_k,i = R_k,iᵀ δ_k,i, and the goal gets R_i Σ_k w_k e_k,i (its mass-
  /// weighted mean over the body subtracted, which is 0 at an example pose, so linear momentum
  /// stays exact). At an example pose this is exactly δ_k: g = x. An extension of the paper, off
  /// by default (eq. 3 as written): the residual force is not conservative, and in tests with
  /// strong twist and S examples it kept a body bouncing between floor and wall for 30 s
  /// (kinetic energy tens of J) where eq. 3 settles. Meant for slow, near-static scenes.
  bool exact_examples = false;
};

/// Everything needed to make a body; positions in the body frame.
struct BodySetup {
  std::string name = "body";
  /// Rest tet mesh (metres), positively oriented, every tet with volume.
  TetMesh mesh;
  /// #V particle masses (kg), > 0 (lumped_masses).
  Eigen::VectorXd masses;
  /// N example poses, each #V by 3 (metres), the rest mesh deformed.
  std::vector<Points3> examples;
  /// #V group ids (0..G-1) of the particles' regions (section 4.4); empty: one group.
  std::vector<int> groups;
  /// Indices of particles held in place at their initial position.
  std::vector<int> pinned;
  /// The render mesh; no rows: the tet mesh's boundary (boundary_embedding).
  Embedding render;
  /// Initial orientation, about the rest centre of mass.
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  /// Initial displacement of the rest pose (metres).
  Eigen::Vector3d translation = Eigen::Vector3d::Zero();
  /// Initial velocity of the centre of mass (m/s).
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  /// Initial angular velocity about the centre of mass (rad/s).
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();
  /// Initial pose, #V by 3 in the body frame before rotation and translation (metres); no rows:
  /// the rest pose. (Tests start from an example or deformed pose.)
  Points3 initial_pose;
  BodyParams params;
};

/// A simulated body: constants of the rest pose and the state.
struct Body {
  std::string name;
  BodyParams params;
  Points3 rest;          ///< #V by 3 rest positions x0 (metres, body frame)
  Tets tets;             ///< #K by 4
  Eigen::VectorXd mass;  ///< #V (kg)
  RegionSet regions;
  ExampleSpace examples;  ///< example_count == 0: plain shape matching
  std::vector<int> pinned;
  Points3 pin_position;  ///< #pinned by 3 (metres)
  Embedding render;

  Points3 x;  ///< #V by 3 positions (metres)
  Points3 v;  ///< #V by 3 velocities (m/s)

  // Per-step work arrays, kept to avoid allocation in the step.
  RegionFrames frames;
  RegionGoals goals;
  std::vector<double> weights;    ///< G × (N + 1) example weights of the last step
  std::vector<double> projected;  ///< 6 M projected strains S* of the last step
  /// N × #V × 3 example residuals e_k,i in their region's frame (BodyParams::exact_examples;
  /// empty when off or without examples), metres.
  std::vector<double> detail;
  Points3 goal;  ///< #V by 3 particle goals g_i of the last step (metres)

  int particle_count() const { return static_cast<int>(rest.rows()); }
  int example_count() const { return examples.example_count; }
  int group_count() const { return examples.group_count; }
};

/// Lumped masses: each tet gives density × volume / 4 to each of its vertices.
/// @param density kg/m³, > 0.
Eigen::VectorXd lumped_masses(const TetMesh& mesh, double density);

/// Makes a body: regions, example space, initial state (the initial pose rotated about the rest
/// centre of mass, translated, with the given linear and angular velocity), rotations of the
/// initial pose from the SVD, and weights of the initial pose.
/// @throws std::invalid_argument for bad input: no tets, a degenerate or inverted tet (volume
///   below 1e-12 of the bounding box's), examples with the wrong vertex count, bad groups or pin
///   indices, parameters out of range (α, β, damping, drag not in [0, 1], ridge < 0).
Body make_body(const BodySetup& setup);

}  // namespace datadyn::elastic
