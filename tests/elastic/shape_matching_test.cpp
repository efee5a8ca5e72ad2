// Shape matching (Koyama et al. eqs. 1-2): the warm-started rotation against the SVD, regions,
// rigid invariance, one region reaching its goal in one step with α = 1, and robustness with
// coplanar and inverted poses.

#include <doctest/doctest.h>

#include <random>

#include <Eigen/SVD>

#include "core/mesh_topology.hpp"
#include "core/polar_decomposition.hpp"
#include "elastic/rotation_extraction.hpp"
#include "elastic/shape_matching.hpp"
#include "fixtures.hpp"

using namespace datadyn;
using namespace datadyn::elastic;
using namespace datadyn::elastic::test;

TEST_CASE("warm-started rotation matches the SVD polar rotation") {
  std::mt19937 rng(7);
  std::normal_distribution<double> n;
  int fallbacks = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // A near-identity stretch, a random rotation; the warm start is 0.3 rad away.
    Eigen::Matrix3d A = random_rotation(rng);
    Eigen::Matrix3d S = Eigen::Matrix3d::Identity();
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b) S(a, b) = S(b, a) = S(a, b) + 0.2 * n(rng);
    A = A * S;
    if (trial % 4 == 0) A.col(0) = -A.col(0);  // inverted: det A < 0
    const PolarDecomposition pd = polar_decomposition(A);
    Eigen::Quaterniond q(
        pd.R * Eigen::AngleAxisd(0.3, Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized()));
    Eigen::Quaterniond tight = q;
    const RotationExtraction r = rotation_warm_started(A, q);
    fallbacks += r.used_svd;
    INFO("trial " << trial << ", det A = " << A.determinant());
    // The default tolerance: 1e-10 rad (a few times that in the Frobenius norm of R).
    CHECK((q.toRotationMatrix() - pd.R).norm() < 1e-9);
    // A tight tolerance reaches rounding level.
    rotation_warm_started(A, tight, 1e-20);
    CHECK((tight.toRotationMatrix() - pd.R).norm() < 1e-13);
    CHECK(q.toRotationMatrix().determinant() == doctest::Approx(1.0).epsilon(1e-14));
  }
  CHECK(fallbacks < 20);  // the warm start does the work; the SVD is the exception
}

