// Procedural example poses and the embedded render mesh: closed-form invariants.

#include <doctest/doctest.h>

#include <cmath>

#include "core/mesh_topology.hpp"
#include "elastic/embedding.hpp"
#include "fixtures.hpp"

using namespace datadyn;
using namespace datadyn::elastic;
using namespace datadyn::elastic::test;

TEST_CASE("twist and shear keep the volume, scale multiplies it, twist turns the top layer") {
  const TetMesh mesh = standard_cuboid();
  const double v0 = tet_volumes(mesh.vertices, mesh.tets).sum();
  CHECK(v0 == doctest::Approx(0.5 * 0.5 * 1.12).epsilon(1e-12));
  const Points3 twist = twisted(mesh, 180.0);
  // Linear tets do not follow the helicoidal surface exactly: 1 % for 22.5° per layer.
  CHECK(tet_volumes(twist, mesh.tets).sum() == doctest::Approx(v0).epsilon(1e-2));
  // The top layer (y = 1.36) is turned by 180°: (x, z) -> (-x, -z).
  for (int i = 0; i < 225; ++i)
    if (mesh.vertices(i, 1) > 1.35) {
      CHECK(twist(i, 0) == doctest::Approx(-mesh.vertices(i, 0)).epsilon(1e-12));
      CHECK(twist(i, 2) == doctest::Approx(-mesh.vertices(i, 2)).epsilon(1e-12));
    }
  Deformation d;
  d.kind = DeformationKind::Shear;
  d.direction = 2;
  d.amount = 0.7;
  CHECK(tet_volumes(deform(mesh.vertices, d), mesh.tets).sum() ==
        doctest::Approx(v0).epsilon(1e-12));
  d.kind = DeformationKind::Scale;
  d.factors = {1.2, 0.5, 2.0};
  CHECK(tet_volumes(deform(mesh.vertices, d), mesh.tets).sum() ==
        doctest::Approx(1.2 * v0).epsilon(1e-12));
}

TEST_CASE("bend and S-shape keep the centre line's length and turn its ends") {
  const TetMesh mesh = standard_cuboid();
  for (auto kind : {DeformationKind::Bend, DeformationKind::SShape}) {
    Deformation d;
    d.kind = kind;
    d.axis = 1;
    d.direction = 0;
    d.angle = 1.0;
    const Points3 y = deform(mesh.vertices, d);
    // The centre column (x = z = 0) is the centre line: its polyline length stays 1.12 m
    // (chords of an arc: shorter by ~ (Δθ)²/24 relative, Δθ = 1/8 or 2/4 rad per segment).
    double length = 0;
    int prev = -1;
    for (int i = 0; i < 225; ++i)
      if (std::abs(mesh.vertices(i, 0)) < 1e-9 && std::abs(mesh.vertices(i, 2)) < 1e-9) {
        if (prev >= 0) length += (y.row(i) - y.row(prev)).norm();
        prev = i;
      }
    CHECK(length == doctest::Approx(1.12).epsilon(2e-3));
    // Bend: the top is tilted by the angle; S-shape: by 0 (the two arcs cancel).
    int top = -1, below = -1;
    for (int i = 0; i < 225; ++i)
      if (std::abs(mesh.vertices(i, 0)) < 1e-9 && std::abs(mesh.vertices(i, 2)) < 1e-9) {
        if (mesh.vertices(i, 1) > 1.35) top = i;
        if (std::abs(mesh.vertices(i, 1) - 1.22) < 1e-9) below = i;
      }
    const Eigen::RowVector3d t = y.row(top) - y.row(below);
    const double tilt = std::atan2(t(0), t(1));
    // The chord of the last segment points along the mean heading over it: bend 1 − 1/16;
    // S-shape (κ = 2 angle / L, turning back to 0 at the end) 1/8.
    const double expected = kind == DeformationKind::Bend ? 1.0 - 1.0 / 16 : 1.0 / 8;
    INFO("kind " << static_cast<int>(kind));
    CHECK(tilt == doctest::Approx(expected).epsilon(1e-9));  // chord direction, closed form
  }
}

TEST_CASE("an embedded mesh moves with the tets and reproduces affine motion exactly") {
  const TetMesh mesh = standard_cuboid();
  SurfaceMesh surface;
  surface.vertices.resize(5, 3);
  surface.vertices << 0.1, 0.5, 0.1, -0.2, 1.0, 0.05, 0.0, 0.8, -0.24, 0.25, 1.36, 0.25, 0.3, 0.7,
      0.0;  // the last one is outside the box: extrapolated
  surface.triangles.resize(1, 3);
  surface.triangles << 0, 1, 2;
  const Embedding e = embed_surface(mesh, surface);
  // The clamped point lies in the mesh, so it is at least as far as the mesh (0.05 m).
  CHECK(e.max_outside_distance >= 0.05 - 1e-12);
  CHECK(e.max_outside_distance < 0.3);
  for (Eigen::Index v = 0; v < 5; ++v)
    CHECK(e.weights.row(v).sum() == doctest::Approx(1.0).epsilon(1e-14));
  Eigen::Matrix3d F;
  F << 1.1, 0.2, 0.0, -0.1, 0.9, 0.3, 0.0, 0.1, 1.2;
  const Eigen::RowVector3d t(0.3, -1.0, 2.0);
  Points3 x = (mesh.vertices * F.transpose()).rowwise() + t;
  Points3 out;
  embedded_positions(e, x, out);
  for (Eigen::Index v = 0; v < 5; ++v)
    CHECK((out.row(v) - (surface.vertices.row(v) * F.transpose() + t)).norm() < 1e-12);
  // The boundary embedding: 9x5x5 lattice has 225 - 3*7*3 = 162 surface particles.
  const Embedding b = boundary_embedding(mesh);
  CHECK(b.particles.rows() == 162);
  CHECK(b.triangles.rows() == 2 * (4 * 8 * 2 + 4 * 8 * 2 + 4 * 4 * 2));
}
