// DSDS and upscaling: a cloth at rest survives down-sampling, down-scaling and every upscaling
// exactly; patches assemble back to the frame they came from.

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "cloth/cloth_params.hpp"
#include "cloth/mass_spring_solver.hpp"
#include "cloth/miniature.hpp"
#include "cloth/training_pairs.hpp"
#include "cloth/upscale.hpp"

using namespace datadyn::cloth;

TEST_CASE("DSDS of a cloth at rest, scaled back up, equals the target at rest") {
  for (int f : {2, 3, 4}) {
    ClothParams target;
    target.nx = 4 * 6 + 1;
    target.ny = 12 * 2 + 1;
    target.spacing = 0.02;
    REQUIRE(apply_scene_preset("curtain", target));  // a tilted plane, not axis aligned
    const auto rest = rest_positions(target);
    const ClothParams mini = miniature_params(target, f);
    const auto mini_rest = downsample_downscale(rest, target.nx, target.ny, f);
    INFO("factor " << f);
    // The miniature grid built from its own parameters is the DSDS of the target's.
    CHECK((rest_positions(mini) - mini_rest).cwiseAbs().maxCoeff() < 1e-12);
    // Rest lengths are kept (sec. 3.1): same spacing, springs as long as the target's.
    CHECK(grid_springs(mini).front().rest == doctest::Approx(target.spacing));
    const MiniatureGrid g{mini.nx, mini.ny, f};
    for (auto m : {Interpolation::Bilinear, Interpolation::Biquadratic, Interpolation::Bicubic}) {
      const auto up = interpolate_upscale(mini_rest, g, m);
      // Every scheme reproduces affine maps; 1e-12 m is rounding at metre scale.
      CHECK((up - rest).cwiseAbs().maxCoeff() < 1e-12);
    }
  }
}

TEST_CASE("the miniature's external forces are 1/f of the target's, per particle") {
  // Eq. 8 for gravity, and the same for wind (miniature.hpp): the target moving at u and its
  // miniature, the target's DSDS, moving at u / f. Closed form per particle: gravity m g (1/f on
  // the miniature); wind c A_i (w - u)_n |(w - u)_n| along the normal and c_t A_i |(w - u)_t|
  // (w - u)_t along the sheet, A_i a third of the particle's triangles' area - which the
  // miniature keeps, its spacing being the target's.
  ClothParams target;
  target.nx = target.ny = 9;
  REQUIRE(apply_scene_preset("flag", target));
  target.pins = PinMode::None;  // a pin's velocity is 0, not u
  target.wind.gust = 0.0;
  target.wind.velocity = {4.0, 1.0, 3.0};
  target.wind.drag = 0.6;
  target.wind.drag_tangent = 0.05;
  const int f = 2;
  const ClothParams mini = miniature_params(target, f);
  REQUIRE(mini.nx == 5);
  const Eigen::RowVector3d u(0.5, -0.2, 1.0);
  const auto uniform = [](Eigen::Index rows, const Eigen::RowVector3d& v) {
    datadyn::Points3 out(rows, 3);
    out.rowwise() = v;
    return out;
  };
  MassSpringSolver big(target), small(mini);
  const datadyn::Points3 x = rest_positions(target);
  big.set_state(x, uniform(x.rows(), u));
  const datadyn::Points3 xm = downsample_downscale(x, target.nx, target.ny, f);
  small.set_state(xm, uniform(xm.rows(), u / f));
  const datadyn::Points3 fb = big.external_forces(), fm = small.external_forces();
  // The sheet lies in the x-y plane: its normal is +-z, the normal part of w - u is 2 m/s and
  // the tangential part (3.5, 1.2, 0) m/s.
  const double wn = target.wind.velocity.z() - u.z(), s2 = target.spacing * target.spacing;
  const Eigen::RowVector3d gravity = (target.mass * target.gravity).transpose();
  const Eigen::RowVector3d wt(target.wind.velocity.x() - u.x(), target.wind.velocity.y() - u.y(),
                              0.0);
  const Eigen::RowVector3d wind =
      Eigen::RowVector3d(0.0, 0.0, target.wind.drag * s2 * wn * std::abs(wn)) +
      target.wind.drag_tangent * s2 * wt.norm() * wt;
  // Interior particles: six triangles of s^2 / 2 each, a third of each.
  const int ti = grid_index(target, 4, 4), mi = grid_index(mini, 2, 2);
  CHECK((fb.row(ti) - (gravity + wind)).norm() <= 1e-12 * (gravity + wind).norm());
  CHECK((fm.row(mi) - (gravity + wind) / f).norm() <= 1e-12 * (gravity + wind).norm());
  // Every miniature particle against the target particle it stands for, boundary ones included
  // (same triangles around them): exactly 1/f, up to rounding.
  for (int r = 0; r < mini.ny; ++r)
    for (int c = 0; c < mini.nx; ++c) {
      const Eigen::RowVector3d want = fb.row(grid_index(target, f * r, f * c)) / f;
      CHECK((fm.row(grid_index(mini, r, c)) - want).norm() <= 1e-12 * want.norm());
    }
  // The wind's total is c A (w - u)_n |(w - u)_n| n over the whole sheet, A its area.
  const double area = s2 * (target.nx - 1) * (target.ny - 1);
  CHECK(fb.col(2).sum() ==
        doctest::Approx(target.wind.drag * area * wn * std::abs(wn)).epsilon(1e-12));
}

