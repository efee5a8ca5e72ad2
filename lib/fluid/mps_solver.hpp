#pragma once
/// @file
/// A 2D MPS (moving particle semi-implicit) solver for water in a tank: Koshizuka & Oka 1996,
/// "Moving-particle semi-implicit method for fragmentation of incompressible fluid", Nucl. Sci.
/// Eng. 123, as in the textbook code of Koshizuka's group. One step:
///
///  1. explicit: u* = u + dt (ν ∇²u + g), r* = r + dt u*       (Laplacian model, eq. 11)
///  2. collision: pairs closer than 0.5 l0 exchange momentum with restitution 0.2
///  3. number density n*_i = Σ_j w(|r*_ij|) (eq. 4); free surface where n*_i < β n0 (p = 0)
///  4. pressure Poisson equation  Σ_j a w_ij (p_i − p_j)/ρ + κ p_i / dt² = γ (n*_i − n0)/(n0 dt²)
///     with a = 2d/(n0 λ) over fluid and wall particles (eq. 13 with the relaxation γ and the
///     weak compressibility κ of the textbook code), assembled sparse and solved by conjugate
///     gradients with a two-level incomplete-Cholesky preconditioner (see PpeSolver), warm
///     started from the last step's pressure; SourceTerm::Mixed adds the velocity divergence
///  5. negative pressure set to 0; gradient ∇p_i = d/n0 Σ_j (p_j − p̂_i) r_ij/|r_ij|² w_ij with
///     p̂_i the neighbourhood minimum (eq. 9, the stabilised form), times the corrective matrix
///     C_i of Khayyer & Gotoh 2011 where it is well conditioned; u = u* − dt ∇p/ρ,
///     r = r* + dt (u − u*)
///  6. a particle that slipped between two wall particles into a wall goes back just across the
///     wetted boundary, its velocity into the wall removed; then the checks (NaN, Courant number,
///     particles deeper than leak_depth in a wall or out over the rim)
///
/// Walls: the tank's wall particles take part in the number density and the pressure equation
/// (zero velocity; walls without water within r_e are left out), dummy particles only in the
/// number density. Every loop runs in parallel over fixed chunks and every sum is combined in
/// chunk order, so results are bitwise the same for any thread count; the pair loops' AVX-512
/// kernels (fluid/pair_kernels.hpp) give the same bits as their scalar versions.

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "core/types.hpp"
#include "fluid/mps_kernel.hpp"
#include "fluid/neighbor_grid.hpp"
#include "fluid/tank.hpp"

