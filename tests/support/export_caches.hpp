#pragma once
// Small caches with closed-form content for the mesh-export tests (tests/io, tests/cli and the
// client scripts in tests/clients, which recompute the same formulas in Python):
//   "cloth"  a nx x nz grid of vertices in the xz-plane, waving in y, with triangles; a static
//            "stiffness" [N], texture coordinates "uv" [N, 2], a static "normal" [N, 3] and a
//            per-frame "velocity" [F, N, 3]
//   "body"   a unit cube of 5 positively oriented tetrahedra, translated along x per frame
//   "drops"  3D particles on a jittered lattice (no topology)
//   "wave2d" 2D particles (dimension 2)
//   "water"  a level-set grid of a sphere whose radius grows per frame
// and, in a cache of its own (write_seam_cache), "sheet": the cloth grid with face-varying texture
// coordinates that may have a seam; and an OBJ of the cloth as a DCC tool would hold it
// (write_cloth_reference), for mesh-export's match.file.

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "core/types.hpp"
#include "io/cache.hpp"

namespace datadyn::test {

inline constexpr int kClothNx = 5, kClothNz = 4;

/// Texture coordinates of cloth vertex i: its column and row over the grid's last ones.
inline Eigen::Vector2f cloth_uv(int i) {
  return {static_cast<float>(i % kClothNx) / (kClothNx - 1),
          static_cast<float>(i / kClothNx) / (kClothNz - 1)};
}

/// Position of cloth vertex i at frame number f (seconds t = (f - 1) / 24).
inline Eigen::Vector3d cloth_position(int i, std::int64_t f) {
  const double x = 0.1 * (i % kClothNx), z = 0.1 * (i / kClothNx);
  const double t = static_cast<double>(f - 1) / 24.0;
  return {x, 0.05 * std::sin(3.0 * x + 2.0 * t) + 0.01 * static_cast<double>(f), z};
}

/// Velocity of cloth vertex i at frame number f: components that differ, so that a map into
/// another frame shows in each.
inline Eigen::Vector3d cloth_velocity(int i, std::int64_t f) {
  return {0.1 * i, 0.5 * static_cast<double>(f), -0.2};
}

inline Points3 cloth_frame(std::int64_t f) {
  Points3 p(kClothNx * kClothNz, 3);
  for (int i = 0; i < p.rows(); ++i) p.row(i) = cloth_position(i, f).transpose();
  return p;
}

inline Triangles cloth_triangles() {
  Triangles t(2 * (kClothNx - 1) * (kClothNz - 1), 3);
  int k = 0;
  for (int j = 0; j + 1 < kClothNz; ++j)
    for (int i = 0; i + 1 < kClothNx; ++i) {
      const int a = j * kClothNx + i, b = a + 1, c = a + kClothNx, d = c + 1;
      // Counter-clockwise seen from +y: (a, c, b) and (b, c, d).
      t.row(k++) << a, c, b;
      t.row(k++) << b, c, d;
    }
  return t;
}

/// Unit cube corners (bit 0: x, bit 1: y, bit 2: z) and 5 positively oriented tetrahedra.
inline Points3 cube_points(double shift) {
  Points3 p(8, 3);
  for (int i = 0; i < 8; ++i) p.row(i) << (i & 1) + shift, (i >> 1) & 1, (i >> 2) & 1;
  return p;
}

inline Tets cube_tets() {
  Tets t(5, 4);
  t << 0, 1, 2, 4,  //
      1, 3, 2, 7,   //
      1, 4, 5, 7,   //
      2, 7, 6, 4,   //
      1, 2, 4, 7;
  // Make each one positively oriented.
  const Points3 p = cube_points(0);
  for (int k = 0; k < 5; ++k) {
    const Eigen::Vector3d a = p.row(t(k, 0)), b = p.row(t(k, 1)), c = p.row(t(k, 2)),
                          d = p.row(t(k, 3));
    if ((b - a).dot((c - a).cross(d - a)) < 0) std::swap(t(k, 1), t(k, 2));
  }
  return t;
}

/// Particles of a jittered lattice of n^3 points with spacing h (seeded).
inline Points3 jittered_block(int n, double h, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.1 * h, 0.1 * h);
  Points3 p(n * n * n, 3);
  int k = 0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        p.row(k++) << x * h + jitter(rng), y * h + jitter(rng), z * h + jitter(rng);
  return p;
}

