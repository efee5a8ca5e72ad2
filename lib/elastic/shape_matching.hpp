#pragma once
/// @file
/// Shape matching with one region per particle (its 1-ring), as in FastLSM (Rivers & James 2007)
/// and Koyama et al. 2013 ("Real-time example-based elastic deformation", IPSJ Journal 54(10)),
/// eqs. 1-3.
///
/// Region r is particle r and every particle sharing a tet edge with it. Region membership is
/// symmetric (i is in region r iff r is in region i), so particle i lies in n_i = |region i|
/// regions. Inside a region particle i counts with the mass m_i / n_i (FastLSM): then the goal
/// forces of all regions sum to zero and linear momentum is conserved exactly.
///
///   c0_r = Σ w_i x0_i / Σ w_i,  c_r = Σ w_i x_i / Σ w_i,  w_i = m_i / n_i
///   q_i = x0_i − c0_r,  p_i = x_i − c_r
///   A_r = (Σ w_i p_i q_iᵀ)(Σ w_i q_iᵀ q_i)⁻¹ = A_pq A_qq⁻¹                       (eq. 1)
///   A_r = R_r S_r (polar),  plain goal g_{r,i} = R_r q_i + c_r                      (eq. 2)
///   example-based goal g_{r,i} = R_r S*_r q_i + c_r                                  (eq. 3)
///   g_i = (1 / n_i) Σ_{r ∋ i} g_{r,i}
///
/// @note Which rotation: R_r is the rotation of A_r = A_pq A_qq⁻¹ (as the paper writes eq. 1),
/// not of A_pq alone (Müller et al. 2005). Only then is S_r = R_rᵀ A_r a strain that is the
/// identity at rest whatever the region's shape, and R_r S_r = A_r exactly, so that a region
/// deformed affinely to an example pose has its goal at its particles (examples are
/// equilibria, reference check 2). The price: R_r is not the rotation that best fits the region
/// in the least-squares sense when A_qq is anisotropic, so the torques of the goal forces of one
/// region do not cancel exactly and angular momentum is only approximately conserved (linear
/// momentum is exact, see above). polar(A_pq) would conserve angular momentum per region but
/// would make neither the rest strain the identity nor affine examples equilibria.

#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "core/types.hpp"

namespace datadyn::elastic {

/// Symmetric 3 by 3 strain as 6 numbers (xx, yy, zz, xy, yz, zx); the strain vector S(x) of a
/// pose is these 6 numbers per region, region after region (6 M numbers).
inline constexpr int kStrainSize = 6;

/// Per-region constants of the rest pose, in flat arrays (compressed rows).
struct RegionSet {
  /// M + 1 offsets into members: region r is members[offsets[r] .. offsets[r+1]).
  std::vector<int> offsets;
  /// Particle indices of each region, ascending (the region's own particle included).
  std::vector<int> members;
  /// Mass of each member inside its region, m_i / n_i (kg); one per entry of members.
  std::vector<double> member_mass;
  /// Rest offset q_i = x0_i − c0_r of each member (metres); one per entry of members.
  std::vector<Eigen::Vector3d> rest_offset;
  /// M rest centres c0_r (metres).
  std::vector<Eigen::Vector3d> rest_centre;
  /// M inverses A_qq⁻¹ (1/(kg m²)); a pseudo-inverse for a flat region (see one_ring_regions).
  std::vector<Eigen::Matrix3d> aqq_inverse;
  /// M total region masses Σ w_i (kg).
  std::vector<double> region_mass;
  /// 1 / n_i per particle (the goal is the mean over the n_i regions containing i).
  std::vector<double> inverse_count;

  int region_count() const { return static_cast<int>(rest_centre.size()); }
};

/// Builds one region per particle from the tet mesh's vertex 1-rings.
/// @param rest #V by 3 rest positions x0 (metres).
/// @param tets #K by 4 vertex indices (every vertex in at least one tet).
/// @param masses #V particle masses (kg), > 0.
/// @return M = #V regions. A_qq is inverted through its eigen-decomposition; eigenvalues below
///   1e-12 of the largest are dropped (a pseudo-inverse), which only happens for a region whose
///   rest particles are coplanar, impossible when every tet has volume.
/// @throws std::invalid_argument if a vertex is in no tet, a mass is not positive, or an index
///   is out of range.
RegionSet one_ring_regions(const Points3& rest, const Tets& tets, const Eigen::VectorXd& masses);

/// The per-region state shape matching computes from the current positions.
struct RegionFrames {
  std::vector<Eigen::Vector3d> centre;           ///< M current centres c_r (metres)
  std::vector<Eigen::Quaterniond> rotation;      ///< M rotations R_r (warm start of the next step)
  std::vector<Eigen::Matrix3d> rotation_matrix;  ///< the same M rotations as matrices
  std::vector<double> strain;  ///< 6 M strains S_r = sym(R_rᵀ A_r), dimensionless
};

/// Frames of the rest pose: c_r = c0_r, R_r = I, S_r = I.
RegionFrames rest_frames(const RegionSet& regions);

/// Eq. 1 for every region: centres, rotations (warm-started from frames.rotation, see
/// rotation_warm_started) and strains of the pose x. Runs in parallel over fixed chunks of
/// regions (bitwise the same for any thread count).
/// @param x #V by 3 current positions (metres).
/// @param frames in: previous rotations; out: the new frames.
/// @param exact use the SVD polar decomposition for every region instead of the warm start
///   (for example poses, computed once).
void match_regions(const RegionSet& regions, const Eigen::Ref<const Points3>& x,
                   RegionFrames& frames, bool exact = false);

/// The strain vector S(x) of a pose (6 M numbers), every rotation from the SVD.
std::vector<double> strain_vector(const RegionSet& regions, const Eigen::Ref<const Points3>& x);

/// Per-region goal transforms: g_{r,i} = M_r x0_i + t_r with M_r = R_r S*_r and
/// t_r = c_r − M_r c0_r (eq. 2 with S* = I, eq. 3 otherwise).
struct RegionGoals {
  std::vector<Eigen::Matrix3d> linear;       ///< M matrices M_r (dimensionless)
  std::vector<Eigen::Vector3d> translation;  ///< M vectors t_r (metres)
};

/// M_r = R_r and t_r = c_r − R_r c0_r (plain shape matching, eq. 2).
void plain_goals(const RegionSet& regions, const RegionFrames& frames, RegionGoals& goals);

/// M_r = R_r S*_r and t_r = c_r − M_r c0_r with S*_r given as 6 M numbers (eq. 3).
void example_goals(const RegionSet& regions, const RegionFrames& frames,
                   const std::vector<double>& projected_strain, RegionGoals& goals);

/// Goal of particle i: g_i = (1/n_i) Σ_{r ∋ i} (M_r x0_i + t_r), written to row i of goals.
/// @param rest #V by 3 rest positions x0 (metres).
/// @param goals #V by 3 output (metres), sized by the caller.
void particle_goals(const RegionSet& regions, const Eigen::Ref<const Points3>& rest,
                    const RegionGoals& region_goals, Eigen::Ref<Points3> goals);

/// Symmetric 3 by 3 from 6 numbers (xx, yy, zz, xy, yz, zx).
inline Eigen::Matrix3d strain_matrix(const double* s) {
  Eigen::Matrix3d m;
  m << s[0], s[3], s[5], s[3], s[1], s[4], s[5], s[4], s[2];
  return m;
}

}  // namespace datadyn::elastic