namespace datadyn::fluid {

/// How the time step is chosen.
enum class TimeStepMode {
  Fixed,    ///< dt as given (shortened only to land on output frame times)
  Courant,  ///< dt = min(dt, courant l0 / max|u|)
};

/// Right-hand side of the pressure Poisson equation.
enum class SourceTerm {
  /// γ (n* − n0)/(n0 dt²): number density only (Koshizuka & Oka 1996, the textbook code).
  Density,
  /// −∇·u*/dt + γ (n* − n0)/(n0 dt²): velocity divergence plus a small density relaxation
  /// (Tanaka & Masunaga 2010, "Stabilization and smoothing of pressure in MPS method by
  /// quasi-compressibility", J. Comput. Phys. 229, eq. 20). Smoother at rest, but in splashes the
  /// divergence of sparse neighbourhoods kicked single particles to 80 m/s in our breaking-wave
  /// scenes, so it is not the default.
  Mixed,
};

/// Parameters of the MPS solver, SI units. Defaults: water and the textbook code.
struct MpsParams {
  double density = 1000.0;                       ///< ρ, kg/m³
  double viscosity = 1.0e-6;                     ///< kinematic ν, m²/s
  Eigen::Vector2d gravity{0.0, -9.81};           ///< m/s²
  double re_density = 2.1;                       ///< r_e of number density and gradient, in l0
  double re_laplacian = 3.1;                     ///< r_e of the Laplacian (viscosity, PPE), in l0
  double surface_threshold = 0.97;               ///< β: free surface where n < β n0
  SourceTerm source_term = SourceTerm::Density;  ///< right-hand side of the PPE
  /// γ of the density term of the PPE source. The textbook code uses 0.2; 0.05 takes the rms
  /// speed of a still tank after 1 s from 4.6 % to 2.9 % of sqrt(g d) and leaves the dam-break
  /// front unchanged (docs/tools/mps-gen.md).
  double relaxation = 0.05;
  /// Multiply the pressure gradient by the corrective matrix of Khayyer & Gotoh 2011 (exact for
  /// linear pressure on disordered particles): less noise at rest; off = the textbook gradient.
  bool gradient_correction = true;
  double compressibility = 0.45e-9;  ///< κ, 1/Pa
  double collision_distance = 0.5;   ///< in l0
  double restitution = 0.2;          ///< of the collision model, in [0, 1]
  TimeStepMode time_step = TimeStepMode::Courant;
  double dt = 1.0e-3;    ///< s: the fixed step, or the largest step in Courant mode
  double courant = 0.2;  ///< Courant number max|u| dt / l0 aimed at (and required of a fixed dt)
  double courant_max = 0.5;  ///< a step ending above this Courant number fails (unstable)
  double dt_min = 1.0e-6;    ///< s: Courant mode fails if it would need a smaller step
  /// PPE: stop when |b − A p| <= tolerance |b|. With b = γ (n* − n0)/(n0 dt²) a residual of
  /// 1e-3 |b| misses the step's density correction (γ = 5 % of the density error) by 1e-3 of
  /// itself, far below the particles' density noise; the pressure is then within 0.1-0.2 % of a
  /// converged solve on the l0 = 5 mm dam break. 1e-4 took 35 % more CG iterations for the same
  /// dam-break front (docs/tools/mps-gen.md, fifth speed round).
  double ppe_tolerance = 1.0e-3;
  int ppe_max_iterations = 1000;  ///< PPE: fail beyond this many CG iterations
  double leak_depth = 1.0;        ///< in l0: a particle this far inside a solid has left the tank
};

/// What ended a step.
enum class StepStatus {
  Ok,
  PpeNotConverged,  ///< CG reached ppe_max_iterations
  NonFinite,        ///< NaN or infinity in a position, velocity or pressure
  CourantExceeded,  ///< a particle moved more than courant_max l0 in one step
  LeftTank,         ///< a particle went through a wall (deeper than leak_depth into a solid)
};

/// "ok", "PPE not converged", "NaN", "Courant number exceeded", "left the tank".
const char* step_status_name(StepStatus s);

/// Outcome of one step; the numbers are for diagnostics and benchmarks.
struct StepResult {
  StepStatus status = StepStatus::Ok;
  int particle = -1;  ///< the offending fluid particle (index as given at construction), or -1
  Eigen::Vector2d position = Eigen::Vector2d::Zero();  ///< its position (metres)
  double speed = 0;                                    ///< its speed (m/s)
  double dt = 0;                                       ///< the step taken (s)
  double courant = 0;     ///< max |u| dt / l0 over fluid particles after the step
  int iterations = 0;     ///< CG iterations of the PPE
  double residual = 0;    ///< |b − A p| / |b| at the end of CG
  int unknowns = 0;       ///< rows of the PPE
  bool over_rim = false;  ///< LeftTank: the particle went over the rim (beside an open top)
};

/// One line describing a failed step, e.g. "PPE not converged: residual 3.1e-04 after 1000
/// iterations (tolerance 1e-06), particle 12 at (0.314, 0.052) m". Empty for Ok.
std::string describe_failure(const StepResult& r, const MpsParams& params);

/// Seconds spent per part of the step, summed over steps.
struct StepTiming {
  double neighbors = 0;  ///< binning, reordering and neighbour lists
  double ppe = 0;        ///< assembling and solving the pressure Poisson equation
  double other = 0;      ///< explicit step, collision, number density, gradient, checks
  int steps = 0;
  long long ppe_iterations = 0;
};

/// Conjugate gradients on the symmetric positive definite PPE matrix A, warm started, with a
/// two-level incomplete-Cholesky preconditioner:
///  - an incomplete Cholesky factor of S, A's strong couplings |A_ij| >= 0.09 sqrt(A_ii A_jj)
///    (the nearest neighbours, closer than about 1.15 l0: 4 of a lattice particle's 28),
///    M = (D + L) D⁻¹ (D + Lᵀ) with L the strict lower triangle of S and
///    D_i = A_ii − Σ_{k<i} (S_ik / D_k)(S_ik + τ (Σ_{j>k} S_kj − S_ik)), τ = 0.9 — the diagonal
///    ("DIC") factor, modified towards row-sum preservation (MIC, Bridson's "Fluid Simulation for
///    Computer Graphics", sec. 4.3.2); factored in independent blocks of at least 2048 rows so it
///    also applies in parallel. On all of A's couplings it took 26 instead of 32 CG iterations
///    per step of the l0 = 5 mm dam break, but its triangular solves cost 1.6 times the product
///    with A, so the PPE took 1.4 times as long;
///  - and deflation over aggregates of 16 consecutive rows (rows follow the particles' cell
///    order, so an aggregate is a patch of neighbouring particles): P the aggregate indicator,
///    A_c = Pᵀ A P solved by sparse Cholesky, applied as A-DEF2 (Tang, Nabben, Vuik, Erlangga
///    2009, "Comparison of two-level preconditioners derived from deflation, domain decomposition
///    and multigrid methods", J. Sci. Comput. 39, table 2): z = y + P A_c⁻¹ Pᵀ (r − A y),
///    y = M⁻¹ r. It removes the smooth error CG is slow on; at l0 = 5 mm and tolerance 1e-4 CG
///    takes 20.4 iterations per step (15.1 at the default 1e-3), against 31.4 with the coarse
///    part added to y instead. Smoothing P once on the strong couplings (smoothed aggregation)
///    took 14.0 instead of 20.4 but made the step slower: its setup took 2.4 instead of 0.4 ms.
/// Matrix-vector and dot products run in parallel over fixed chunks; blocks, aggregates and chunks
/// depend on the row count only: the result is bitwise the same for any thread count. The serial
/// factorisation of A_c runs beside the incomplete factor's blocks.
/// At l0 = 5 mm on two threads the PPE takes about two thirds of the step: the product with A a
/// quarter of it, the triangular solves, the update of p and q, the coarse solve (serial, 15 µs per
/// iteration) and the per-step setup (factor, A P and A_c) most of the rest. Tried and not kept:
/// A in sliced ELLPACK, 16 rows side by side (a gather of four rows' entries touches four cache
/// lines, of one row's mostly one: slower), eight partial sums per row with a masked remainder
/// (slower), aggregates of 12 rows (18.2 iterations, no faster), the coarse factor's ordering
/// kept from step to step (refreshed when the fill grew by a quarter: the aggregates shift every
/// step, so the fill grew, and the factor and solves cost more than the ordering saved).
/// The triangular solves with every row padded to its block's widest (a loop count the branch
/// predictor knows): the solves and the padding took 45 % more of the profile than the solves.
/// x and r are updated in the pass of the preconditioner (one parallel region fewer per
/// iteration; no change in the wall time measurable on the shared development machine).
class PpeSolver {
 public:
  using Matrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
  /// The incomplete factor is cut into floor(rows / kMinBlockRows) independent blocks (at least
  /// one), each a whole number of aggregates.
  static constexpr std::size_t kMinBlockRows = 2048;
  /// Consecutive rows per aggregate of the coarse correction.
  static constexpr std::size_t kAggregate = 16;
  /// Modification of the factor's diagonal (0: DIC, 1: fully modified IC).
  static constexpr double kMicTau = 0.9;
  /// The factor keeps A_ij where |A_ij| >= kStrong sqrt(A_ii A_jj): symmetric, and on the
  /// lattice (A_ij / A_ii = 2.1 / 18.98 = 0.11 for the nearest, 0.063 for the diagonal neighbours)
  /// the 4 nearest neighbours.
  static constexpr double kStrong = 0.09;
  struct Result {
    bool converged = false;
    int iterations = 0;
    double residual = 0;  ///< |b − A x| / |b| (recomputed from the last update)
  };
  /// Factors the preconditioner. @pre A symmetric with sorted rows, positive diagonal.
  void compute(const Matrix& A);
  /// Solves A x = b starting from x (warm start); stops at |b − A x| <= tolerance |b|.
  Result solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, double tolerance,
               int max_iterations) const;