/// Sphere level-set radius at frame f of "water" (metres); the grid is 24^3 voxels of 0.05 m.
inline double water_radius(std::int64_t f) {
  return 0.3 + 0.05 * static_cast<double>(f - 1);
}
inline io::GridSpec water_spec() {
  io::GridSpec s;
  s.nx = s.ny = s.nz = 24;
  s.origin = Eigen::Vector3d(-0.6, -0.6, -0.6);
  s.voxel_size = 0.05;
  s.grid_class = io::GridClass::LevelSet;
  s.background = 3.0;
  return s;
}

/// "core": a unit cube of 12 tetrahedra around its centre, which is vertex 4 of 9 (so that the
/// surface's vertices are not a prefix of the cache's), with a static `points/mass` of 10 per
/// vertex index; frame f is the rest pose moved 0.1 f along x. The surface vertices:
inline const std::vector<int> kCoreSurface{0, 1, 2, 3, 5, 6, 7, 8};

inline Points3 core_rest() {
  Points3 rest(9, 3);
  for (int i = 0, v = 0; v < 9; ++v) {
    if (v == 4)
      rest.row(v) << 0.5, 0.5, 0.5;
    else
      rest.row(v) = cube_points(0).row(i++);
  }
  return rest;
}

inline void write_core_cache(const std::filesystem::path& path, int frames) {
  // Each outward face of the cube (the boundary of cube_tets(): 12 triangles) with the centre.
  const Tets cube = cube_tets();
  std::vector<std::array<int, 3>> hull;
  for (int k = 0; k < cube.rows(); ++k)
    for (const auto& f :
         {std::array{0, 2, 1}, std::array{0, 1, 3}, std::array{0, 3, 2}, std::array{1, 2, 3}}) {
      std::array<int, 3> face{cube(k, f[0]), cube(k, f[1]), cube(k, f[2])};
      int shared = 0;  // a face of two tets is inside the cube
      for (int m = 0; m < cube.rows(); ++m) {
        int in = 0;
        for (int c : face) in += (cube.row(m).array() == c).any() ? 1 : 0;
        shared += in == 3 ? 1 : 0;
      }
      if (shared == 1) hull.push_back(face);
    }
  const auto cache_vertex = [](int corner) { return corner < 4 ? corner : corner + 1; };
  Tets tets(static_cast<Eigen::Index>(hull.size()), 4);
  for (std::size_t t = 0; t < hull.size(); ++t)  // outward face reversed + centre: positive
    tets.row(static_cast<Eigen::Index>(t)) << cache_vertex(hull[t][0]), cache_vertex(hull[t][2]),
        cache_vertex(hull[t][1]), 4;
  Eigen::VectorXd mass(9);
  for (int v = 0; v < 9; ++v) mass(v) = 10.0 * v;
  io::CacheWriter w(path, {"export-test 1", "export-test", "{}", ""});
  auto& s = w.add_sequence("core", {24.0, 3});
  const Points3 rest = core_rest();
  s.write_static("rest/position", io::view(rest));
  s.write_static("topology/tetrahedra", io::view(tets));
  s.write_static("points/mass", io::view(mass));
  for (int f = 1; f <= frames; ++f) {
    Points3 x = rest;
    x.col(0).array() += 0.1 * f;
    s.append_frame(f, (f - 1) / 24.0, {{"points/position", io::view(x)}});
  }
  w.commit();
}