TEST_CASE("patch outputs assemble back to the target frame, for every option") {
  ClothParams target;
  target.nx = 9;
  target.ny = 7;
  REQUIRE(apply_scene_preset("collision", target));
  datadyn::Points3 x = rest_positions(target);
  for (Eigen::Index i = 0; i < x.rows(); ++i) x(i, 1) += 0.1 * std::sin(1.7 * i);  // wrinkles
  const auto mini = downsample_downscale(x, target.nx, target.ny, 2);
  const MiniatureGrid g{5, 4, 2};
  for (bool local : {false, true})
    for (bool residual : {false, true}) {
      const PatchOptions o{local, residual};
      const auto out = patch_outputs(x, mini, g, o);
      CHECK(out.rows() == 27);
      CHECK(out.cols() == 12);
      // float storage of the outputs: 1e-6 m at metre scale
      CHECK((assemble_patches(out, mini, g, o) - x).cwiseAbs().maxCoeff() < 1e-6);
    }
  // Every frame gives pairs: the first two with the first frame standing for those before it,
  // as upscale takes them (trained from the third frame only, the corrector's first frame was
  // 34.5 mm off on the demo's curtain).
  std::vector<datadyn::Points3> frames;
  for (int k = 0; k < 4; ++k) frames.push_back(x * (1.0 + 0.01 * k));
  const auto pairs = training_pairs(frames, g, {});
  CHECK(pairs.x.cols() == 4 * 12);
  CHECK(pairs.x.rows() == 36);
  const auto m = [&](int k) { return downsample_downscale(frames[k], target.nx, target.ny, 2); };
  CHECK(pairs.x.leftCols(12) == patch_inputs(m(0), m(0), m(0), g, {}));
  CHECK(pairs.x.middleCols(12, 12) == patch_inputs(m(0), m(0), m(1), g, {}));
  CHECK(pairs.x.middleCols(24, 12) == patch_inputs(m(0), m(1), m(2), g, {}));
  CHECK(pairs.y.middleCols(36, 12) == patch_outputs(frames[3], m(3), g, {}));
}

TEST_CASE("patch inputs keep the frames and velocities asked for (table 3)") {
  // The paper's table 3 compares positions at t, positions and velocities at t, and positions
  // over t-2, t-1, t (eq. 2, the default). Fewer frames keep the latest; velocities follow as
  // f (x'_t - x'_t-1), target metres a frame.
  ClothParams target;
  target.nx = 9;
  target.ny = 7;
  REQUIRE(apply_scene_preset("curtain", target));
  const datadyn::Points3 x = rest_positions(target);
  const auto frame = [&](double k) {
    datadyn::Points3 y = x;
    for (Eigen::Index i = 0; i < y.rows(); ++i) y(i, 2) += 0.05 * k * std::sin(0.9 * i + k);
    return downsample_downscale(y, target.nx, target.ny, 2);
  };
  const auto m2 = frame(0), m1 = frame(1), m0 = frame(2);
  const MiniatureGrid g{5, 4, 2};
  const Eigen::MatrixXf all = patch_inputs(m2, m1, m0, g, {});
  REQUIRE(all.rows() == 36);
  for (bool local : {false, true}) {
    INFO("local " << local);
    PatchOptions o{local, false};
    const Eigen::MatrixXf three = patch_inputs(m2, m1, m0, g, o);
    for (int history : {1, 2, 3}) {
      o.history = history;
      o.velocities = false;
      CHECK(patch_input_size(o) == 12 * history);
      CHECK(patch_inputs(m2, m1, m0, g, o) == three.bottomRows(12 * history));
      o.velocities = true;
      CHECK(patch_input_size(o) == 12 * history + 12);
      const Eigen::MatrixXf in = patch_inputs(m2, m1, m0, g, o);
      CHECK(in.topRows(12 * history) == three.bottomRows(12 * history));
      // The velocities: each node's motion over the last frame, the same with or without local
      // (a difference of positions has no centroid to take off).
      for (int p = 0; p < g.patch_count(); ++p) {
        const int r = p / (g.mx - 1), c = p % (g.mx - 1);
        const int nodes[4] = {r * g.mx + c, r * g.mx + c + 1, (r + 1) * g.mx + c,
                              (r + 1) * g.mx + c + 1};
        for (int q = 0; q < 4; ++q) {
          const Eigen::Vector3f v =
              (2.0 * (m0.row(nodes[q]) - m1.row(nodes[q]))).transpose().cast<float>();
          CHECK(in.block(12 * history + 3 * q, p, 3, 1) == v);
        }
      }
    }
  }
  // Pairs are as wide as the inputs.
  PatchOptions one;
  one.history = 1;
  one.velocities = true;
  std::vector<datadyn::Points3> frames(4, x);
  CHECK(training_pairs(frames, g, one).x.rows() == 24);
}

