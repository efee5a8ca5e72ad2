// OpenVDB level sets: particles, dense cache grids and meshes to level sets, filtering, meshing,
// and .vdb files read back by Debian's own OpenVDB tools (vdb_print, vdb_tool) as independent
// readers.

#include <doctest/doctest.h>

#include <fstream>

#include <cmath>
#include <random>

#include <Eigen/Geometry>

#include "core/errors.hpp"
#include "io/vdb_level_set.hpp"
#include "support/export_caches.hpp"
#include "support/file_bytes.hpp"
#include "support/format_readers.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::io;
using datadyn::test::TempDir;

namespace {

/// Unit directions, roughly uniform on the sphere (seeded).
std::vector<Eigen::Vector3d> directions(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g;
  std::vector<Eigen::Vector3d> out;
  for (int i = 0; i < n; ++i) out.push_back(Eigen::Vector3d(g(rng), g(rng), g(rng)).normalized());
  return out;
}

/// Radius of the zero crossing of `ls` along `dir` from `center`, by bisection in [lo, hi].
double zero_crossing(const LevelSet& ls, const Eigen::Vector3d& center, const Eigen::Vector3d& dir,
                     double lo, double hi) {
  auto phi = [&](double r) {
    Points3 x(1, 3);
    x.row(0) = (center + r * dir).transpose();
    return ls.sample(x)[0];
  };
  REQUIRE(phi(lo) < 0);
  REQUIRE(phi(hi) > 0);
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (phi(mid) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Particles on a lattice of spacing h filling the ball of radius R around the origin.
Points3 ball_particles(double R, double h) {
  std::vector<Eigen::Vector3d> p;
  const int n = static_cast<int>(std::ceil(R / h));
  for (int k = -n; k <= n; ++k)
    for (int j = -n; j <= n; ++j)
      for (int i = -n; i <= n; ++i) {
        const Eigen::Vector3d x = h * Eigen::Vector3d(i, j, k);
        if (x.norm() <= R) p.push_back(x);
      }
  Points3 out(static_cast<Eigen::Index>(p.size()), 3);
  for (std::size_t i = 0; i < p.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = p[i];
  return out;
}

/// Signed volume of a closed mesh (divergence theorem): positive when faces wind counter-clockwise
/// seen from outside.
double signed_volume(const PolygonMesh& m) {
  double v = 0;
  auto tri = [&](int a, int b, int c) {
    v += m.points.row(a).dot(m.points.row(b).cross(m.points.row(c))) / 6.0;
  };
  for (Eigen::Index i = 0; i < m.triangles.rows(); ++i)
    tri(m.triangles(i, 0), m.triangles(i, 1), m.triangles(i, 2));
  for (Eigen::Index i = 0; i < m.quads.rows(); ++i) {
    tri(m.quads(i, 0), m.quads(i, 1), m.quads(i, 2));
    tri(m.quads(i, 0), m.quads(i, 2), m.quads(i, 3));
  }
  return v;
}

LevelSet sphere_grid(double radius) {
  // The cache's "water" grid at the frame whose radius is `radius`.
  const GridSpec spec = test::water_spec();
  std::vector<float> v;
  for (std::size_t k = 0; k < spec.nz; ++k)
    for (std::size_t j = 0; j < spec.ny; ++j)
      for (std::size_t i = 0; i < spec.nx; ++i) {
        const Eigen::Vector3d x =
            spec.origin + spec.voxel_size * Eigen::Vector3d(double(i), double(j), double(k));
        v.push_back(static_cast<float>(std::clamp(x.norm() - radius, -0.15, 0.15)));
      }
  return level_set_from_dense(v.data(), spec);
}

}  // namespace

TEST_CASE("particles: the level set of a sampled ball has the ball's radius (+-1 voxel) and sign") {
  // Centres fill a ball of radius 0.4 at a spacing of one voxel; spheres of 2 voxels around them
  // make a surface at 0.4 + 0.04 = 0.44, bumpy by less than half a voxel at this density.
  const double voxel = 0.02, R = 0.4, r = 2 * voxel;
  const Points3 p = ball_particles(R, voxel);
  INFO("particles: " << p.rows());
  ParticleLevelSetParams params;
  params.voxel_size = voxel;
  params.radius = r;
  const auto result = level_set_from_particles(p, params);
  CHECK(result.skipped_small == 0);
  const LevelSet& ls = result.level_set;
  CHECK(ls.voxel_size() == doctest::Approx(voxel));
  CHECK(ls.half_width() == doctest::Approx(3.0));
  for (const auto& d : directions(64, 5)) {
    INFO("direction " << d.transpose());
    CHECK(std::abs(zero_crossing(ls, Eigen::Vector3d::Zero(), d, 0.2, 0.6) - (R + r)) <= voxel);
  }
  Points3 probe(3, 3);
  probe << 0, 0, 0,  // deep inside: beyond the band, flood-filled to -background
      0.3, 0, 0,     // inside
      0.8, 0, 0;     // far outside: +background
  const Eigen::VectorXd phi = ls.sample(probe);
  CHECK(phi[0] == doctest::Approx(-3 * voxel));
  CHECK(phi[1] < 0);
  CHECK(phi[2] == doctest::Approx(3 * voxel));
}

TEST_CASE("particles: values agree with the union of spheres, min |x - p| - r, near the surface") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  Points3 p(200, 3);
  for (int i = 0; i < 200; ++i) p.row(i) << u(rng), u(rng), u(rng);
  ParticleLevelSetParams params;
  params.voxel_size = 0.01;
  params.radius = 0.035;
  const LevelSet ls = level_set_from_particles(p, params).level_set;
  // Random points whose exact value is within one voxel of the surface; trilinear interpolation
  // of a 1-Lipschitz function errs by at most the distance to the farthest cell corner, sqrt(3)
  // voxels, and in practice far less: the bound is half a voxel on average.
  std::uniform_real_distribution<double> w(-0.35, 0.35);
  double sum = 0;
  int n = 0;
  while (n < 500) {
    const Eigen::Vector3d x(w(rng), w(rng), w(rng));
    const double exact = (p.rowwise() - x.transpose()).rowwise().norm().minCoeff() - params.radius;
    if (std::abs(exact) > 0.01) continue;
    Points3 q(1, 3);
    q.row(0) = x.transpose();
    const double err = std::abs(ls.sample(q)[0] - exact);
    INFO("x = " << x.transpose() << ", exact " << exact);
    CHECK(err <= std::sqrt(3.0) * 0.01);
    sum += err;
    ++n;
  }
  CHECK(sum / n <= 0.5 * 0.01);
}

TEST_CASE("particles: dilate grows and erode shrinks the surface by the given voxels") {
  const double voxel = 0.02;
  const Points3 p = ball_particles(0.3, voxel);
  ParticleLevelSetParams params;
  params.voxel_size = voxel;
  params.radius = 2 * voxel;
  auto radius_of = [&](const LevelSet& ls) {
    double s = 0;
    const auto dirs = directions(16, 3);
    for (const auto& d : dirs) s += zero_crossing(ls, Eigen::Vector3d::Zero(), d, 0.1, 0.6);
    return s / static_cast<double>(dirs.size());
  };
  const double base = radius_of(level_set_from_particles(p, params).level_set);
  params.dilate = 2;
  const double dilated = radius_of(level_set_from_particles(p, params).level_set);
  params.erode = 2;
  params.smooth = 1;
  const double closed = radius_of(level_set_from_particles(p, params).level_set);
  CHECK(dilated - base == doctest::Approx(2 * voxel).epsilon(0.25));  // 0.5 voxel: band rebuild
  CHECK(std::abs(closed - base) <= 0.5 * voxel);
}

TEST_CASE("dense grid: a cache level set becomes a sparse one with the same zero crossing") {
  const LevelSet ls = sphere_grid(0.4);
  CHECK(ls.voxel_size() == doctest::Approx(0.05));
  for (const auto& d : directions(32, 8))
    CHECK(std::abs(zero_crossing(ls, Eigen::Vector3d::Zero(), d, 0.1, 0.55) - 0.4) <= 0.01);
  Points3 probe(2, 3);
  probe << 0, 0, 0, 0.58, 0, 0;
  const Eigen::VectorXd phi = ls.sample(probe);
  CHECK(phi[0] == doctest::Approx(-0.15));  // beyond the band inside: flood-filled negative
  CHECK(phi[1] > 0);
  // The active band is the voxels with |value| < 3 voxels: a shell around the sphere.
  const auto [lo, hi] = ls.active_bounds();
  CHECK(hi.x() == doctest::Approx(0.5).epsilon(0.2));
  CHECK(lo.x() == doctest::Approx(-0.5).epsilon(0.2));
}

TEST_CASE("meshing: vertices on the sphere, faces counter-clockwise from outside, adaptivity") {
  const LevelSet ls = sphere_grid(0.4);
  const PolygonMesh m = mesh_from_level_set(ls, 0.0, 0.0);
  REQUIRE(m.points.rows() > 100);
  const Eigen::VectorXd r = m.points.rowwise().norm();
  CHECK(r.minCoeff() >= 0.4 - 0.01);
  CHECK(r.maxCoeff() <= 0.4 + 0.01);
  const double v = signed_volume(m);
  CHECK(v == doctest::Approx(4.0 / 3.0 * M_PI * std::pow(0.4, 3)).epsilon(0.03));  // 3%: facets
  const PolygonMesh coarse = mesh_from_level_set(ls, 0.0, 1.0);
  CHECK(coarse.triangles.rows() + coarse.quads.rows() < m.triangles.rows() + m.quads.rows());
  CHECK(signed_volume(coarse) > 0);
  // An iso value of +1 voxel meshes a sphere one voxel larger.
  const PolygonMesh grown = mesh_from_level_set(ls, 0.05, 0.0);
  CHECK(grown.points.rowwise().norm().mean() == doctest::Approx(0.45).epsilon(0.02));
}

TEST_CASE("mesh to level set and back: the surface stays within a voxel") {
  const PolygonMesh sphere = mesh_from_level_set(sphere_grid(0.4), 0.0, 0.0);
  const LevelSet ls = level_set_from_mesh(sphere, 0.02, 3.0);
  CHECK(ls.voxel_size() == doctest::Approx(0.02));
  for (const auto& d : directions(32, 9))
    CHECK(std::abs(zero_crossing(ls, Eigen::Vector3d::Zero(), d, 0.2, 0.55) - 0.4) <= 0.02);
  Points3 inside(1, 3);
  inside << 0, 0, 0;
  CHECK(ls.sample(inside)[0] < 0);
}

TEST_CASE("mesh to level set: a prism's pentagon caps count as surface") {
  // A pentagonal prism (circumradius 0.3, y from -0.2 to 0.2) of two pentagons and five quads,
  // outward. 3 cm above and below the top cap's centre the distances are +-0.03; were the
  // pentagons left out, the nearest surface there would be the sides, 0.3 cos 36 deg = 0.24 away.
  PolygonMesh prism;
  prism.points.resize(10, 3);
  for (int k = 0; k < 5; ++k) {
    const double a = 2 * M_PI * k / 5;
    prism.points.row(k) << 0.3 * std::cos(a), -0.2, 0.3 * std::sin(a);
    prism.points.row(k + 5) << 0.3 * std::cos(a), 0.2, 0.3 * std::sin(a);
  }
  prism.polygons = {{5, 5}, {0, 1, 2, 3, 4, 9, 8, 7, 6, 5}};  // bottom seen from -y, top from +y
  prism.quads.resize(5, 4);
  for (int k = 0; k < 5; ++k) prism.quads.row(k) << k, k + 5, (k + 1) % 5 + 5, (k + 1) % 5;
  const LevelSet ls = level_set_from_mesh(prism, 0.01, 4.0);
  Points3 at(2, 3);
  at << 0, 0.23, 0, 0, 0.17, 0;
  const auto d = ls.sample(at);
  // Half a voxel: the narrow band's distances are exact to about that (OpenVDB's
  // meshToLevelSet, trilinear sampling).
  CHECK(std::abs(d[0] - 0.03) <= 0.005);
  CHECK(std::abs(d[1] + 0.03) <= 0.005);
}

TEST_CASE(
    "vdb files: vdb_print lists the grid, class and metadata, and vdb_tool meshes the sphere") {
  TempDir dir;
  const LevelSet ls = sphere_grid(0.4);
  write_vdb(dir / "s.vdb", ls, {{"generator", "test 1"}, {"config", "{\"k\": 2}"}});
  CHECK_FALSE(std::filesystem::exists(dir / ("s.vdb.tmp-" + std::to_string(::getpid()))));
  const auto r = test::run_command("vdb_print -l -m " + (dir / "s.vdb").string());
  INFO(r.out);
  CHECK(r.out.find("surface") != std::string::npos);
  CHECK(r.out.find("level set") != std::string::npos);
  CHECK(r.out.find("test 1") != std::string::npos);
  CHECK(r.out.find("{\"k\": 2}") != std::string::npos);
  CHECK(r.out.find("is_saved_as_half_float: false") != std::string::npos);
  // vdb_tool reads the file with its own OpenVDB and meshes it: the vertices lie on the sphere.
  const auto m = test::run_command("vdb_tool -read " + (dir / "s.vdb").string() +
                                   " -ls2mesh -write " + (dir / "s.obj").string());
  REQUIRE(m.exit_code == 0);
  const auto obj = test::read_obj(dir / "s.obj");
  REQUIRE(obj.v.size() > 100);
  for (const auto& v : obj.v) CHECK(std::abs(v.norm() - 0.4) <= 0.05);  // one voxel
}

TEST_CASE("vdb files: the same grid gives the same bytes (no random UUID)") {
  TempDir dir;
  const LevelSet ls = sphere_grid(0.4);
  write_vdb(dir / "a.vdb", ls, {{"generator", "test 1"}});
  write_vdb(dir / "b.vdb", ls, {{"generator", "test 1"}});
  write_vdb(dir / "c.vdb", sphere_grid(0.41), {{"generator", "test 1"}});
  const auto bytes = datadyn::test::file_bytes;
  CHECK(bytes(dir / "a.vdb") == bytes(dir / "b.vdb"));
  CHECK(bytes(dir / "a.vdb").substr(21, 36) !=
        bytes(dir / "c.vdb").substr(21, 36));  // content-derived
  const auto r = test::run_command("vdb_print -l " + (dir / "a.vdb").string());
  CHECK(r.out.find("surface") != std::string::npos);  // still a valid file
}

TEST_CASE("vdb files: an unwritable path is an IoError and leaves nothing") {
  TempDir dir;
  CHECK_THROWS_AS(write_vdb(dir / "no" / "s.vdb", sphere_grid(0.3)), IoError);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("particles: the leaf rasterizer equals OpenVDB's ParticlesToLevelSet voxel by voxel") {
  // Two implementations of the same definition and arithmetic: every voxel value (sampled at
  // voxel centres, where trilinear interpolation returns the stored value) and the active count
  // are the same. Both round the same double to float, so equality is exact. The sets: random
  // particles crossing the axes, a ball aligned with the voxels (particles exactly on voxel
  // centres hit OpenVDB's "inside" rule), and flat 2D particles (z = 0).
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-0.25, 0.25);
  Points3 random(300, 3);
  for (int i = 0; i < 300; ++i) random.row(i) << u(rng), u(rng), u(rng) - 0.3;
  Points3 flat = random;
  flat.col(2).setZero();
  const std::vector<std::pair<std::string, Points3>> sets{
      {"random", random}, {"aligned ball", ball_particles(0.1, 0.01)}, {"flat", flat}};
  for (const auto& [name, p] : sets)
    for (const double radius_voxels : {1.5, 2.0, 4.5}) {
      ParticleLevelSetParams params;
      params.voxel_size = 0.01;
      params.radius = radius_voxels * 0.01;
      params.rasterizer = ParticleRasterizer::Leaf;
      const LevelSet ours = level_set_from_particles(p, params).level_set;
      params.rasterizer = ParticleRasterizer::OpenVdb;
      const LevelSet ref = level_set_from_particles(p, params).level_set;
      INFO(name << ", radius " << radius_voxels << " voxels");
      CHECK(ours.active_voxel_count() == ref.active_voxel_count());
      const auto [lo, hi] = ref.active_bounds();
      std::vector<Eigen::Vector3d> centres;
      for (double x = lo.x() - 0.02; x <= hi.x() + 0.02; x += 0.01)
        for (double y = lo.y() - 0.02; y <= hi.y() + 0.02; y += 0.01)
          for (double z = lo.z() - 0.02; z <= hi.z() + 0.02; z += 0.01)
            centres.emplace_back(std::round(x / 0.01) * 0.01, std::round(y / 0.01) * 0.01,
                                 std::round(z / 0.01) * 0.01);
      Points3 q(static_cast<Eigen::Index>(centres.size()), 3);
      for (std::size_t i = 0; i < centres.size(); ++i)
        q.row(static_cast<Eigen::Index>(i)) = centres[i];
      const Eigen::VectorXd a = ours.sample(q), b = ref.sample(q);
      CHECK((a - b).cwiseAbs().maxCoeff() == 0.0);
      const auto on_a = ours.active(q), on_b = ref.active(q);
      for (std::size_t i = 0; i < on_a.size(); ++i)
        if (on_a[i] != on_b[i]) {
          INFO(centres[i].transpose() << " value " << a[i]);
          CHECK(on_a[i] == on_b[i]);
        }
    }
}
