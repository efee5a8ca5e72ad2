#pragma once
/// @file
/// Example poses given on the render mesh rather than on the simulation particles. An artist
/// poses the character's surface; a body filled with a lattice (voxel bodies) has particles no
/// one can pose by hand. The pose is carried to the particles through the embedding (fig. 9 of
/// Koyama et al. 2013, in reverse) by a least-squares fit with a harmonic fill of the interior.

#include <Eigen/Core>

#include "core/tet_mesh.hpp"
#include "core/types.hpp"
#include "elastic/embedding.hpp"

namespace datadyn::elastic {

struct SurfacePoseFit {
  Points3 particles;          ///< #V by 3 particle positions of the example (metres)
  double rms_residual = 0.0;  ///< rms distance of the embedded surface to the pose (metres)
  double max_residual = 0.0;  ///< largest such distance (metres)
  bool solved = false;  ///< false: the system was singular (a piece of the body with no render
                        ///< vertex); particles is then empty
};

/// Particle positions x whose embedded surface matches a pose of the render mesh:
///   minimise  Σ_r |Σ_b w_rb x_(p_rb) − v_r|²  +  λ Σ_(faces shared by tets a, b) |∇x(a) − ∇x(b)|²,
/// ∇x(t) the deformation gradient of tet t (linear in x). The regulariser vanishes exactly on
/// affine maps of the rest mesh, so a rigid or affine pose is reproduced exactly - also for
/// particles outside the surface - and particles the surface does not pin down follow the
/// most nearly affine continuation. λ = smoothness × tr(EᵀE) / tr(JᵀJ), relative, so it does
/// not depend on units or mesh size.
/// @param mesh rest tets (metres), positively oriented, face-connected, every vertex in a tet.
/// @param embedding the render mesh bound to `mesh` (embed_surface).
/// @param pose #R by 3 render vertex positions of the example (metres), same order as embedded.
/// @param smoothness λ relative, > 0.
/// @pre pose.rows() == embedding.particles.rows(); the render vertices do not all lie in one
///   plane (they must fix an affine map).
SurfacePoseFit particles_from_surface_pose(const TetMesh& mesh, const Embedding& embedding,
                                           const Points3& pose, double smoothness = 1e-4);

}  // namespace datadyn::elastic
