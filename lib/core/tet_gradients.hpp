#pragma once
/// @file
/// Gradients of the linear (barycentric) shape functions of tetrahedra: the building block of
/// deformation gradients F = Ds Dm⁻¹, linear-FEM Laplacians and stiffness matrices.

#include <vector>

#include <Eigen/Core>

#include "core/tet_mesh.hpp"

namespace datadyn {

/// Per tet of a rest mesh: the rest volume and, row a, the gradient ∇φ_a of the shape function of
/// its vertex a (a = 0..3), so that for a field f linear on the tet, ∇f = Σ_a f_a ∇φ_a and
/// F = Σ_a x_a ∇φ_aᵀ. Rows 1..3 are the rows of Dm⁻¹ (Dm = [x1 − x0, x2 − x0, x3 − x0]); row 0 is
/// minus their sum.
struct TetGradients {
  std::vector<Eigen::Matrix<double, 4, 3>> gradient;  ///< #K matrices, 1/m
  Eigen::VectorXd volume;                             ///< #K signed volumes, m³
};

/// @param mesh #V by 3 rest positions (metres), #K by 4 tets.
/// @return gradients and volumes; a degenerate tet (zero volume) gets zero gradients.
TetGradients tet_gradients(const TetMesh& mesh);

}  // namespace datadyn
