#pragma once
/// @file
/// A regular 2D grid of samples shared by every simulation of a database (Chiba et al. 2011,
/// section 4: "the same grid size and spacing for every simulation, whatever its particle
/// count"). Sample (i, j) sits at origin + spacing * (i, j); x is the wave's travel direction,
/// y is up. Values are stored row by row: value(i, j) = data[j * nx + i].

#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace datadyn::wave {

struct Grid2Spec {
  std::size_t nx = 0, ny = 0;
  Eigen::Vector2d origin = Eigen::Vector2d::Zero();  ///< metres, position of sample (0, 0)
  double spacing = 0.01;                             ///< metres
  std::size_t size() const { return nx * ny; }
  Eigen::Vector2d position(std::size_t i, std::size_t j) const {
    return origin + spacing * Eigen::Vector2d(static_cast<double>(i), static_cast<double>(j));
  }
  bool operator==(const Grid2Spec& o) const {
    return nx == o.nx && ny == o.ny && origin == o.origin && spacing == o.spacing;
  }
};

/// Values on a Grid2Spec, row-major in y: at(i, j) = values[j * nx + i].
struct Grid2 {
  Grid2Spec spec;
  std::vector<float> values;
  float at(std::size_t i, std::size_t j) const { return values[j * spec.nx + i]; }
  float& at(std::size_t i, std::size_t j) { return values[j * spec.nx + i]; }
};

}  // namespace datadyn::wave
