#pragma once
/// @file
/// Analytically integrated zero-restlength springs over a C1 cubic target (Jin et al. 2022,
/// "Analytically integrable zero-restlength springs for capturing dynamic modes unrepresented by
/// quasistatic neural networks", SIGGRAPH; sections 4-6).
///
/// Each vertex follows x'' = ks (x̂ - x) + kd (x̂' - x') (eq. 4; ks in 1/s^2 and kd in 1/s, both
/// divided by the mass) towards the Hermite cubic x̂ through its targets (eq. 1-3). The solver
/// carries the deviation y = x - x̂, which obeys y'' + kd y' + ks y = -x̂'' with x̂'' linear in each
/// interval, and is exact over an interval of any length tau (no step limit):
///   [y, y'](tau) = Φ [y, y'](0) - α [I1, Φ12] - β [J1, I1],   α = x̂''(0), β = x̂''',
/// with Φ = expm([[0, 1], [-ks, -kd]] tau) (the paper's eq. 7-13 written as a state map),
/// I1 = ∫Φ12, J1 = ∫I1. In terms of the eigenvalues a, b of the scaled matrix (a + b = -kd tau,
/// a b = ks tau^2) and φ0 = exp, φ1(x) = (e^x - 1)/x, φ2(x) = (e^x - 1 - x)/x^2:
///   Φ = A I + F0 (X - m I),  A = (e^a + e^b)/2 = E C(z),  F0 = φ0[a, b] = E S(z),
///   I1 = tau^2 φ1[a, b],  J1 = tau^3 φ2[a, b],
/// with m = -kd tau/2, E = e^m, z = (kd^2 - 4 ks) tau^2/4 and [a, b] divided differences.
/// This form never divides by ks (the paper's particular solution, eq. 8, loses every digit for
/// ks -> 0), so ks = 0 (a free particle) and ks = 1e-6 with kd = 1e4 stay exact.
/// Numerics (section 6): near critical damping (|z| < 1) C, S and the divided differences are
/// power series in z, so values and gradients are continuous across kd^2 = 4 ks; overdamped
/// (z >= 1) uses the eigenvalues λs tau = -a = ks tau^2/(-b) and λf tau = -b (no cancellation,
/// no e^{-kd tau/2} cosh ε overflow); underdamped (z <= -1) uses cos and sin.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include <Eigen/Core>

#include "core/progress.hpp"
#include "core/types.hpp"