TEST_CASE("a rotation 180 degrees from the warm start falls back to the SVD") {
  const Eigen::Matrix3d A =
      Eigen::AngleAxisd(3.14159265358979323846, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  const RotationExtraction r = rotation_warm_started(A, q);
  CHECK(r.used_svd);
  CHECK((q.toRotationMatrix() - A).norm() < 1e-12);
}

TEST_CASE("regions are the 1-rings, symmetric, with rest offsets centred by m_i / n_i") {
  const TetMesh mesh = standard_cuboid();
  const Eigen::VectorXd m = lumped_masses(mesh, 1000.0);
  const RegionSet rs = one_ring_regions(mesh.vertices, mesh.tets, m);
  REQUIRE(rs.region_count() == 225);
  const auto rings = vertex_one_ring(mesh.tets, 225);
  for (int r = 0; r < 225; ++r) {
    const int size =
        rs.offsets[static_cast<std::size_t>(r) + 1] - rs.offsets[static_cast<std::size_t>(r)];
    CHECK(size == static_cast<int>(rings[static_cast<std::size_t>(r)].size()) + 1);
    Eigen::Vector3d sum = Eigen::Vector3d::Zero();
    for (int k = rs.offsets[static_cast<std::size_t>(r)];
         k < rs.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const int i = rs.members[static_cast<std::size_t>(k)];
      // Symmetry: i in region r <=> r in region i, so n_i = |region i|.
      const auto begin = rs.members.begin() + rs.offsets[static_cast<std::size_t>(i)];
      const auto end = rs.members.begin() + rs.offsets[static_cast<std::size_t>(i) + 1];
      CHECK(std::find(begin, end, r) != end);
      sum +=
          rs.member_mass[static_cast<std::size_t>(k)] * rs.rest_offset[static_cast<std::size_t>(k)];
    }
    CHECK(sum.norm() < 1e-14);  // Σ w q = 0 to rounding (kg m, masses ~1 kg)
  }
  CHECK_THROWS_AS(one_ring_regions(mesh.vertices, mesh.tets, Eigen::VectorXd::Zero(225)),
                  std::invalid_argument);
}

TEST_CASE("rigid invariance: A_r = Q, S_r = I and g = x for x = Q x0 + t, and nothing moves") {
  std::mt19937 rng(11);
  for (const TetMesh& mesh : {standard_cuboid(), big_cylinder()}) {
    BodySetup s = free_body(mesh);
    s.examples = {twisted(mesh)};  // with examples: the projection must give S* = I too
    s.rotation = random_rotation(rng);
    s.translation = Eigen::Vector3d(3.0, -2.0, 5.0);
    Scene scene = scene_without_gravity(make_body(s));
    Body& b = scene.bodies[0];
    const Points3 x0 = b.x;
    step_scene(scene, 1.0 / 300.0);
    // Strains are the identity and the goals are the particles (to rounding of metre-sized sums).
    for (int r = 0; r < b.particle_count(); ++r) {
      const Eigen::Matrix3d S = strain_matrix(&b.frames.strain[6 * static_cast<std::size_t>(r)]);
      CHECK((S - Eigen::Matrix3d::Identity()).norm() < 1e-12);
      CHECK(
          (b.frames.rotation[static_cast<std::size_t>(r)].toRotationMatrix() - s.rotation).norm() <
          1e-12);
    }
    CHECK((b.goal - x0).cwiseAbs().maxCoeff() < 1e-12);
    CHECK(std::abs(b.weights[1]) < 1e-12);  // no example weight at rest
    for (int k = 0; k < 200; ++k) step_scene(scene, 1.0 / 300.0);
    CHECK((b.x - x0).cwiseAbs().maxCoeff() < 1e-11);  // 201 steps of rounding-level drift
  }
}

TEST_CASE("with alpha = 1 a single region reaches its goal in one step") {
  // One tet: every particle's 1-ring is the whole tet, so all four regions are the same.
  TetMesh tet;
  tet.vertices.resize(4, 3);
  tet.vertices << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  tet.tets.resize(1, 4);
  tet.tets << 0, 1, 2, 3;
  BodySetup s = free_body(tet);
  s.params.alpha = 1.0;
  s.initial_pose = tet.vertices;
  s.initial_pose.row(3) << 0.3, -0.2, 1.6;  // stretched and sheared
  Scene scene = scene_without_gravity(make_body(s));
  step_scene(scene, 1.0 / 300.0);
  const Body& b = scene.bodies[0];
  CHECK((b.x - b.goal).cwiseAbs().maxCoeff() < 1e-14);
  CHECK(shape_error(b) < 1e-12);  // the goal is a rigid copy of the rest tet
}

TEST_CASE("coplanar and inverted poses recover without NaN") {
  const TetMesh mesh = standard_cuboid();
  for (int mode = 0; mode < 2; ++mode) {
    BodySetup s = free_body(mesh);
    s.params.damping = 0.05;
    s.initial_pose = mesh.vertices;
    if (mode == 0)
      s.initial_pose.col(1).setConstant(0.8);  // flattened: every region coplanar
    else
      s.initial_pose.col(0) *= -1.0;  // mirrored: every region inverted, det A < 0
    Scene scene = scene_without_gravity(make_body(s));
    Body& b = scene.bodies[0];
    for (int k = 0; k < 3000; ++k) step_scene(scene, 1.0 / 300.0);
    INFO("mode " << mode);
    CHECK(b.x.allFinite());
    CHECK(check_health(scene).ok);
    // Every tet has volume again, with the rest orientation.
    const Eigen::VectorXd v = tet_volumes(b.x, b.tets);
    CHECK(v.minCoeff() > 0.0);
    CHECK(shape_error(b) < 0.05 * 1.12);  // within 5 % of the bar's length of a rigid copy
  }
}
