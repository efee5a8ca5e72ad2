#pragma once
/// @file
/// The distance kernels of the neighbour search and the MPS pair loops, each in a scalar version
/// and an AVX-512 one picked at run time (core/simd.hpp, capped by DATADYN_SIMD). Both do the same
/// operations - subtractions, squares and their sum without fused multiply-add (this file is
/// compiled with -ffp-contract=off: AVX-512 has the fused forms), correctly rounded square root
/// and division - so every level gives the same bits.

namespace datadyn::fluid {

/// Writes to w, in increasing order, the points j in [j0, j1) of pts (x, y interleaved) closer
/// than sqrt(r2) to (qx, qy), other than `self`; returns how many. w must have room for j1 - j0.
int near_points(const double* pts, int j0, int j1, double qx, double qy, double r2, int self,
                int* w);

/// Squared distances r2[k] and inverse distances inv_r[k] from (xi, yi) to the points index[k],
/// k < len, of pos (x, y interleaved).
void pair_distances(const double* pos, const int* index, int len, double xi, double yi, double* r2,
                    double* inv_r);

}  // namespace datadyn::fluid
