// Invariants of the Liu et al. 2013 mass-spring integrator: exact pins, no particle inside the
// sphere, energy lost under damping, mirror symmetry of a symmetric setup without wind.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "cloth/cloth_params.hpp"
#include "cloth/mass_spring_solver.hpp"

using namespace datadyn::cloth;

namespace {

/// n x ny particles (ny 0: n x n), a metre across.
ClothParams small_scene(const std::string& scene, int n = 17, int ny = 0) {
  ClothParams p;
  p.nx = n;
  p.ny = ny > 0 ? ny : n;
  p.spacing = 1.0 / (n - 1);
  REQUIRE(apply_scene_preset(scene, p));
  return p;
}

}  // namespace

TEST_CASE("the grid has the expected springs, triangles and pins") {
  ClothParams p;
  p.nx = 5;
  p.ny = 4;
  // structural 4*4 + 5*3, shear 2*4*3, bending 3*4 + 5*2
  CHECK(grid_springs(p).size() == 31 + 24 + 22);
  CHECK(grid_triangles(p).rows() == 2 * 4 * 3);
  CHECK(pinned_particles(p).size() == 5);
  for (const Spring& s : grid_springs(p)) CHECK(s.rest > 0.0);
}

TEST_CASE("grid texture coordinates: the unit square, row 0 on top, unmirrored from the front") {
  ClothParams p;
  p.nx = 5;  // wider than tall: row 0 is still the texture's top edge
  p.ny = 3;
  const auto uv = grid_uv(p);
  REQUIRE(uv.rows() == 15);
  CHECK(uv(0, 0) == 0.0f);
  CHECK(uv(0, 1) == 1.0f);
  CHECK(uv(4, 0) == 1.0f);
  CHECK(uv(14, 1) == 0.0f);
  CHECK(uv(7, 0) == 0.5f);  // row 1, column 2
  CHECK(uv(7, 1) == 0.5f);
  // Every face counter-clockwise in the texture as in space seen from its front: a texture is not
  // mirrored on the side the faces show.
  const datadyn::Triangles tris = grid_triangles(p);
  for (Eigen::Index t = 0; t < tris.rows(); ++t) {
    const Eigen::Vector2f a = uv.row(tris(t, 0)), b = uv.row(tris(t, 1)), c = uv.row(tris(t, 2));
    const Eigen::Vector2f ab = b - a, ac = c - a;
    CHECK(ab.x() * ac.y() - ab.y() * ac.x() > 0.0f);
  }
}

TEST_CASE("pinned particles stay exactly where they were pinned") {
  for (const std::string scene : {"curtain", "flag"}) {
    ClothParams p = small_scene(scene);
    MassSpringSolver sim(p);
    const auto rest = sim.positions();
    for (int s = 0; s < 60; ++s) REQUIRE(sim.step().ok);
    INFO(scene);
    REQUIRE(!sim.pins().empty());
    for (int i : sim.pins()) CHECK((sim.positions().row(i) - rest.row(i)).norm() == 0.0);
    // and the rest moved: the scene is not static
    CHECK((sim.positions() - rest).rowwise().norm().maxCoeff() > 0.05);
  }
}

TEST_CASE("a cloth far from the origin is not taken for a diverged one") {
  // A bound on |x| of 1 km from the origin stopped a 3 km wide strip (nx = 100001) at its first
  // frame with "diverged"; the bound is now 1 km beyond the cloth's start.
  ClothParams p = small_scene("curtain", 5);
  p.origin = {2500.0, 1.5, 0.0};
  MassSpringSolver sim(p);
  const auto start = sim.positions();
  for (int s = 0; s < 10; ++s) REQUIRE(sim.step().ok);
  // A real blow-up is still caught: the cloth thrown 100 km in one step (the pins hold, the
  // springs pull the rest back by far less than that).
  datadyn::Points3 v = datadyn::Points3::Zero(start.rows(), 3);
  v.col(0).setConstant(1e5 / p.time_step);
  sim.set_state(sim.positions(), v);
  const StepResult r = sim.step();
  CHECK_FALSE(r.ok);
  REQUIRE(r.particle >= 0);
  CHECK(std::find(sim.pins().begin(), sim.pins().end(), r.particle) == sim.pins().end());
}

TEST_CASE("no particle ends a step inside the sphere or below the ground") {
  ClothParams p = small_scene("collision");
  MassSpringSolver sim(p);
  double min_gap = 1e9;
  for (int s = 0; s < 90; ++s) {
    REQUIRE(sim.step().ok);
    for (Eigen::Index i = 0; i < sim.positions().rows(); ++i) {
      const double dist = (sim.positions().row(i).transpose() - p.sphere.center).norm();
      min_gap = std::min(min_gap, dist - p.sphere.radius);
      CHECK(sim.positions()(i, 1) >= p.ground.height);
    }
  }
  // Projected to radius + margin: the gap never drops below the margin (up to rounding).
  CHECK(min_gap >= p.collision_margin - 1e-12);
  // and the cloth did reach the sphere (the test would be empty otherwise)
  CHECK(min_gap < 2 * p.collision_margin);
}

