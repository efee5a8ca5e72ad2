#pragma once
/// @file
/// Fast simulation of mass-spring systems (Liu, Bargteil, O'Brien, Kavan 2013), the projective
/// dynamics form of implicit Euler that Lee, Oh, Lee 2019 use (through P-ADMM) for the target and
/// the miniature cloth. Each step minimises
///   1/2 (x - y)^T M (x - y) + h^2 E(x),  y = x_n + h v_n + h^2 M^-1 f_ext       (Liu eq. 3)
/// by alternating a local step, d_s = r_s (x_i - x_j) / |x_i - x_j| for every spring s (eq. 12),
/// and a global step (M + h^2 L) x = M y + h^2 J d (eq. 13) with L = sum k_s A_s A_s^T and
/// J = sum k_s A_s S_s^T (k_s in both). The N x N matrix is the same for x, y and z: it is
/// factored once (Eigen's SimplicialLDLT, AMD ordering) and solved for the three right-hand sides
/// together (ThreeColumnLdlt). The right-hand side is gathered per particle over its springs in
/// spring order, so the local step and the assembly run in parallel with the bits of a serial run.
/// With `solver: admm` the local step is that of ADMM (Overby, Brown, Li, Narain 2017, alg. 1) with
/// the weights W_s^2 = k_s, which keep the global matrix: per spring, z_s minimises
/// k_s/2 (|z| - r_s)^2 + k_s/2 |z - (D_s x + u_s)|^2, i.e. z_s is D_s x + u_s scaled to length
/// (r_s + |D_s x + u_s|)/2; the dual u_s += D_s x - z_s (zero at the start of a step); the global
/// step takes d_s = z_s - u_s. Its fixed point is the minimiser itself, as for projective dynamics.
/// Pinned particles are eliminated from the system (their positions are exact, no stiff term).
/// After every global solve, particles inside the sphere or below the ground are projected to
/// the surface plus a margin; at the end of the step the velocity's inward normal component is
/// removed for them, then the velocity is damped. With self-collision, the particles are then
/// pushed apart to the thickness (self_collision.hpp), those on a collider held, and projected to
/// the colliders again. If two particles are within a thickness after the first solve of a step,
/// the pairs within kContactReach thicknesses are also held apart in the solve itself for the
/// rest of its iterations, each by a contact spring: a projective-dynamics term
/// w/2 |x_i - x_j - d|^2 whose local step d is x_i - x_j if the two are a thickness apart or more
/// (no force) and that offset stretched to the thickness otherwise, its weight w = h^2 k_c in a
/// copy of the global matrix factored for those pairs (ThreeColumnLdlt, as the matrix) and kept for
/// later steps while the touching pairs are among them (a spring without force changes only how
/// fast the iterations converge, not their fixed point). Without it the separation alone moves
/// particles by their masses against springs the solve knew nothing of: where the springs press a
/// fold together it stretches them anew every step, and that work comes back as motion (a flying
/// flag's energy went from 1.7 J to 131 J in 10 frames).

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "cloth/cloth_params.hpp"
#include "cloth/self_collision.hpp"
#include "cloth/three_column_ldlt.hpp"
#include "core/types.hpp"

namespace datadyn::cloth {

struct StepResult {
  bool ok = true;       ///< false: a position or velocity is not finite or left 1e3 m
  int particle = -1;    ///< the first bad particle when !ok
  double motion = 0.0;  ///< the farthest a particle moved in the step (frame: in any substep), m
};

class MassSpringSolver {
 public:
  /// Builds the springs and pins and factors M + h^2 L. Starts at rest_positions(params) with zero
  /// velocity. Throws RunError if the matrix cannot be factored.
  explicit MassSpringSolver(const ClothParams& params);

  const ClothParams& params() const { return params_; }
  const std::vector<Spring>& springs() const { return springs_; }
  const std::vector<int>& pins() const { return pins_; }
  /// #N by 3, m.
  const Points3& positions() const { return x_; }
  /// #N by 3, m/s.
  const Points3& velocities() const { return v_; }
  /// Simulated time, s.
  double time() const { return time_; }

  /// Replaces the state (e.g. to start from a perturbed shape). Pins keep their rest positions.
  void set_state(const Points3& positions, const Points3& velocities);

  /// One implicit step of length params().time_step / params().substeps.
  StepResult step();
  /// params().substeps steps: from one output frame to the next. Stops at a failed step.
  StepResult advance_frame();

  /// Kinetic + spring + gravitational potential energy, J (gravity times force_scale; wind is not
  /// conservative and not counted).
  double energy() const;

  /// #N by 3 external force at the current state (gravity and wind, times force_scale), N.
  Points3 external_forces() const;

 private:
  /// Two particles within a thickness, held apart by a contact spring for the rest of a step's
  /// iterations: particles i and j, and their rows in the permuted system (-1: pinned).
  struct Contact {
    int i, j, ri, rj;
    bool operator<(const Contact& o) const;  ///< by (i, j)
  };
  /// The tested pairs of `near` closer than `distance` in x, at least one of them free, in
  /// increasing (i, j).
  std::vector<Contact> pairs_within(const Points3& x, const SelfCollision::Partners& near,
                                    double distance) const;
  // Ordered again by AMD: the permuted system's order left more fill with the contact springs
  // (2.6 ms against 1.7 ms a factorisation on the collision scene at 33 x 33). Solved as the
  // matrix is, three columns at once on two threads: the collision scene at 65 x 65 took 8.9 s
  // for its 120 frames, against 11.2 s with SimplicialLDLT::solve, to the same bits.
  using ContactLdlt = ThreeColumnLdlt;
  /// The factor of the system with contact springs for the rest of a step, or null if no two
  /// particles are within a thickness: the last one if its contacts_ take in every touching
  /// pair, else a new one for the pairs within kContactReach thicknesses.
  const ContactLdlt* contact_system(const Points3& x, const SelfCollision::Partners& near);
  void add_contact_terms(const std::vector<Contact>& contacts, const Points3& x,
                         ThreeColumns& rhs) const;

  /// h of one implicit step: the frame interval over the substeps.
  double step_length() const { return params_.time_step / params_.substeps; }

  ClothParams params_;
  std::vector<Spring> springs_;
  std::vector<int> pins_;
  std::vector<int> free_;          // free particles, increasing
  std::vector<int> row_particle_;  // row of the permuted reduced system -> particle
  // Springs of each permuted row in spring order: 2 s if the particle is the spring's i, 2 s + 1
  // if its j; the springs of row r are incident_[incident_start_[r] .. incident_start_[r + 1]).
  std::vector<int> incident_start_, incident_;
  std::vector<double> spring_weight_;  // h^2 k_s
  Triangles triangles_;
  Points3 x_, v_, pinned_x_;
  double divergence_bound_ = 0.0;  // |coordinate| beyond which a step has diverged
  ThreeColumns pin_rhs_;           // #free by 3, permuted rows: (M + h^2 L)_{free, pinned} x_pinned
  ThreeColumnLdlt system_;
  std::optional<SelfCollision> self_;
  // For self-collision's contact springs: M + h^2 L in the permuted order, each particle's row
  // in it (-1: pinned), and h^2 times the contact springs' stiffness.
  Eigen::SparseMatrix<double> permuted_matrix_;
  std::vector<int> particle_row_;
  double contact_weight_ = 0.0;
  std::vector<Contact> contacts_;                      // the contact springs of contact_factor_
  std::shared_ptr<const ContactLdlt> contact_factor_;  // replaced, never changed: copies share it
  double time_ = 0.0;
};

}  // namespace datadyn::cloth
