#pragma once
/// @file
/// A 2D signed distance field from a density grid: the surface is the contour V = iso (marching
/// squares, linear crossings on cell edges); the distance of each sample to the nearest contour
/// segment, negative inside the water (V > iso; OpenVDB's sign convention, the opposite of the
/// paper's fig. 6), clamped to ± band outside a narrow band.

#include "wave/grid2.hpp"

namespace datadyn::wave {

/// @param density V on a grid (any units); @param iso the contour level, same units as V.
/// @param band_voxels half-width of the narrow band in samples; values beyond are ± band.
/// @return signed distance in metres on the same grid.
Grid2 signed_distance(const Grid2& density, double iso, double band_voxels = 3.0);

/// Height of the water surface at x (metres): the largest y where V ≥ iso in the grid column at
/// x (interpolated linearly between the two nearest columns, and between samples at the
/// crossing), or the grid's lowest y when the column holds no water.
double water_height(const Grid2& density, double x, double iso);

}  // namespace datadyn::wave
