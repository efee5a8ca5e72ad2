#include "cloth/cloth_params.hpp"

#include <cmath>

namespace datadyn::cloth {

std::vector<std::string> scene_names() {
  return {"curtain", "flag", "collision"};
}

bool apply_scene_preset(const std::string& scene, ClothParams& p) {
  const double side = (p.nx - 1) * p.spacing;
  if (scene == "curtain") {
    // Hung from its top row and released 60 degrees from the vertical: it swings and folds.
    p.origin = {-0.5 * side, 1.5, 0.0};
    p.axis_u = {1.0, 0.0, 0.0};
    p.axis_v = {0.0, -std::cos(M_PI / 3), std::sin(M_PI / 3)};
    p.pins = PinMode::TopRow;
    p.wind = Wind{};
    p.sphere.enabled = false;
    p.ground.enabled = false;
    p.substeps = 1;
    return true;
  }
  if (scene == "flag") {
    // Flag fabric of kFlagAreaDensity: a sheet of 0.01 kg a particle (23 kg/m^2 at 2.08 cm, a
    // tarpaulin) sagged and swung round its pole, as the wind could not hold it up. The wind
    // force is explicit, and on so light a sheet a step of 1/60 s crumples it against its pole;
    // 8 steps a frame stream it out (docs/tools/cloth-train.md, Limits).
    p.origin = {0.0, 1.5, 0.0};
    p.axis_u = {1.0, 0.0, 0.0};
    p.axis_v = {0.0, -1.0, 0.0};
    p.pins = PinMode::LeftColumn;
    p.mass = kFlagAreaDensity * p.spacing * p.spacing;
    p.wind.velocity = {6.0, 0.0, 1.5};
    p.wind.drag = 0.6;
    p.wind.drag_tangent = kFlatPlateFriction;
    p.wind.gust = 0.5;
    p.wind.gust_period = 1.0;
    p.sphere.enabled = false;
    p.ground.enabled = false;
    p.substeps = 8;
    return true;
  }
  if (scene == "collision") {
    // Falls flat from above onto a sphere; the ground catches what slides off.
    p.origin = {-0.5 * side, 0.8, -0.5 * side};
    p.axis_u = {1.0, 0.0, 0.0};
    p.axis_v = {0.0, 0.0, 1.0};
    p.pins = PinMode::None;
    p.wind = Wind{};
    p.sphere.enabled = true;
    p.sphere.center = {0.05, 0.35, 0.0};
    p.sphere.radius = 0.3;
    p.ground.enabled = true;
    p.ground.height = 0.0;
    p.substeps = 3;
    return true;
  }
  return false;
}

Points3 rest_positions(const ClothParams& p) {
  const Eigen::Vector3d u = p.axis_u.normalized(), v = p.axis_v.normalized();
  Points3 x(p.nx * p.ny, 3);
  for (int r = 0; r < p.ny; ++r)
    for (int c = 0; c < p.nx; ++c)
      x.row(grid_index(p, r, c)) =
          (p.origin + (c * p.spacing) * u + (r * p.spacing) * v).transpose();
  return x;
}

std::vector<Spring> grid_springs(const ClothParams& p) {
  const Points3 x = rest_positions(p);
  std::vector<Spring> springs;
  auto add = [&](int r0, int c0, int r1, int c1, double k) {
    if (c0 >= p.nx || r1 >= p.ny || c1 < 0 || c1 >= p.nx || k <= 0) return;
    const int i = grid_index(p, r0, c0), j = grid_index(p, r1, c1);
    springs.push_back({i, j, (x.row(i) - x.row(j)).norm(), k});
  };
  for (int r = 0; r < p.ny; ++r) {
    for (int c = 0; c < p.nx; ++c) {
      add(r, c, r, c + 1, p.k_structural);
      add(r, c, r + 1, c, p.k_structural);
      add(r, c, r + 1, c + 1, p.k_shear);
      add(r, c + 1, r + 1, c, p.k_shear);
      add(r, c, r, c + 2, p.k_bending);
      add(r, c, r + 2, c, p.k_bending);
    }
  }
  return springs;
}

Triangles grid_triangles(const ClothParams& p) {
  Triangles t(2 * (p.nx - 1) * (p.ny - 1), 3);
  int k = 0;
  for (int r = 0; r + 1 < p.ny; ++r) {
    for (int c = 0; c + 1 < p.nx; ++c) {
      const int a = grid_index(p, r, c), b = grid_index(p, r, c + 1);
      const int d = grid_index(p, r + 1, c), e = grid_index(p, r + 1, c + 1);
      t.row(k++) << a, d, b;
      t.row(k++) << b, d, e;
    }
  }
  return t;
}

Quads grid_quads(const ClothParams& p) {
  Quads q((p.nx - 1) * (p.ny - 1), 4);
  int k = 0;
  for (int r = 0; r + 1 < p.ny; ++r)
    for (int c = 0; c + 1 < p.nx; ++c)
      q.row(k++) << grid_index(p, r, c), grid_index(p, r + 1, c), grid_index(p, r + 1, c + 1),
          grid_index(p, r, c + 1);
  return q;
}

Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor> grid_uv(const ClothParams& p) {
  Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor> uv(p.nx * p.ny, 2);
  for (int r = 0; r < p.ny; ++r)
    for (int c = 0; c < p.nx; ++c) {
      uv(grid_index(p, r, c), 0) = static_cast<float>(static_cast<double>(c) / (p.nx - 1));
      uv(grid_index(p, r, c), 1) = static_cast<float>(1.0 - static_cast<double>(r) / (p.ny - 1));
    }
  return uv;
}

std::vector<int> pinned_particles(const ClothParams& p) {
  std::vector<int> pins;
  switch (p.pins) {
    case PinMode::None:
      break;
    case PinMode::TopRow:
      for (int c = 0; c < p.nx; ++c) pins.push_back(grid_index(p, 0, c));
      break;
    case PinMode::TopCorners:
      pins = {grid_index(p, 0, 0), grid_index(p, 0, p.nx - 1)};
      break;
    case PinMode::LeftColumn:
      for (int r = 0; r < p.ny; ++r) pins.push_back(grid_index(p, r, 0));
      break;
  }
  return pins;
}

}  // namespace datadyn::cloth