TEST_CASE("the collision scene's cloth does not pass through the sphere") {
  // One step of 1/60 s pulls the sheet lying over the sphere towards its flat rest shape,
  // straight through it, and the projection afterwards pushed particles taken past the centre
  // out on the far side: 33 m/s at frame 26, springs at 0.56 m against a rest diagonal of
  // 0.044 m, and the energy up to 28 times its start. The scene takes three steps a frame.
  ClothParams p = small_scene("collision", 33);
  REQUIRE(p.substeps == 3);
  MassSpringSolver sim(p);
  const datadyn::Triangles tris = grid_triangles(p);
  const double diagonal = std::sqrt(2.0) * p.spacing;
  const double start = sim.energy();
  double most = start, longest = 0;
  int far_side = 0;
  for (int f = 0; f < 180; ++f) {
    const datadyn::Points3 before = sim.positions();
    REQUIRE(sim.advance_frame().ok);
    most = std::max(most, sim.energy());
    for (Eigen::Index t = 0; t < tris.rows(); ++t)
      for (int k = 0; k < 3; ++k)
        longest = std::max(
            longest,
            (sim.positions().row(tris(t, k)) - sim.positions().row(tris(t, (k + 1) % 3))).norm());
    // A particle on the sphere at both ends of a frame stays on its side of it.
    const double near = p.sphere.radius + 2 * p.collision_margin;
    for (Eigen::Index i = 0; i < before.rows(); ++i) {
      const Eigen::Vector3d a = before.row(i).transpose() - p.sphere.center;
      const Eigen::Vector3d b = sim.positions().row(i).transpose() - p.sphere.center;
      if (a.norm() < near && b.norm() < near && a.dot(b) < 0) ++far_side;
    }
  }
  MESSAGE("most energy " << most << " J (start " << start << " J), longest edge " << longest
                         << " m (rest diagonal " << diagonal << ")");
  CHECK(far_side == 0);
  // The cloth starts at rest, is damped and meets rigid colliders: its energy does not grow
  // (with two steps a frame it rose 12 % where the sheet lands on the sphere; 1 % leaves room for
  // rounding and the projections only).
  CHECK(most <= 1.01 * start);
  // Springs stretched to at most 2 rest diagonals where the sheet bends round the sphere.
  CHECK(longest < 2 * diagonal);
}

TEST_CASE("a free cloth loses energy under damping") {
  ClothParams p = small_scene("curtain");
  p.pins = PinMode::None;
  p.gravity.setZero();
  p.damping = 0.02;
  MassSpringSolver sim(p);
  // Start stretched by 20 % and moving: elastic and kinetic energy to lose.
  datadyn::Points3 x = sim.positions() * 1.2;
  datadyn::Points3 v = datadyn::Points3::Zero(x.rows(), 3);
  for (Eigen::Index i = 0; i < x.rows(); ++i) v(i, 2) = std::sin(3.0 * x(i, 0));
  sim.set_state(x, v);
  double e = sim.energy();
  const double e0 = e;
  for (int s = 0; s < 100; ++s) {
    REQUIRE(sim.step().ok);
    const double next = sim.energy();
    // Implicit Euler with damping dissipates; allow 1e-9 relative for the finite iterations.
    CHECK(next <= e * (1 + 1e-9));
    e = next;
  }
  CHECK(e < 0.2 * e0);
}

TEST_CASE("a symmetric curtain without wind stays mirror symmetric") {
  ClothParams p = small_scene("curtain");
  MassSpringSolver sim(p);
  for (int s = 0; s < 60; ++s) REQUIRE(sim.step().ok);
  // Mirror plane x = 0 (the preset centres the grid): column c <-> nx-1-c, x -> -x.
  double worst = 0.0;
  const auto& x = sim.positions();
  for (int r = 0; r < p.ny; ++r)
    for (int c = 0; c < p.nx; ++c) {
      const auto a = x.row(grid_index(p, r, c));
      const auto b = x.row(grid_index(p, r, p.nx - 1 - c));
      worst =
          std::max({worst, std::abs(a(0) + b(0)), std::abs(a(1) - b(1)), std::abs(a(2) - b(2))});
    }
  // The sparse solve sums in a pivot order that is not mirror symmetric: rounding only (1e-9 m).
  CHECK(worst < 1e-9);
}

