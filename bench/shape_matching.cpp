// Example-based shape matching (Koyama et al. 2013) per time step, split as the paper's Table 1
// into shape matching (t_sm: matching, goals, integration, collisions) and projection (t_proj:
// weights, eq. 7, and projected strains), for the paper's particle counts, on one core. The same
// bodies also run plain shape matching (no examples) in this process, so the cost of the examples
// is a measured ratio; Table 1's times (Core i7 M620, 2.66 GHz) are printed beside ours.

#include <tbb/global_control.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/lattice.hpp"
#include "core/voxel_lattice.hpp"
#include "elastic/body.hpp"
#include "elastic/procedural_examples.hpp"
#include "elastic/scene.hpp"
#include "io/mesh_loaders.hpp"

namespace {

using namespace datadyn;
using namespace datadyn::elastic;

/// CPU time of this thread (seconds): the machine may be shared, and with one worker thread all
/// the work runs here.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Model {
  std::string name;
  TetMesh mesh;
  int examples;    // procedural examples (twist, S-shape, bend, shear in turn)
  bool localised;  // two groups along the long axis
  double paper_sm, paper_proj, paper_total;  // Table 1, ms per step
};

std::vector<Points3> make_examples(const TetMesh& mesh, int count, int axis) {
  std::vector<Deformation> kinds(4);
  kinds[0].kind = DeformationKind::Twist;
  kinds[1].kind = DeformationKind::SShape;
  kinds[1].angle = 0.8;
  kinds[2].kind = DeformationKind::Bend;
  kinds[2].angle = 1.2;
  kinds[3].kind = DeformationKind::Shear;
  std::vector<Points3> out;
  for (int k = 0; k < count; ++k) {
    Deformation d = kinds[static_cast<std::size_t>(k)];
    d.axis = axis;
    d.direction = (axis + 1) % 3;
    out.push_back(deform(mesh.vertices, d));
  }
  return out;
}

struct Timing {
  double sm_ms, proj_ms;
};

/// Drops the body on a floor and times `steps` steps after `warmup` steps.
Timing time_body(const Model& model, bool with_examples, int steps) {
  BodySetup s;
  s.mesh = model.mesh;
  s.masses = lumped_masses(s.mesh, 1000.0);
  if (with_examples) s.examples = make_examples(model.mesh, model.examples, 1);
  if (with_examples && model.localised) {
    const double mid =
        0.5 * (s.mesh.vertices.col(1).minCoeff() + s.mesh.vertices.col(1).maxCoeff());
    for (Eigen::Index i = 0; i < s.mesh.vertices.rows(); ++i)
      s.groups.push_back(s.mesh.vertices(i, 1) < mid ? 0 : 1);
  }
  s.translation = Eigen::Vector3d(0.0, 0.3, 0.0);
  s.rotation = Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 0, 1).normalized()).toRotationMatrix();
  Scene scene;
  scene.params.planes.push_back(Plane{});
  scene.bodies.push_back(make_body(s));
  const double h = 1.0 / 300.0;
  for (int k = 0; k < 300; ++k) step_scene(scene, h);  // fall, hit the floor, wobble
  StepTimings t;
  t.clock = thread_seconds;
  for (int k = 0; k < steps; ++k) step_scene(scene, h, &t);
  return {1e3 * t.shape_matching / static_cast<double>(t.steps),
          1e3 * t.projection / static_cast<double>(t.steps)};
}

}  // namespace