/// A cache with the cloth sheet and face-varying texture coordinates, one entry per triangle
/// corner: the sheet's own (u, v), shifted by `shift` in u on the second half of the triangles.
/// shift != 0 makes the vertices both halves share a seam (two coordinates each).
inline void write_seam_cache(const std::filesystem::path& path, float shift) {
  const Triangles tris = cloth_triangles();
  FaceVaryingUv uv;
  uv.coordinates.resize(3 * tris.rows(), 2);
  uv.corners.resize(tris.rows(), 3);
  for (Eigen::Index t = 0; t < tris.rows(); ++t)
    for (int c = 0; c < 3; ++c) {
      const Eigen::Index k = 3 * t + c;
      uv.coordinates.row(k) = cloth_uv(tris(t, c)).cast<double>().transpose();
      if (2 * t >= tris.rows()) uv.coordinates(k, 0) += shift;
      uv.corners(t, c) = static_cast<int>(k);
    }
  io::CacheWriter w(path, {"export-test 1", "export-test", "{}", ""});
  auto& s = w.add_sequence("sheet", {24.0, 3});
  s.write_static("topology/triangles", io::view(tris));
  io::write_face_uv(s, uv);
  for (int f = 1; f <= 2; ++f)
    s.append_frame(f, (f - 1) / 24.0, {{"points/position", io::view(cloth_frame(f))}});
  w.commit();
}

/// The expected (u, v) of corner c of triangle t in write_seam_cache's cache.
inline Eigen::Vector2d seam_uv(Eigen::Index t, int c, float shift) {
  const Triangles tris = cloth_triangles();
  Eigen::Vector2d uv = cloth_uv(tris(t, c)).cast<double>();
  if (2 * t >= tris.rows()) uv[0] += shift;
  return uv;
}

/// Writes all of the sequences above, `frames` frames each (frame numbers 1..frames).
inline void write_export_cache(const std::filesystem::path& path, int frames = 4) {
  io::CacheWriter w(path, {"export-test 1", "export-test", "{}", ""});
  {
    auto& s = w.add_sequence("cloth", {24.0, 3});
    s.write_static("rest/position", io::view(cloth_frame(1)));
    s.write_static("topology/triangles", io::view(cloth_triangles()));
    std::vector<float> stiffness(kClothNx * kClothNz);
    for (std::size_t i = 0; i < stiffness.size(); ++i) stiffness[i] = 100.0f + 10.0f * i;
    s.write_static("points/stiffness", io::view(stiffness));
    Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor> uv(kClothNx * kClothNz, 2);
    for (int i = 0; i < uv.rows(); ++i) uv.row(i) = cloth_uv(i).transpose();
    s.write_static("points/uv", io::view(uv));
    // The sheet's upward normal at rest, a direction (turned by a match, never scaled).
    Points3 up = Points3::Zero(kClothNx * kClothNz, 3);
    up.col(1).setOnes();
    s.write_static("points/normal", io::view(up));
    for (int f = 1; f <= frames; ++f) {
      const Points3 x = cloth_frame(f);
      Points3 v(x.rows(), 3);
      for (int i = 0; i < v.rows(); ++i) v.row(i) = cloth_velocity(i, f).transpose();
      s.append_frame(f, (f - 1) / 24.0,
                     {{"points/position", io::view(x)}, {"points/velocity", io::view(v)}});
    }
  }
  {
    auto& s = w.add_sequence("body", {24.0, 3});
    s.write_static("rest/position", io::view(cube_points(0)));
    s.write_static("topology/tetrahedra", io::view(cube_tets()));
    for (int f = 1; f <= frames; ++f)
      s.append_frame(f, (f - 1) / 24.0, {{"points/position", io::view(cube_points(0.1 * f))}});
  }
  {
    auto& s = w.add_sequence("drops", {24.0, 3});
    for (int f = 1; f <= frames; ++f) {
      Points3 p = jittered_block(6, 0.1, 7);
      p.col(1).array() -= 0.02 * f;
      s.append_frame(f, (f - 1) / 24.0, {{"points/position", io::view(p)}});
    }
  }
  {
    auto& s = w.add_sequence("wave2d", {24.0, 2});
    for (int f = 1; f <= frames; ++f) {
      Points2 p(30, 2);
      for (int i = 0; i < 30; ++i) p.row(i) << 0.05 * i, 0.1 * std::sin(0.3 * i + 0.1 * f);
      s.append_frame(f, (f - 1) / 24.0, {{"points/position", io::view(p)}});
    }
  }
  {
    auto& s = w.add_sequence("water", {24.0, 3});
    const io::GridSpec spec = water_spec();
    s.declare_grid("surface", spec);
    for (int f = 1; f <= frames; ++f) {
      std::vector<float> v(spec.nx * spec.ny * spec.nz);
      std::size_t n = 0;
      const double bg = spec.background * spec.voxel_size;
      for (std::size_t k = 0; k < spec.nz; ++k)
        for (std::size_t j = 0; j < spec.ny; ++j)
          for (std::size_t i = 0; i < spec.nx; ++i) {
            const Eigen::Vector3d x =
                spec.origin + spec.voxel_size * Eigen::Vector3d(double(i), double(j), double(k));
            const double d = x.norm() - water_radius(f);
            v[n++] = static_cast<float>(std::clamp(d, -bg, bg));
          }
      s.append_frame(f, (f - 1) / 24.0,
                     {{"grids/surface", io::view(v, {spec.nz, spec.ny, spec.nx})}});
    }
  }
  w.commit();
}