 private:
  struct Block {
    int first = 0, last = 0;
    std::vector<int> lo_ptr, lo_col, up_ptr, up_col;
    // The factor's off-diagonals in single precision: the triangular solves are bound by memory
    // traffic, and a preconditioner needs only to be symmetric positive definite, which the same
    // rounding of A_ic and A_ci keeps.
    std::vector<float> lo_val, up_val;
  };
  const Matrix* A_ = nullptr;
  Eigen::VectorXd inv_diag_, diag_, upper_sum_;  // 1 / D_i, A_ii, sum_{c > i} A_ic
  std::vector<int> diag_pos_;                    // entry of A_ii in A's arrays
  std::vector<Block> blocks_;

  mutable Eigen::VectorXd r_, z_, p_, q_, s_;
  // z = M^-1 r on block k (and P^T r on its aggregates); returns r . z over the block.
  double smooth_block(std::size_t k, const Eigen::VectorXd& r, Eigen::VectorXd& z) const;
  double smooth(const Eigen::VectorXd& r, Eigen::VectorXd& z) const;  // all blocks; r . z
  void build_coarse();  // A P and A_c = P^T A P; compute() factors A_c
  Eigen::SparseMatrix<double> coarse_matrix_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> coarse_;
  mutable Eigen::VectorXd rc_, rc_defect_, xc_;
  // A P (P the aggregate indicator) in chunks of rows: chunk c holds rows [c, c + 1) times the
  // row grain, in slices of the kAggregate rows of an aggregate padded with zeros to the
  // slice's longest row: slice s in [start[s], start[s + 1]), entry k of its row r at
  // start[s] + k kAggregate + r. Rows have 1-10 entries (5.3 on average); one at a time, the
  // product mispredicted the end of most rows and waited on each row's chain of additions.
  struct RowChunk {
    std::vector<int> start, col;
    std::vector<double> val;
  };
  std::vector<RowChunk> ap_;
  std::size_t row_grain_ = 0;  // rows per chunk of the row loops (whole aggregates)
  mutable std::vector<double> block_rz_, block_rr_;
};