int main() {
  // One core, as Table 1.
  tbb::global_control one_core(tbb::global_control::max_allowed_parallelism, 1);
  std::vector<Model> models;
  {
    BoxLatticeSpec b;  // the standard cuboid: 5 x 9 x 5
    b.nx = 5, b.ny = 9, b.nz = 5, b.tets_per_cell = 5;
    b.min_corner = {-0.25, 0.24, -0.25};
    b.max_corner = {0.25, 1.36, 0.25};
    models.push_back({"cuboid", box_lattice(b), 1, false, 0.21, 0.091, 0.33});
    models.push_back({"cuboid, localised", box_lattice(b), 1, true, 0.21, 0.17, 0.40});
    models.push_back({"cuboid, 4 examples", box_lattice(b), 4, false, 0.21, 0.091, 0.33});
  }
  {
    CylinderLatticeSpec c;  // 25 sections of 1 + 5 x 16 points = 2,025
    c.radius = 0.3, c.height = 2.0, c.rings = 5, c.segments = 16, c.layers = 24;
    models.push_back({"cylinder", cylinder_lattice(c), 2, false, 2.0, 0.86, 3.1});
  }
  {
    // The two-group character of configs/elastic/two_groups.json (the teddy's role): the Wuson
    // surface filled with 0.135 m cells (1,330 particles); a box with the teddy's particle count
    // when assimp-testmodels is not installed.
    const std::filesystem::path wuson = "/usr/share/assimp/models/OBJ/WusonOBJ.obj";
    if (std::filesystem::exists(wuson)) {
      VoxelLatticeSpec v;
      v.cell_size = 0.135;
      models.push_back({"teddy (Wuson, 2 groups)", voxel_lattice(load_obj(wuson), v).mesh, 2, true,
                        1.3, 0.72, 2.2});
    } else {
      BoxLatticeSpec b;
      b.nx = 8, b.ny = 16, b.nz = 10, b.tets_per_cell = 5;
      b.min_corner = {-0.35, 0.0, -0.45};
      b.max_corner = {0.35, 1.5, 0.45};
      models.push_back({"teddy (box, 2 groups)", box_lattice(b), 2, true, 1.3, 0.72, 2.2});
    }
  }
  {
    BoxLatticeSpec b;  // the car's particle count
    b.nx = 4, b.ny = 6, b.nz = 8, b.tets_per_cell = 5;
    b.min_corner = {-0.3, 0.0, -0.6};
    b.max_corner = {0.3, 0.5, 0.6};
    models.push_back({"car (box)", box_lattice(b), 3, false, 0.17, 0.078, 0.27});
  }
  std::printf(
      "Example-based shape matching, one core, CPU ms per step (h = 1/300 s, after 300 steps)\n");
  std::printf("%-24s %6s %3s | %7s %7s %7s %8s | %7s %7s %7s %8s | %8s %8s %9s\n", "model", "parts",
              "ex", "t_sm", "t_proj", "t_tot", "parts/ms", "paper", "paper", "paper", "parts/ms",
              "plain", "examples", "proj/sm");
  std::printf("%-24s %6s %3s | %7s %7s %7s %8s | %7s %7s %7s %8s | %8s %8s %9s\n", "", "", "",
              "ours", "ours", "ours", "ours", "t_sm", "t_proj", "t_tot", "paper", "parts/ms",
              "cost", "");
  for (const Model& m : models) {
    const auto n = static_cast<double>(m.mesh.vertices.rows());
    const int steps = n < 500 ? 3000 : 600;
    const Timing ex = time_body(m, true, steps);
    const Timing plain = time_body(m, false, steps);
    const double total = ex.sm_ms + ex.proj_ms, plain_total = plain.sm_ms + plain.proj_ms;
    std::printf(
        "%-24s %6.0f %3d | %7.4f %7.4f %7.4f %8.0f | %7.3f %7.3f %7.3f %8.0f | %8.0f %7.2fx "
        "%9.2f\n",
        m.name.c_str(), n, m.examples, ex.sm_ms, ex.proj_ms, total, n / total, m.paper_sm,
        m.paper_proj, m.paper_total, n / m.paper_total, n / plain_total, total / plain_total,
        ex.proj_ms / ex.sm_ms);
  }
  std::printf(
      "parts/ms = particles per millisecond of the full step; examples cost = example-based "
      "step time / plain shape matching step time (same body, same process)\n");
  return 0;
}
