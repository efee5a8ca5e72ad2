#pragma once
/// @file
/// Ground truth for spring fitting (Jin et al. 2022, section 7): a soft tetrahedral body around
/// an animated bone chain, simulated with backward Euler, and the quasistatic solve of every
/// frame under the same bones. Vertices within pin_radius of the chain's axis follow the skinned
/// bones (Dirichlet). The elastic energy is the rotation-invariant part of the corotated model,
/// Σ_t μ V_t ||F_t - R_t||_F^2 (R_t the rotation of F_t), minimised by projective dynamics
/// (Bouaziz et al. 2014: local polar decompositions, one prefactored sparse global solve).

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/progress.hpp"
#include "core/surface_mesh.hpp"
#include "core/tet_mesh.hpp"
#include "core/types.hpp"
#include "flesh/skinning.hpp"

namespace datadyn::flesh {

enum class SkinningMethod { LinearBlend, DualQuaternion };
/// Corotated (rotation-invariant part, Σ μ V ||F - R||^2, by projective dynamics) or stable
/// neo-Hookean (flesh/neo_hookean.hpp, by Newton's method with a volume term from ν).
enum class ElasticModel { Corotated, NeoHookean };

struct FleshSimulationParams {
  double radius = 0.12;      ///< body radius (m), > 0
  int rings = 3;             ///< lattice rings, >= 1
  int segments = 16;         ///< lattice points per ring, >= 3
  int layers = 18;           ///< lattice layers along the body, >= 1
  double pin_radius = 0.05;  ///< vertices closer to the axis follow the bones (m), >= 0
  BoneChain chain;           ///< the body spans the chain's height
  SkinningMethod skinning = SkinningMethod::DualQuaternion;
  ChainMotion motion;
  int frames = 90;           ///< output frames, >= 3
  double frame_rate = 30.0;  ///< frames per second, > 0
  int substeps = 3;          ///< backward Euler steps per frame (dt = 1/(frame_rate substeps))
  int iterations = 12;       ///< projective dynamics iterations per step, >= 1
  int quasistatic_iterations = 25;  ///< per frame (warm-started), >= 1
  /// Also run the backward-Euler ground truth; false: the targets only (skinned and
  /// quasistatic), what `apply` needs for an animation, in about 40 % of the time.
  bool dynamic = true;
  ElasticModel model = ElasticModel::Corotated;
  double youngs_modulus = 5.0e4;  ///< Pa, > 0
  double poisson_ratio = 0.4;     ///< μ = E / (2 (1 + ν)), in [0, 0.5)
  double density = 1000.0;        ///< kg/m^3, > 0
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, -9.81, 0.0);  ///< m/s^2
};

/// What the simulation produces for the surface vertices.
struct FleshSimulationResult {
  Points3 rest;                      ///< #S by 3 rest positions of the surface vertices (m)
  Triangles triangles;               ///< #T by 3 outward surface triangles into rest
  FaceVaryingUv uv;                  ///< the body's surface texture coordinates, or empty
  std::vector<Points3> skinned;      ///< F frames of #S by 3: skinning only
  std::vector<Points3> quasistatic;  ///< F frames: static equilibrium under the frame's bones
  std::vector<Points3> dynamic;      ///< F frames: backward Euler (the ground truth); none
                                     ///< without params.dynamic
  std::vector<double> times;         ///< F times (s)
  int tet_vertices = 0, tets = 0, pinned = 0;
};

/// A body to simulate: its tetrahedral mesh, the vertices that follow the bones and the skinned
/// positions of every vertex at a time.
struct FleshBody {
  TetMesh mesh;                           ///< rest positions (m) and positively oriented tets
  std::vector<bool> pinned;               ///< #V: follows the skin (Dirichlet)
  std::function<Points3(double t)> skin;  ///< #V by 3 skinned positions (m) at t (s)
  /// The surface to write: triangles (with their texture coordinates, if any) indexing mesh
  /// vertices, its vertices taken in index order. No triangles: the tet mesh's boundary, its
  /// vertices in the order the boundary first meets them.
  Triangles surface;
  FaceVaryingUv surface_uv;
};

/// The surface a simulation writes: its vertices (mesh vertex ids, in the order written) and
/// its triangles, indexing them.
struct BodySurface {
  std::vector<Eigen::Index> vertices;
  Triangles triangles;
};
/// body.surface with its vertices in index order, else the tet mesh's boundary with its vertices
/// in the order the boundary first meets them.
BodySurface body_surface(const FleshBody& body);

/// Backward Euler and the quasistatic solve of every frame for any body (the material, solver
/// and frame settings of `params`; its body, bones and motion fields are not used).
/// @throws RunError if no vertex is pinned or a state stops being finite.
FleshSimulationResult simulate_body(const FleshBody& body, const FleshSimulationParams& params,
                                    const ProgressCallback& progress = {});

/// The cylinder around the bone chain of `params` as a body: the lattice of its radius, rings,
/// segments and layers, the vertices within pin_radius of the axis pinned, skinned to the chain
/// with its motion. @throws RunError if pin_radius pins no vertex.
FleshBody cylinder_body(const FleshSimulationParams& params);

/// cylinder_body(params), simulated by simulate_body.
/// Runs the simulation; `progress` is called once per frame of the quasistatic pass, then once
/// per frame of the dynamic pass (2 x frames units in all). The dynamic state starts in the
/// frame-0 equilibrium with the targets' velocity (x̂^1 - x̂^0)/Δt, the state the springs start
/// from (x = x̂, x' = x̂').
/// @pre pinned vertices not all on one line (else the body spins freely about it): pin_radius
/// >= radius / rings.
/// @throws RunError naming the frame if a state stops being finite.
FleshSimulationResult simulate_flesh(const FleshSimulationParams& params,
                                     const ProgressCallback& progress = {});

}  // namespace datadyn::flesh
