#pragma once
/// @file
/// The distance kernels of the neighbour search and the MPS pair loops, each in a scalar version
/// and an AVX-512 one, picked by the `level` argument (callers pass core's simd_level(), capped by
/// DATADYN_SIMD; levels below AVX-512 run the scalar version). Both do the same
/// operations - subtractions, squares and their sum without fused multiply-add (this file is
/// compiled with -ffp-contract=off: AVX-512 has the fused forms), correctly rounded square root
/// and division - so every level gives the same bits.

#include <cstdint>

#include "core/simd.hpp"

namespace datadyn::fluid {

/// Writes to w, in increasing order, the points j in [j0, j1) of pts (x, y interleaved) closer
/// than sqrt(r2) to (qx, qy), other than `self`; returns how many. w must have room for j1 - j0.
int near_points(SimdLevel level, const double* pts, int j0, int j1, double qx, double qy, double r2,
                int self, int* w);

/// Squared distances r2[k] and inverse distances inv_r[k] from (xi, yi) to the points index[k],
/// k < len, of pos (x, y interleaved).
void pair_distances(SimdLevel level, const double* pos, const int* index, int len, double xi,
                    double yi, double* r2, double* inv_r);

/// The pair weights of one particle's number density (MpsSolver::number_density) over its
/// candidates k < len: index cand[k], squared and inverse distances r2[k], inv_r[k] (from
/// pair_distances at the same positions), solid[j] = 0 for dummy particles, 1 otherwise; rd2,
/// rl2 the squared radii. Appends the gradient pairs (r < r_e(density), not dummy) to grad_index,
/// grad_x, grad_y with r_ij w / |r_ij|², and the Laplacian pairs (r < r_e(Laplacian), not dummy)
/// to lap_index, lap_w with their weight. With vel (else null) also the velocity divergence's
/// sum, against (ui, vi). `terms` is scratch for 5 len numbers. Every sum is taken over the
/// candidates in order.
struct DensitySums {
  double n = 0, div = 0;             ///< Σ w, Σ (u_j − u_i) . r_ij w / |r_ij|²
  double cxx = 0, cxy = 0, cyy = 0;  ///< Σ r_ij ⊗ r_ij w / |r_ij|²
  int grad = 0, lap = 0;             ///< pairs appended
};
DensitySums density_pairs(SimdLevel level, const double* pos, const int* cand,
                          const std::int32_t* solid, int len, double xi, double yi,
                          const double* r2, const double* inv_r, double re_d, double re_l,
                          double rd2, double rl2, const double* vel, double ui, double vi,
                          int* grad_index, double* grad_x, double* grad_y, int* lap_index,
                          double* lap_w, double* terms);

}  // namespace datadyn::fluid