/// The solver. Particles are stored reordered by grid cell for memory locality (rebuilt every
/// step); accessors return fluid particles in the order they were given.
class MpsSolver {
 public:
  /// @param tank            the tank (its l0 is the particle spacing); must outlive the solver
  /// @param params          solver parameters
  /// @param fluid_position  #F by 2 initial water particles (metres), on the tank's lattice
  /// @param fluid_velocity  #F by 2 initial velocities (m/s)
  MpsSolver(const Tank& tank, const MpsParams& params,
            const Eigen::Ref<const Points2>& fluid_position,
            const Eigen::Ref<const Points2>& fluid_velocity);

  /// Advances by dt (seconds, > 0). On a failure the state is the one the failed step produced.
  StepResult step(double dt);
  /// The step the Courant condition allows now: min(params.dt, courant l0 / max|u|) in Courant
  /// mode, params.dt in fixed mode.
  double stable_time_step() const;

  double time() const { return time_; }
  std::size_t fluid_count() const { return nf_; }
  const MpsParams& params() const { return params_; }
  const Tank& tank() const { return tank_; }
  const LatticeConstants& density_constants() const { return kd_; }
  const StepTiming& timing() const { return timing_; }

  /// Fluid positions (metres), velocities (m/s) and pressures (Pa) in the order given at
  /// construction: #F by 2, #F by 2, #F.
  void fluid_positions(Points2& out) const;
  void fluid_velocities(Points2& out) const;
  void fluid_pressures(Eigen::VectorXd& out) const;
  /// Number density of the fluid particles at the last step's temporary positions (#F, in the
  /// order given), for tests.
  void fluid_number_density(Eigen::VectorXd& out) const;
  /// Boundary particles (fixed): positions #B by 2 (metres) and types.
  const Points2& boundary_positions() const { return tank_.boundary_positions(); }
  const std::vector<ParticleType>& boundary_types() const { return tank_.boundary_types(); }

