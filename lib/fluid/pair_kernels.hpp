#pragma once
/// @file
/// The distance kernels of the neighbour search and the MPS pair loops, each in a scalar version
/// and an AVX-512 one, picked by the `level` argument (callers pass core's simd_level(), capped by
/// DATADYN_SIMD; levels below AVX-512 run the scalar version). Both do the same
/// operations - subtractions, squares and their sum without fused multiply-add (this file is
/// compiled with -ffp-contract=off: AVX-512 has the fused forms), correctly rounded square root
/// and division, sums in the lanes of sum_lanes - so every level gives the same bits.

#include <cstdint>

#include "core/simd.hpp"

namespace datadyn::fluid {

/// Writes to w, in increasing order, the points j in [j0, j1) of pts (x, y interleaved) closer
/// than sqrt(r2) to (qx, qy), other than `self`; returns how many. w must have room for j1 - j0.
int near_points(SimdLevel level, const double* pts, int j0, int j1, double qx, double qy, double r2,
                int self, int* w);

/// Sums over a particle's candidates run in eight lanes: candidate k goes to lane k mod 8, each
/// lane adds its terms in candidate order, and the lanes are combined as
/// ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)). One fixed order for every level, and one
/// that an eight-wide register follows without a chain of dependent adds.
double sum_lanes(const double lane[8]);

/// The viscosity term's Laplacian sums of MpsSolver::explicit_step: Σ (u_j − u_i) w(r_ij) over the
/// candidates index[k], k < len, with w(r) = r_e (1 / r) − 1 for r² < rl2 and 0 beyond (a
/// candidate beyond still adds 0 times its velocity difference, so a NaN velocity shows).
/// Positions and velocities x, y interleaved.
struct VelocityLaplacian {
  double x = 0, y = 0;
};
VelocityLaplacian viscosity_sums(SimdLevel level, const double* pos, const double* vel,
                                 const int* index, int len, double xi, double yi, double ui,
                                 double vi, double re_l, double rl2);

/// The candidates k < len (in order) of index[] closer than sqrt(dc2) to (xi, yi), written to
/// `close` as k; returns how many. `close` must have room for len.
int close_candidates(SimdLevel level, const double* pos, const int* index, int len, double xi,
                     double yi, double dc2, int* close);

/// The pair weights of one particle's number density (MpsSolver::number_density) over its
/// candidates k < len: index cand[k] of pos, solid[j] = 0 for dummy particles, 1 otherwise; rd2,
/// rl2 the squared radii; distances as 1 / sqrt(r²), correctly rounded. Appends the gradient pairs
/// (r < r_e(density), not dummy) to grad_index, grad_x, grad_y with r_ij w / |r_ij|², and the
/// Laplacian pairs (r < r_e(Laplacian), not dummy) to lap_index, lap_w with their weight. With vel
/// (else null) also the velocity divergence's sum, against (ui, vi). Every sum in the eight lanes
/// of sum_lanes.
struct DensitySums {
  double n = 0, div = 0;             ///< Σ w, Σ (u_j − u_i) . r_ij w / |r_ij|²
  double cxx = 0, cxy = 0, cyy = 0;  ///< Σ r_ij ⊗ r_ij w / |r_ij|²
  int grad = 0, lap = 0;             ///< pairs appended
};
DensitySums density_pairs(SimdLevel level, const double* pos, const int* cand,
                          const std::int32_t* solid, int len, double xi, double yi, double re_d,
                          double re_l, double rd2, double rl2, const double* vel, double ui,
                          double vi, int* grad_index, double* grad_x, double* grad_y,
                          int* lap_index, double* lap_w);

}  // namespace datadyn::fluid
