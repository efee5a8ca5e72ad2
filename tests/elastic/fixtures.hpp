#pragma once
// Meshes and helpers shared by the elastic tests.

#include <random>

#include <Eigen/Geometry>

#include "core/lattice.hpp"
#include "elastic/body.hpp"
#include "elastic/procedural_examples.hpp"
#include "elastic/scene.hpp"

namespace datadyn::elastic::test {

/// The paper's standard cuboid: 5 x 9 x 5 particles, 640 tets (225 particles: the paper's table 1).
inline TetMesh standard_cuboid() {
  BoxLatticeSpec b;
  b.nx = 5, b.ny = 9, b.nz = 5, b.tets_per_cell = 5;
  b.min_corner = {-0.25, 0.24, -0.25};
  b.max_corner = {0.25, 1.36, 0.25};
  return box_lattice(b);
}

/// A cylinder of 2,025 particles (more than one parallel chunk of 256).
inline TetMesh big_cylinder() {
  CylinderLatticeSpec c;
  c.radius = 0.3, c.height = 2.0, c.rings = 5, c.segments = 16, c.layers = 24;
  return cylinder_lattice(c);
}

inline Eigen::Matrix3d random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n;
  Eigen::Quaterniond q(n(rng), n(rng), n(rng), n(rng));
  return q.normalized().toRotationMatrix();
}

inline Points3 twisted(const TetMesh& mesh, double degrees = 180.0) {
  Deformation d;
  d.kind = DeformationKind::Twist;
  d.axis = 1;
  d.angle = degrees * 3.14159265358979323846 / 180.0;
  return deform(mesh.vertices, d);
}

inline Points3 s_shaped(const TetMesh& mesh, double degrees = 45.0) {
  Deformation d;
  d.kind = DeformationKind::SShape;
  d.axis = 1;
  d.direction = 0;
  d.angle = degrees * 3.14159265358979323846 / 180.0;
  return deform(mesh.vertices, d);
}

/// A body without gravity, planes, damping or drag unless the caller sets them.
inline BodySetup free_body(const TetMesh& mesh) {
  BodySetup s;
  s.mesh = mesh;
  s.masses = lumped_masses(mesh, 1000.0);
  s.params.damping = 0.0;
  s.params.drag = 0.0;
  return s;
}

inline Scene scene_without_gravity(Body body) {
  Scene scene;
  scene.params.gravity.setZero();
  scene.bodies.push_back(std::move(body));
  return scene;
}

/// Σ m v (kg m/s).
inline Eigen::Vector3d momentum(const Body& b) {
  return (b.mass.transpose() * b.v).transpose();
}

inline double kinetic_energy(const Body& b) {
  return 0.5 * (b.mass.array() * b.v.rowwise().squaredNorm().array()).sum();
}

/// Largest distance between the pose and its best rigid fit to the rest pose (metres): 0 iff x is
/// a rigid motion of the rest pose.
inline double shape_error(const Body& b) {
  const Eigen::Vector3d c0 = b.rest.colwise().mean().transpose();
  const Eigen::Vector3d c = b.x.colwise().mean().transpose();
  Eigen::Matrix3d apq = Eigen::Matrix3d::Zero();
  for (Eigen::Index i = 0; i < b.x.rows(); ++i)
    apq += (b.x.row(i).transpose() - c) * (b.rest.row(i).transpose() - c0).transpose();
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(apq, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1 : 1;
  const Eigen::Matrix3d R = svd.matrixU() * d * svd.matrixV().transpose();
  double err = 0;
  for (Eigen::Index i = 0; i < b.x.rows(); ++i)
    err = std::max(err, (R * (b.rest.row(i).transpose() - c0) + c - b.x.row(i).transpose()).norm());
  return err;
}

}  // namespace datadyn::elastic::test