  /// The last PPE (rows = unknowns in particle order) and its right-hand side and solution, for
  /// tests of the linear solve.
  const PpeSolver::Matrix& ppe_matrix() const { return A_; }
  const Eigen::VectorXd& ppe_rhs() const { return b_; }
  const Eigen::VectorXd& ppe_solution() const { return x_; }

 private:
  void rebuild_neighbors();
  void explicit_step(double dt);
  double collide(double dt);  // returns the largest squared displacement in the step so far
  void number_density();
  StepResult solve_pressure(double dt);
  void correct(double dt);
  // Puts back particles that slipped into a wall and checks the step (NaN, left the tank, Courant).
  StepResult finish_step(double dt);

  const Tank& tank_;
  MpsParams params_;
  LatticeConstants kd_, kl_;
  double l0_, r_list_, re_d_, re_l_;
  std::size_t nf_ = 0, nb_ = 0, n_ = 0;
  double time_ = 0;
  double vmax2_ = -1;  // largest squared fluid speed after the last step (-1: none yet)

  // All particles, fluid rows [0, nf) in cell order, then boundary rows in cell order.
  Points2 pos_, vel_;
  Points2 pos_tmp_, vel_tmp_;  // scratch; after the explicit step pos_tmp_ holds r^n
  Eigen::VectorXd pressure_, density_, divergence_;
  std::vector<ParticleType> type_;
  std::vector<std::int32_t> solid_;  // 0 for dummy particles, 1 otherwise
  std::vector<int> id_;              // fluid row -> index as given
  std::vector<int> boundary_id_;     // boundary row - nf -> index in tank.boundary_positions()
  std::vector<int> scratch_perm_;
  Points2 pos_scratch_, vel_scratch_;  // rebuild_neighbors' reordering
  Eigen::VectorXd p_scratch_;

  CellGrid fluid_grid_, static_grid_;
  NeighborLists list_;  // fluid -> all, radius r_list at the start of the step
  // Pairs within r_e(Laplacian) at the temporary positions: fluid -> fluid/wall (no dummies).
  // Stored in the slots of list_ (row i starts at list_.offset[i]) with a count per row.
  NeighborLists lap_;
  std::vector<double> lap_w_;
  std::vector<int> lap_count_;
  // Gradient pairs within r_e(density): fluid -> fluid/wall, with r_ij w / |r_ij|².
  NeighborLists grad_;
  std::vector<double> grad_x_, grad_y_;
  std::vector<int> grad_count_;
  Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor> correction_;  // C_i: xx, xy, yy
  // Static boundary data: for each wall row, the static density and the wall neighbours within
  // r_e(Laplacian) with their weights.
  Eigen::VectorXd static_density_;
  NeighborLists wall_wall_;
  std::vector<double> wall_wall_w_;
  // Per step: wall -> fluid pairs within r_e(Laplacian) (transposed from lap_).
  NeighborLists wall_fluid_;
  std::vector<double> wall_fluid_w_;

  std::vector<int> unknown_;  // particle row -> PPE row or -1

  std::vector<int> row_particle_;
  PpeSolver::Matrix A_;
  Eigen::VectorXd b_, x_;
  PpeSolver ppe_;
  StepTiming timing_;
};

}  // namespace datadyn::fluid
