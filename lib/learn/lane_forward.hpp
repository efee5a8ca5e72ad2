#pragma once
/// @file
/// The forward pass of a float Mlp over many samples, with the input standardisation before it and
/// the output's after it (what predict() computes), written so that its result does not depend on
/// the instruction set: vector lanes hold different samples, each output is summed over its inputs
/// in one fixed order as separate multiplies and adds (the file is compiled without contraction
/// into fused multiply-adds). A CPU with AVX-512 or AVX2 then runs 16 or 8 samples per instruction
/// and gives the same bits as the 4-wide baseline build - which a general matrix product cannot
/// promise, as its blocking and summation order follow the vector width.

#include <Eigen/Core>

#include "core/simd.hpp"
#include "learn/mlp.hpp"
#include "learn/standardizer.hpp"

namespace datadyn::learn {

/// y = out.invert(net.forward(in.apply(x))) column by column, in one pass per block of samples,
/// with the vectors of `level` (core/simd.hpp; the same bits at every level).
/// @param x #in by n; returns #out by n
/// @pre simd_level_supported(level)
Eigen::MatrixXf lane_forward(const Mlp<float>& net, const Standardizer& in, const Standardizer& out,
                             const Eigen::Ref<const Eigen::MatrixXf>& x, SimdLevel level);

}  // namespace datadyn::learn