/// The cloth as a DCC tool holds it (write_cloth_reference): the file's vertex j is the cloth's
/// vertex cloth_vertex(j). Its vertices 0-19 are the cloth's in reverse order, and 20-23 repeat
/// the cloth's column x = 0.2 (vertices 2, 7, 12, 17), split at a texture seam there.
inline constexpr int kReferenceVertices = kClothNx * kClothNz + kClothNz;
inline int cloth_vertex(int j) {
  return j < kClothNx * kClothNz ? kClothNx * kClothNz - 1 - j : 2 + kClothNx * (j - 20);
}
/// The texture coordinates of the file's vertex j: the cloth's, those of the copies on the seam
/// shifted by 1 in u (another island).
inline Eigen::Vector2d reference_uv(int j) {
  Eigen::Vector2d uv = cloth_uv(cloth_vertex(j)).cast<double>();
  if (j >= kClothNx * kClothNz) uv[0] += 1;
  return uv;
}
/// The file's coordinates of a cloth position: Z up (Blender's frame: (x, y, z) -> (x, -z, y))
/// in centimetres.
inline Eigen::Vector3d reference_coordinates(const Eigen::Vector3d& x) {
  return 100.0 * Eigen::Vector3d(x.x(), -x.z(), x.y());
}

/// Writes the OBJ of the cloth's rest pose (frame 1) as above: one quad per cell, counter-
/// clockwise seen from +y, the cells right of the seam on the copies, `vt` one per vertex.
inline void write_cloth_reference(const std::filesystem::path& path) {
  std::ofstream out(path);
  out.precision(9);
  for (int j = 0; j < kReferenceVertices; ++j) {
    const Eigen::Vector3d x = reference_coordinates(cloth_position(cloth_vertex(j), 1));
    out << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << '\n';
  }
  for (int j = 0; j < kReferenceVertices; ++j)
    out << "vt " << reference_uv(j).x() << ' ' << reference_uv(j).y() << '\n';
  // The file's vertex of cloth vertex i, on the seam's right side when `right`.
  const auto vertex = [](int i, bool right) {
    return right && i % kClothNx == 2 ? 20 + i / kClothNx : kClothNx * kClothNz - 1 - i;
  };
  for (int r = 0; r + 1 < kClothNz; ++r)
    for (int c = 0; c + 1 < kClothNx; ++c) {
      const int a = r * kClothNx + c, right = c >= 2;
      out << 'f';
      for (int i : {a, a + kClothNx, a + kClothNx + 1, a + 1}) {
        const int j = vertex(i, right) + 1;
        out << ' ' << j << '/' << j;
      }
      out << '\n';
    }
}

}  // namespace datadyn::test
