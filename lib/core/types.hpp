#pragma once
/// @file
/// Array types shared by every layer. Point sets are row-major `#N by 3` (or `#N by 2`) so that a
/// matrix has the memory layout of the cache's [N, D] datasets and row i is particle i.

#include <Eigen/Core>

namespace datadyn {

/// #N by 3 positions (metres), row i = point i.
using Points3 = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;
/// #N by 2 positions (metres), row i = point i.
using Points2 = Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>;
/// #T by 3 vertex indices (0-based), counter-clockwise seen from outside.
using Triangles = Eigen::Matrix<int, Eigen::Dynamic, 3, Eigen::RowMajor>;
/// #Q by 4 vertex indices (0-based), counter-clockwise seen from outside.
using Quads = Eigen::Matrix<int, Eigen::Dynamic, 4, Eigen::RowMajor>;
/// #K by 4 vertex indices (0-based) with positive orientation: (x1-x0)·((x2-x0)×(x3-x0)) > 0.
using Tets = Eigen::Matrix<int, Eigen::Dynamic, 4, Eigen::RowMajor>;

}  // namespace datadyn
