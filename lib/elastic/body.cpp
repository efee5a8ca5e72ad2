#include "elastic/body.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/mesh_topology.hpp"

namespace datadyn::elastic {

namespace {

void check_unit(const char* name, double v) {
  if (!(v >= 0.0 && v <= 1.0))
    throw std::invalid_argument(std::string(name) + ": expected a number in [0, 1], got " +
                                std::to_string(v));
}

}  // namespace

Eigen::VectorXd lumped_masses(const TetMesh& mesh, double density) {
  const Eigen::VectorXd volumes = tet_volumes(mesh.vertices, mesh.tets);
  Eigen::VectorXd m = Eigen::VectorXd::Zero(mesh.vertices.rows());
  for (Eigen::Index k = 0; k < mesh.tets.rows(); ++k)
    for (int a = 0; a < 4; ++a) m(mesh.tets(k, a)) += 0.25 * density * std::abs(volumes(k));
  return m;
}

Body make_body(const BodySetup& s) {
  check_unit("alpha", s.params.alpha);
  check_unit("beta", s.params.beta);
  check_unit("damping", s.params.damping);
  check_unit("drag", s.params.drag);
  if (!(s.params.ridge >= 0.0)) throw std::invalid_argument("ridge: expected a number >= 0");
  const Eigen::Index n = s.mesh.vertices.rows();
  if (n == 0 || s.mesh.tets.rows() == 0) throw std::invalid_argument("the mesh has no tets");
  if (!s.mesh.vertices.allFinite())
    throw std::invalid_argument("a vertex coordinate is not finite");
  // Degenerate tets: volume below 1e-12 of the bounding box's volume (a tolerance far above
  // rounding and far below any tet a mesher makes).
  const Eigen::Vector3d extent =
      s.mesh.vertices.colwise().maxCoeff() - s.mesh.vertices.colwise().minCoeff();
  const double box = extent.prod();
  const Eigen::VectorXd volumes = tet_volumes(s.mesh.vertices, s.mesh.tets);
  for (Eigen::Index k = 0; k < volumes.size(); ++k) {
    if (volumes(k) > 1e-12 * box) continue;
    char volume[32];
    std::snprintf(volume, sizeof volume, "%.3g", volumes(k));
    throw std::invalid_argument(
        "tet " + std::to_string(k) + " (vertices " + std::to_string(s.mesh.tets(k, 0)) + ", " +
        std::to_string(s.mesh.tets(k, 1)) + ", " + std::to_string(s.mesh.tets(k, 2)) + ", " +
        std::to_string(s.mesh.tets(k, 3)) + ") is " + (volumes(k) < 0 ? "inverted" : "degenerate") +
        ": volume " + volume + " m^3, below 1e-12 of the mesh's bounding box");
  }
  for (std::size_t k = 0; k < s.examples.size(); ++k)
    if (s.examples[k].rows() != n)
      throw std::invalid_argument("example " + std::to_string(k + 1) + " has " +
                                  std::to_string(s.examples[k].rows()) +
                                  " vertices, the body has " + std::to_string(n) + " particles");
  if (!s.groups.empty() && static_cast<Eigen::Index>(s.groups.size()) != n)
    throw std::invalid_argument("groups: expected one id per particle (" + std::to_string(n) +
                                "), got " + std::to_string(s.groups.size()));
  for (int p : s.pinned)
    if (p < 0 || p >= n)
      throw std::invalid_argument("pinned particle " + std::to_string(p) + " out of range [0, " +
                                  std::to_string(n) + ")");
  if (s.initial_pose.rows() != 0 && s.initial_pose.rows() != n)
    throw std::invalid_argument("initial pose: expected " + std::to_string(n) + " vertices");

  Body b;
  b.name = s.name;
  b.params = s.params;
  b.rest = s.mesh.vertices;
  b.tets = s.mesh.tets;
  b.mass = s.masses;
  b.regions = one_ring_regions(b.rest, b.tets, b.mass);
  b.examples = build_example_space(b.regions, b.rest, s.examples, s.groups, s.params.ridge);
  b.render = s.render.particles.rows() > 0 ? s.render : boundary_embedding(s.mesh);

  // Initial state.
  const double total = b.mass.sum();
  const Eigen::Vector3d centre = (b.mass.transpose() * b.rest).transpose() / total;
  const Points3& pose = s.initial_pose.rows() ? s.initial_pose : b.rest;
  b.x.resize(n, 3);
  b.v.resize(n, 3);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Vector3d r = s.rotation * (pose.row(i).transpose() - centre);
    b.x.row(i) = (centre + s.translation + r).transpose();
    b.v.row(i) = (s.velocity + s.angular_velocity.cross(r)).transpose();
  }
  b.pinned = s.pinned;
  b.pin_position.resize(static_cast<Eigen::Index>(b.pinned.size()), 3);
  for (std::size_t k = 0; k < b.pinned.size(); ++k) {
    b.pin_position.row(static_cast<Eigen::Index>(k)) = b.x.row(b.pinned[k]);
    b.v.row(b.pinned[k]).setZero();
  }
  b.frames = rest_frames(b.regions);
  match_regions(b.regions, b.x, b.frames, /*exact=*/true);
  if (b.example_count() > 0) {
    project_strain(b.examples, b.frames.strain, b.params.beta, b.params.convex_weights, b.weights);
    blend_strains(b.examples, b.weights, b.projected);
  } else {
    b.weights.assign(static_cast<std::size_t>(b.group_count()), 1.0);
  }
  b.goal = b.x;
  if (b.example_count() > 0 && b.params.exact_examples) {
    // Residual of eq. 3 at each example pose with that example's weight alone.
    const auto nn = static_cast<std::size_t>(n);
    b.detail.assign(static_cast<std::size_t>(b.example_count()) * nn * 3, 0.0);
    const auto groups = static_cast<std::size_t>(b.group_count());
    const auto columns = static_cast<std::size_t>(b.example_count() + 1);
    for (int k = 0; k < b.example_count(); ++k) {
      RegionFrames frames = rest_frames(b.regions);
      match_regions(b.regions, s.examples[static_cast<std::size_t>(k)], frames, /*exact=*/true);
      std::vector<double> w(groups * columns, 0.0), projected;
      for (std::size_t g = 0; g < groups; ++g)
        w[g * columns + static_cast<std::size_t>(k) + 1] = 1.0;
      blend_strains(b.examples, w, projected);
      RegionGoals goals;
      example_goals(b.regions, frames, projected, goals);
      Points3 g(n, 3);
      particle_goals(b.regions, b.rest, goals, g);
      for (Eigen::Index i = 0; i < n; ++i) {
        const Eigen::Vector3d delta =
            (s.examples[static_cast<std::size_t>(k)].row(i) - g.row(i)).transpose();
        const Eigen::Vector3d e =
            frames.rotation[static_cast<std::size_t>(i)].toRotationMatrix().transpose() * delta;
        for (int c = 0; c < 3; ++c)
          b.detail[(static_cast<std::size_t>(k) * nn + static_cast<std::size_t>(i)) * 3 +
                   static_cast<std::size_t>(c)] = e(c);
      }
    }
  }
  return b;
}

}  // namespace datadyn::elastic