namespace {

/// |gradient| of one step's objective 1/2 |x - y|_M^2 + h^2 E(x) over the free particles at the
/// solver's new positions, relative to |M (x - y)| (the inertial part it balances).
double relative_step_gradient(const ClothParams& p, const datadyn::Points3& x0,
                              const datadyn::Points3& v0, int iterations, Integrator solver) {
  ClothParams q = p;
  q.iterations = iterations;
  q.solver = solver;
  q.damping = 0.0;  // damping changes velocities after the solve only; kept out for clarity
  MassSpringSolver sim(q);
  sim.set_state(x0, v0);
  const double h = q.time_step;
  const datadyn::Points3 y = x0 + h * v0 + (h * h / q.mass) * sim.external_forces();
  REQUIRE(sim.step().ok);
  const datadyn::Points3& x = sim.positions();
  datadyn::Points3 inertial = q.mass * (x - y);
  datadyn::Points3 g = inertial;
  for (const Spring& s : sim.springs()) {
    const Eigen::RowVector3d e = x.row(s.i) - x.row(s.j);
    const double len = e.norm();
    const Eigen::RowVector3d f = (h * h * s.k * (len - s.rest) / len) * e;
    g.row(s.i) += f;
    g.row(s.j) -= f;
  }
  for (int i : sim.pins()) {
    g.row(i).setZero();
    inertial.row(i).setZero();
  }
  return g.norm() / inertial.norm();
}

}  // namespace

TEST_CASE("projective dynamics and ADMM both converge to the implicit Euler step") {
  // A swinging curtain after 20 steps; one step from there solved by either local step. Both
  // converge linearly (measured, either solver: 0.60 after 10 iterations, 1.8e-4 after 1000,
  // 2.1e-7 after 3000, 3e-11 after 10000, relative to the inertial force the gradient balances),
  // so 4000 iterations must be below 1e-6. An ADMM without its dual update would stop at
  // another fixed point, and fail.
  ClothParams p = small_scene("curtain");
  MassSpringSolver warmup(p);
  for (int s = 0; s < 20; ++s) REQUIRE(warmup.step().ok);
  const auto x0 = warmup.positions(), v0 = warmup.velocities();
  for (Integrator solver : {Integrator::Projective, Integrator::Admm}) {
    const double converged = relative_step_gradient(p, x0, v0, 4000, solver);
    const double ten = relative_step_gradient(p, x0, v0, 10, solver);
    const std::string name = solver == Integrator::Admm ? "ADMM" : "projective";
    MESSAGE(name << ": relative gradient " << ten << " after 10 iterations, " << converged
                 << " after 4000");
    INFO(name);
    CHECK(converged < 1e-6);
    CHECK(ten > converged);
  }
}

namespace {

struct FreeEdge {
  double least_x = 1e9;  ///< m from the pole, over frames 20-100
  double direction = 0;  ///< mean z over mean x of the free edge, frames 20-100
};

/// The flag's free edge (its last column, averaged over rows) from frame 20, once the flag has
/// blown out, to frame 100.
FreeEdge free_edge(const ClothParams& p) {
  MassSpringSolver sim(p);
  FreeEdge e;
  double sx = 0.0, sz = 0.0;
  for (int f = 2; f <= 100; ++f) {
    REQUIRE(sim.advance_frame().ok);
    if (f < 20) continue;
    double x = 0.0, z = 0.0;
    for (int r = 0; r < p.ny; ++r) {
      x += sim.positions()(grid_index(p, r, p.nx - 1), 0) / p.ny;
      z += sim.positions()(grid_index(p, r, p.nx - 1), 2) / p.ny;
    }
    e.least_x = std::min(e.least_x, x);
    sx += x;
    sz += z;
  }
  e.direction = sz / sx;
  return e;
}

}  // namespace

TEST_CASE("the flag streams out downwind of its pole") {
  // A 1 x 0.75 m flag on its pole at x = 0, in wind (6, 0, 1.5) m/s gusting by half. Flag
  // fabric held out by the wind keeps its free edge far from the pole and points along the wind,
  // z/x = 1.5/6 = 0.25. Measured at 17 x 13 (13 x 10 and 25 x 19 alike): the edge at least
  // 0.73 m out, direction 0.27. The bounds, 0.6 m and 0.25 +- 0.1, leave room for the gusts'
  // flapping. What the preset replaced fails: a sheet of 23 kg/m^2 (the earlier preset's cloth)
  // swings round its pole to the upwind side (edge at -0.47 m at one step a frame, as it was),
  // and the flag at one step a frame crumples against the pole (edge 0.09 m out, direction
  // 0.86): the wind force is explicit, which is why the preset takes 8 steps a frame.
  const ClothParams p = small_scene("flag", 17, 13);
  REQUIRE(p.substeps == 8);
  const FreeEdge flag = free_edge(p);
  CHECK(flag.least_x > 0.6);
  CHECK(std::abs(flag.direction - 0.25) < 0.1);
  ClothParams one_step = p;
  one_step.substeps = 1;
  CHECK(free_edge(one_step).least_x < 0.6);
  ClothParams heavy = p;
  heavy.mass = 23.0 * p.spacing * p.spacing;
  heavy.substeps = 1;
  heavy.wind.drag_tangent = 0.0;
  CHECK(free_edge(heavy).least_x < 0.0);
}
