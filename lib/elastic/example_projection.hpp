#pragma once
/// @file
/// Projection of the current strain onto the span of example strains, Koyama et al. 2013
/// section 4.3 (eqs. 6-7) and section 4.4 (localised examples).
///
/// With S_0 = S(x_0) the rest strain vector and S_k = S(x_k) those of the N examples
/// (shape_matching.hpp: 6 numbers per region), L = (S_1 − S_0, ..., S_N − S_0) is 6M by N and
///
///   w = (LᵀL + λ I)⁻¹ Lᵀ (S − S_0),   w_0 = 1 − Σ_k w_k                                (eq. 7)
///   β blending: w_k <- β w_k (k >= 1),  w_0 <- w_0 + (1 − β) Σ_k w_k
///   S* = Σ_{k=0..N} w_k S_k                                                      (eq. 6 minimiser)
///
/// Regularisation: λ = ridge × tr(LᵀL) / N, i.e. the ridge is relative to the mean squared
/// length of the example strain offsets, so it does not depend on the region count or on how
/// strong the examples are. It keeps LᵀL invertible when examples are linearly dependent (two
/// identical examples then share their weight equally; an example equal to the rest pose gets
/// weight 0) and biases well-posed weights by about ridge × cond(LᵀL) relative. ridge = 0 gives
/// the exact least-squares weights of eq. 7 (and fails for dependent examples).
///
/// Convex weights: eq. 7 as written extrapolates. A body squashed by gravity beyond a squash
/// example projects to example weights above 1 (and the rest weight below 0); with β = 0.995 the
/// goal then follows the body along the example direction with only 1 − β of the stiffness, and
/// the weights run on until the goal shape is flat (a 1 m body with a 0.7 squash example ended 2
/// mm thick). The paper calls the example manifold a linear interpolation of the examples, and
/// its authors' program clamps negative weights by default; with `convex` the weights are the
/// exact least-squares solution of eq. 7 restricted to the convex hull of the rest pose and the
/// examples (every w_k >= 0, Σ_{k=0..N} w_k = 1), found by a primal active-set method on
/// LᵀL + λ I, before β blending. Inside the hull it equals eq. 7.
///
/// Groups (section 4.4): every region belongs to one group; each group has its own L (its
/// regions' rows), LᵀL and weights, so different parts of a body can follow different examples.

#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"
#include "elastic/shape_matching.hpp"

namespace datadyn::elastic {

/// Most examples per body (weights are reduced in fixed-size arrays: no allocation per step).
inline constexpr int kMaxExamples = 16;

/// The example manifold of one body: strains of the rest pose and the examples, and per group the
/// regularised inverse of LᵀL.
struct ExampleSpace {
  int example_count = 0;  ///< N
  int group_count = 1;    ///< G
  /// 6 M rest strains S_0 (the identity per region, to rounding).
  std::vector<double> rest_strain;
  /// N × 6 M columns of L: example k (0-based) at [6 M k, 6 M (k + 1)), S_{k+1} − S_0.
  std::vector<double> offsets;
  /// M group ids in [0, G).
  std::vector<int> region_group;
  /// G lists of the regions of each group, ascending.
  std::vector<std::vector<int>> group_regions;
  /// G matrices LᵀL + λ I, N by N.
  std::vector<Eigen::MatrixXd> normal;
  /// G matrices (LᵀL + λ I)⁻¹, N by N.
  std::vector<Eigen::MatrixXd> normal_inverse;
  /// G ridges λ actually added.
  std::vector<double> ridge;
  /// G condition numbers of LᵀL (largest over smallest eigenvalue; infinity when singular).
  std::vector<double> condition;
};

/// Builds the example space.
/// @param regions the body's regions (one_ring_regions).
/// @param rest #V by 3 rest positions (metres).
/// @param examples N poses, each #V by 3 (metres), same vertex order as rest.
/// @param region_group M group ids (empty: one group); the groups used must be 0..G-1, each
///   non-empty.
/// @param ridge relative ridge, >= 0 (see the file comment); 1e-5 by default in the tools.
/// @throws std::invalid_argument for more than kMaxExamples examples, a pose with the wrong
///   number of vertices or a non-finite coordinate, bad group ids, a negative ridge, or (with
///   ridge = 0) a singular LᵀL.
ExampleSpace build_example_space(const RegionSet& regions, const Points3& rest,
                                 const std::vector<Points3>& examples,
                                 const std::vector<int>& region_group, double ridge);

/// Eq. 7 with β blending: the weights of each group for the strain vector `strain`.
/// @param strain 6 M numbers S(x) (RegionFrames::strain).
/// @param beta in [0, 1]: 1 keeps the projected weights, 0 gives the rest pose.
/// @param convex restrict the projection to the convex hull of the rest pose and the examples
///   (see the file comment); false: eq. 7 as written.
/// @param weights out: G × (N + 1) numbers, group g's weights w_0..w_N at [g (N + 1), ...);
///   each group's weights sum to 1 (to rounding).
/// Runs in parallel over fixed chunks of regions; the sums are combined in chunk order.
void project_strain(const ExampleSpace& space, const std::vector<double>& strain, double beta,
                    bool convex, std::vector<double>& weights);

/// The u minimising ½ uᵀ A u − dᵀ u over u_k >= 0, Σ_k u_k <= 1 (the example weights of a point
/// of the convex hull, w_0 = 1 − Σ u): a primal active-set method from u = 0. @pre A symmetric
/// positive definite, n by n with n <= kMaxExamples; d has n entries.
Eigen::VectorXd convex_weights(const Eigen::MatrixXd& A, const Eigen::VectorXd& d);

/// S*_r = S_0,r + Σ_k w_{g(r),k} (S_k,r − S_0,r) = Σ_{k=0..N} w_k S_k,r for every region.
/// @param weights G × (N + 1) numbers from project_strain.
/// @param projected out: 6 M numbers.
void blend_strains(const ExampleSpace& space, const std::vector<double>& weights,
                   std::vector<double>& projected);

}  // namespace datadyn::elastic
