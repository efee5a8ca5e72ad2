#pragma once
/// @file
/// The 3D water surface from slices (Chiba et al. 2011, section 5 and fig. 6): slice k's 2D
/// signed distance field stands at z_k = z0 + k * spacing across the wave front, and the 3D field
/// between slices is interpolated along z. Outside the slices the nearest slice is extended.

#include <cstddef>
#include <vector>

#include "wave/grid2.hpp"

namespace datadyn::wave {

enum class BlendMethod {
  Linear,  ///< the paper's: (1 − u) φ_k + u φ_{k+1}
  Cubic,   ///< Catmull-Rom through φ_{k−1..k+2}, C1 across slices (ends repeat the end slice)
};

struct SliceLayout {
  double first_z = 0.0;   ///< metres, z of slice 0
  double spacing = 0.1;   ///< metres between slices, > 0
  double origin_z = 0.0;  ///< metres, z of output layer 0
  double voxel = 0.01;    ///< metres between output layers, > 0
  std::size_t nz = 1;     ///< output layers
};

/// Fills `out` ([nz, ny, nx], x fastest) from the slices' fields, which share one Grid2Spec.
/// @pre every slice has the same spec; out.size() == nz * ny * nx.
void blend_slices(const std::vector<const Grid2*>& slices, const SliceLayout& layout,
                  BlendMethod method, std::vector<float>& out);

}  // namespace datadyn::wave