namespace datadyn::flesh {

/// The exact map of one interval of length tau for one spring (see the file comment):
/// [y, y'](tau) = [[phi11, phi12], [phi21, phi22]] [y, y'](0) - α [i1, phi12] - β [j1, i1].
struct IntervalMap {
  double phi11 = 1.0, phi12 = 0.0, phi21 = 0.0, phi22 = 1.0;  ///< 1, s, 1/s^2, 1
  double i1 = 0.0;                                            ///< ∫0^tau Φ12, s^2
  double j1 = 0.0;                                            ///< ∫0^tau I1, s^3
};

/// The interval map for stiffness ks (1/s^2) and damping kd (1/s) over tau (s).
/// @pre ks >= 0, kd >= 0, tau >= 0, all finite.
IntervalMap interval_map(double ks, double kd, double tau);

/// The interval map and its exact derivatives with respect to ks and kd (forward mode, section
/// 6: the same formulas evaluated on dual numbers, so the derivative is exact to rounding and
/// continuous across critical damping wherever the value is).
struct IntervalMapGradient {
  IntervalMap value, d_ks, d_kd;
};
IntervalMapGradient interval_map_gradient(double ks, double kd, double tau);

/// The Hermite cubic of one interval, x̂(s) = q s^3 + a s^2 + b s + c, s in [0, 1] (eq. 2-3).
struct HermiteCubic {
  Eigen::Vector3d q, a, b, c;  ///< metres
};

/// Coefficients of interval n (between frames n and n+1) of the C1 cubic through `targets`
/// (eq. 3): central differences m0 = (x^{n+1} - x^{n-1})/2, m1 = (x^{n+2} - x^n)/2, one-sided
/// m0 = x^{n+1} - x^n in the first interval and m1 = x^{n+1} - x^n in the last.
/// @param targets F frames of #N by 3 positions (metres); @param n interval, 0 <= n < F - 1.
HermiteCubic hermite_coefficients(const std::vector<Points3>& targets, std::size_t n,
                                  Eigen::Index vertex);

/// Per-vertex spring parameters.
struct Springs {
  Eigen::VectorXd ks;  ///< #N stiffness / mass, 1/s^2, >= 0
  Eigen::VectorXd kd;  ///< #N damping / mass, 1/s, >= 0
};

struct SpringApplyOptions {
  /// Outputs per frame interval: 1 gives the frames; k > 1 adds the exact states at j/k of each
  /// interval (motion blur). >= 1.
  int subframes = 1;
  /// Vertices per parallel chunk (fixed: results do not depend on the thread count).
  std::size_t grain = 256;
  /// Frame indices (0 < f < F, ascending, no repeats) where the motion is cut (a camera cut, a
  /// teleport): the springs restart there at rest on the target, as at frame 0, and each side
  /// of the cut is a clip of its own (one-sided tangents at the cut, no cubic across it). The
  /// sub-frames of the interval that ends at a cut repeat the state at its start: a renderer's
  /// motion blur shows no streak across the jump.
  std::vector<std::size_t> resets;
  /// Scales the springs' deviation from the target: x = x̂ + amount (x_spring − x̂). 0 gives the
  /// target, 1 the springs, 2 twice their motion. Exact art direction for a linear system: the
  /// same as scaling the target's acceleration that drives the deviation. >= 0.
  double amount = 1.0;
};

/// The largest distance a point moved from `from` to `to` (same rows; metres, 0 for no points).
double largest_move(const Points3& from, const Points3& to);

/// The frames (indices f >= 1, ascending) at which some point of `targets` moved more than
/// `distance` metres from frame f - 1: the jumps a teleport or a cut in an animation makes.
/// @param distance metres, > 0.
std::vector<std::size_t> jump_frames(const std::vector<Points3>& targets, double distance);

struct SpringApplyResult {
  /// (F - 1) subframes + 1 states of #N by 3 positions (metres), the first at frame 0.
  std::vector<Points3> positions;
  /// Output times relative to frame 0 (s).
  std::vector<double> times;
};

/// The spring layer integrated one frame interval at a time (eq. 4-13), for animations longer
/// than memory: it holds each vertex's deviation and its velocity, never a frame it is not given.
/// Starts at rest on the target (x = x̂, x' = x̂'). Parallel over fixed chunks of vertices
/// (results do not depend on the thread count); the vertices run inner over contiguous rows.
class SpringStepper {
 public:
  /// `options.resets` is not used: the caller says where a clip ends (cut).
  SpringStepper(const Springs& springs, double dt, const SpringApplyOptions& options);
  /// The interval from frame `x0` to frame `x1`: out[j - 1] is the state at j/S of it (j = 1..S,
  /// S = subframes; out[S - 1] at x1). `prev` (the frame before x0) and `next` (the one after
  /// x1) are null at the ends of a clip, which gives one-sided tangents.
  void advance(const Points3* prev, const Points3& x0, const Points3& x1, const Points3* next,
               std::span<Points3> out);
  /// A cut between `x0` and `x1` (a reset): the sub-frames hold the state at x0, and x1 starts
  /// at rest on its target.
  void cut(const Points3& x0, const Points3& x1, std::span<Points3> out);

 private:
  /// Checks the frames' sizes and sizes the outputs to #N by 3.
  void prepare_step(std::initializer_list<const Points3*> frames, std::span<Points3> out) const;

  Eigen::Index n_;
  int subframes_;
  double amount_;
  std::size_t grain_;
  double alpha_scale_, beta_scale_;
  std::vector<std::vector<IntervalMap>> maps_;  ///< [j][vertex]: over j/S of an interval ([0]: all)
  std::vector<double> y_, yv_;                  ///< 3 #N deviations y = x - x̂ (m) and y' (m/s)
};

/// Integrates every vertex's spring through the targets (eq. 4-13), starting at rest on the
/// target (x = x̂, x' = x̂' at frame 0 and at every reset), and returns positions at the frame
/// (and sub-frame) times: SpringStepper over frames held in memory.
/// @param targets F >= 2 frames of #N by 3 positions (metres), spaced dt apart.
/// @param dt frame interval (s), > 0.
/// @param springs #N ks, kd.
SpringApplyResult spring_apply(const std::vector<Points3>& targets, double dt,
                               const Springs& springs, const SpringApplyOptions& options = {},
                               const ProgressCallback& progress = {});

/// One vertex's data over one sequence, laid out for the per-vertex loss: row n = frame n.
struct VertexTrack {
  Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor> target;  ///< F by 3 (m)
  Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor> truth;   ///< F by 3 (m)
  double dt = 1.0 / 30.0;                                            ///< s
};

/// Loss of eq. 14 for one vertex, L = Σ_{n>=1} w_n ||x(t^n) - x_D^n||^2 (m^2), and optionally
/// its exact gradient (∂L/∂ks, ∂L/∂kd) and Gauss-Newton matrix 2 Σ w_n J_n^T J_n with
/// J_n = [∂x^n/∂ks, ∂x^n/∂kd] (forward-mode sensitivities carried across intervals, section 6).
/// @param weights F weights (frame 0 is ignored; 0 rejects a frame), or empty for all ones.
double vertex_loss(const VertexTrack& track, const std::vector<double>& weights, double ks,
                   double kd, Eigen::Vector2d* gradient = nullptr,
                   Eigen::Matrix2d* gauss_newton = nullptr);

}  // namespace datadyn::flesh
