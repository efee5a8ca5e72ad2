#include "fluid/mps_kernel.hpp"

#include "core/check.hpp"

namespace datadyn::fluid {

LatticeConstants lattice_constants(double re, double l0, int dimension) {
  DATADYN_CHECK(re > 0 && l0 > 0);
  DATADYN_CHECK(dimension == 2 || dimension == 3);
  const int m = static_cast<int>(std::ceil(re / l0)) + 1;
  const int mz = dimension == 3 ? m : 0;
  LatticeConstants c;
  double sum_w = 0, sum_r2w = 0;
  for (int k = -mz; k <= mz; ++k) {
    for (int j = -m; j <= m; ++j) {
      for (int i = -m; i <= m; ++i) {
        if (i == 0 && j == 0 && k == 0) continue;
        const double r = l0 * std::sqrt(static_cast<double>(i * i + j * j + k * k));
        if (r >= re) continue;
        const double w = mps_weight(r, re);
        sum_w += w;
        sum_r2w += r * r * w;
        ++c.neighbours;
      }
    }
  }
  c.n0 = sum_w;
  c.lambda = sum_w > 0 ? sum_r2w / sum_w : 0.0;
  return c;
}

}  // namespace datadyn::fluid