TEST_CASE("a pair set joins runs in order and gives back only the pairs appended") {
  // Room for 10 pairs, 7 appended (a run shortened after the room was taken): the set is those
  // 7, in the order appended, and what was not filled is dropped.
  datadyn::cloth::PairSet set(2, 3, 10);
  datadyn::cloth::PatchPairs a, b, none;
  a.x = Eigen::MatrixXf::Random(2, 4);
  a.y = Eigen::MatrixXf::Random(3, 4);
  b.x = Eigen::MatrixXf::Random(2, 3);
  b.y = Eigen::MatrixXf::Random(3, 3);
  set.append(a);
  set.append(none);  // a run too short for pairs
  set.append(b);
  const auto all = std::move(set).take();
  REQUIRE(all.x.cols() == 7);
  REQUIRE(all.y.cols() == 7);
  CHECK(all.x.leftCols(4) == a.x);
  CHECK(all.x.rightCols(3) == b.x);
  CHECK(all.y.leftCols(4) == a.y);
  CHECK(all.y.rightCols(3) == b.y);
}

TEST_CASE("a particle shared by patches gets the mean of their predictions") {
  // Outputs that disagree between patches: the exact outputs of a wrinkled frame plus seeded noise
  // per patch and slot. The assembled frame must be the frame plus the mean noise of the patches
  // covering each particle, computed here by scattering over the patches (a second method).
  ClothParams target;
  target.nx = 13;
  target.ny = 9;
  REQUIRE(apply_scene_preset("curtain", target));
  datadyn::Points3 x = rest_positions(target);
  for (Eigen::Index i = 0; i < x.rows(); ++i) x(i, 2) += 0.05 * std::cos(0.9 * i);
  const auto mini = downsample_downscale(x, target.nx, target.ny, 2);
  const MiniatureGrid g{7, 5, 2};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-0.01f, 0.01f);
  Eigen::MatrixXf noise(g.output_size(), g.patch_count());
  for (Eigen::Index i = 0; i < noise.size(); ++i) noise.data()[i] = u(rng);
  datadyn::Points3 mean_noise = datadyn::Points3::Zero(x.rows(), 3);
  Eigen::VectorXd count = Eigen::VectorXd::Zero(x.rows());
  for (int r = 0; r + 1 < g.my; ++r)
    for (int c = 0; c + 1 < g.mx; ++c)
      for (int a = 0; a <= 2; ++a)
        for (int b = 0; b <= 2; ++b) {
          const int i = (2 * r + a) * target.nx + 2 * c + b;
          mean_noise.row(i) +=
              noise.block(3 * (3 * a + b), r * (g.mx - 1) + c, 3, 1).transpose().cast<double>();
          count[i] += 1.0;
        }
  for (Eigen::Index i = 0; i < x.rows(); ++i) mean_noise.row(i) /= count[i];
  CHECK(count.minCoeff() == 1.0);  // the corners
  CHECK(count.maxCoeff() == 4.0);  // interior patch corners
  for (bool local : {false, true})
    for (bool residual : {false, true}) {
      const PatchOptions o{local, residual};
      INFO("local " << local << ", residual " << residual);
      const Eigen::MatrixXf out = patch_outputs(x, mini, g, o) + noise;
      // float outputs at metre scale: 1e-6 m
      CHECK((assemble_patches(out, mini, g, o) - (x + mean_noise)).cwiseAbs().maxCoeff() < 1e-6);
    }
}

TEST_CASE("grid roughness is zero on a plane and the closed form on a parabolic cylinder") {
  const int nx = 7, ny = 5;
  const double h = 0.1, a = 3.0;
  datadyn::Points3 plane(nx * ny, 3), cylinder(nx * ny, 3);
  for (int r = 0; r < ny; ++r)
    for (int c = 0; c < nx; ++c) {
      const double u = c * h, v = r * h;
      plane.row(r * nx + c) << u + 0.2 * v, 0.5 * u - v, 0.3 * u + 0.7 * v;
      cylinder.row(r * nx + c) << u, v, a * u * u;
    }
  // Second differences of an affine map vanish up to rounding of coordinates of order 1.
  CHECK(datadyn::cloth::grid_roughness(plane, nx, ny) < 1e-15);
  // z = a u^2: 2 a h^2 along every row's interior, 0 along the columns.
  const double along_rows = ny * (nx - 2), along_columns = (ny - 2) * nx;
  const double expected = along_rows * 2 * a * h * h / (along_rows + along_columns);
  CHECK(datadyn::cloth::grid_roughness(cylinder, nx, ny) ==
        doctest::Approx(expected).epsilon(1e-12));
}
