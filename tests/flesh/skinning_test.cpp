// Skinning against hand-computed poses, and the simulation against its own invariants.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include <nlohmann/json.hpp>

#include "flesh/flesh_simulation.hpp"
#include "flesh/skin_loader_io.hpp"
#include "flesh/skinning.hpp"
#include "support/file_bytes.hpp"
#include "support/io_error.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::flesh;

TEST_CASE("linear blend skinning matches hand-computed positions") {
  // Two bones along y; bone 1 (from y = 1) turned 90° about z, bone 0 moved by (1, 0, 0).
  BoneChain chain;
  chain.lengths = {1.0, 1.0};
  Eigen::Isometry3d T0 = Eigen::Isometry3d::Identity();
  T0.translation() = Eigen::Vector3d(1.0, 0.0, 0.0);
  Eigen::Isometry3d T1 = T0 * Eigen::Translation3d(0.0, 1.0, 0.0) *
                         Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitZ());
  const auto S = skinning_transforms(chain, {T0, T1});
  Points3 rest(2, 3);
  rest << 0.5, 1.5, 0.0,  // above the joint
      0.2, 1.0, 0.0;      // at the joint, half and half
  Eigen::MatrixXd W(2, 2);
  W << 0.0, 1.0, 0.5, 0.5;
  const Points3 x = linear_blend_skinning(rest, W, S);
  // Vertex 0: relative to the joint (0.5, 0.5) rotated by 90° -> (-0.5, 0.5), joint at (1, 1).
  CHECK((x.row(0) - Eigen::RowVector3d(0.5, 1.5, 0.0)).norm() < 1e-15);
  // Vertex 1: bone 0 gives (1.2, 1.0); bone 1 gives joint + R (0.2, 0) = (1, 1.2); the mean.
  CHECK((x.row(1) - Eigen::RowVector3d(1.1, 1.1, 0.0)).norm() < 1e-15);
  // Dual quaternions: a single bone is exactly rigid, the blend keeps the distance to the joint.
  const Points3 d = dual_quaternion_skinning(rest, W, S);
  CHECK((d.row(0) - x.row(0)).norm() < 1e-14);
  CHECK((d.row(1) - Eigen::RowVector3d(1.0, 1.0, 0.0)).norm() ==
        doctest::Approx(0.2).epsilon(1e-12));
}

TEST_CASE("chain weights are a smooth partition of unity") {
  BoneChain chain;  // joints at 0.3 and 0.6
  Points3 rest(7, 3);
  for (int i = 0; i < 7; ++i) rest.row(i) << 0.1, 0.15 * i, 0.0;
  const Eigen::MatrixXd W = chain_weights(chain, rest);
  for (int i = 0; i < 7; ++i) CHECK(W.row(i).sum() == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(W(0, 0) == 1.0);                   // y = 0: bone 0 only
  CHECK(W(2, 0) == doctest::Approx(0.5));  // y = 0.3, at joint 1: half and half
  CHECK(W(2, 1) == doctest::Approx(0.5));
  CHECK(W(6, 2) == 1.0);  // y = 0.9: bone 2 only
  CHECK(W.minCoeff() >= 0.0);
}

TEST_CASE("a body whose bones do not move stays in its quasistatic equilibrium") {
  FleshSimulationParams p;
  p.layers = 6;
  p.segments = 8;
  p.rings = 2;
  p.frames = 6;
  p.motion.amplitude = 0.0;
  p.iterations = 40;
  p.quasistatic_iterations = 60;
  const auto r = simulate_flesh(p);
  REQUIRE(r.dynamic.size() == 6);
  // Sagged by gravity: the equilibrium differs from the skinned pose...
  CHECK((r.quasistatic[5] - r.skinned[5]).cwiseAbs().maxCoeff() > 1e-4);
  // ...and the dynamic state stays on it (projective-dynamics convergence, ~1e-6 m).
  CHECK((r.dynamic[5] - r.quasistatic[5]).cwiseAbs().maxCoeff() < 1e-5);
  CHECK(r.triangles.maxCoeff() < r.rest.rows());
}

TEST_CASE("a body translating uniformly from the first frame stays undeformed") {
  // Galilean invariance: without gravity, bones moving at constant velocity carry the rest
  // shape along rigidly, and that is the exact solution of every projective-dynamics
  // iteration, so the dynamic state must equal the skinned one to rounding (1e-9 m over
  // ~1e5 operations on positions of order 1 m). A simulation starting at rest while the bones
  // already move would lag by millimetres.
  FleshSimulationParams p;
  p.layers = 6;
  p.segments = 8;
  p.rings = 3;
  p.frames = 12;
  p.gravity.setZero();
  const Eigen::Vector3d velocity(0.8, -0.3, 0.5);  // m/s
  p.motion.kind = "keyframes";
  for (const double t : {0.0, 1.0}) {
    ChainKeyframe k;
    k.time = t;
    k.root = velocity * t;
    k.joints.assign(p.chain.lengths.size(), Eigen::Quaterniond::Identity());
    p.motion.keyframes.push_back(k);
  }
  for (const auto model : {ElasticModel::Corotated, ElasticModel::NeoHookean}) {
    p.model = model;
    const auto r = simulate_flesh(p);
    for (int f = 0; f < p.frames; ++f) {
      INFO("frame " << f << ", model " << int(model));
      const Points3 expected = r.rest.rowwise() + (velocity * f / p.frame_rate).transpose();
      CHECK((r.skinned[f] - expected).cwiseAbs().maxCoeff() < 1e-9);
      CHECK((r.quasistatic[f] - expected).cwiseAbs().maxCoeff() < 1e-9);
      CHECK((r.dynamic[f] - expected).cwiseAbs().maxCoeff() < 1e-9);
    }
  }
}

TEST_CASE("a moving body lags behind its quasistatic target and the fit can see it") {
  FleshSimulationParams p;
  p.layers = 6;
  p.segments = 8;
  p.rings = 2;
  p.frames = 30;
  p.motion.kind = "shake";
  p.motion.frequency = 1.5;
  const auto r = simulate_flesh(p);
  double lag = 0.0;
  for (int f = 0; f < 30; ++f)
    lag = std::max(lag, (r.dynamic[f] - r.quasistatic[f]).cwiseAbs().maxCoeff());
  CHECK(lag > 1e-3);  // millimetres of secondary motion
  CHECK(lag < 0.1);   // and not a blow-up
  MESSAGE("max lag " << lag << " m");
}

TEST_CASE("linear blend skinning of simple_skin.gltf matches hand-computed positions") {
  // Khronos' SimpleSkin (Debian assimp-testmodels): a 1 x 2 strip of 10 vertices, joint 1 at
  // the origin node translated by (0, 1, 0), joint 2 its child, both with inverse bind
  // translation (-0.5, -1, 0); at t = 1 s joint 2 is turned 90° about z. glTF places a skinned
  // mesh by its joints alone, so at rest the strip's mesh-space vertex (x, y) is at
  // (x - 0.5, y): joint 1's translation times its inverse bind matrix.
  const std::filesystem::path file = "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf";
  if (!std::filesystem::exists(file)) {
    MESSAGE("assimp-testmodels not installed: skipped");
    return;
  }
  const LoadedSkin skin = load_skin(file, 1.0);
  REQUIRE(skin.rest.rows() == 10);
  REQUIRE(skin.transforms.size() == 2);
  for (int i = 0; i < 10; ++i) CHECK(skin.weights.row(i).sum() == doctest::Approx(1.0));
  // Both joints sit at the inverse of their bind translation, (0.5, 1, 0) in the mesh's space,
  // at rest (0, 1, 0); joint 2 is the child of joint 1.
  REQUIRE(skin.joints.size() == 2);
  for (const auto& j : skin.joints) CHECK((j - Eigen::Vector3d(0.0, 1.0, 0.0)).norm() < 1e-12);
  CHECK(skin.parents == std::vector<int>{-1, 0});
  const Points3 x = linear_blend_skinning(skin.rest, skin.weights, skin.transforms);
  // Find the rest vertices by position (the importer may reorder) and check by hand:
  //   (1, 2, 0), weights (0, 1):     R90 ((1, 2) - (0.5, 1)) + (0, 1) = (-1, 1.5)
  //   (0, 1, 0), weights (0.5, 0.5): ½ (-0.5, 1) + ½ (R90 (-0.5, 0) + (0, 1)) = (-0.25, 0.75)
  //   (0, 0, 0), weights (1, 0):     (-0.5, 0)
  const auto at = [&](double px, double py) -> Eigen::RowVector3d {
    for (Eigen::Index i = 0; i < skin.rest.rows(); ++i)
      if ((skin.rest.row(i) - Eigen::RowVector3d(px - 0.5, py, 0)).norm() < 1e-6) return x.row(i);
    FAIL("no rest vertex at " << px << ", " << py);
    return Eigen::RowVector3d::Zero();
  };
  // float32 file data: 1e-6.
  CHECK((at(1, 2) - Eigen::RowVector3d(-1.0, 1.5, 0.0)).norm() < 1e-6);
  CHECK((at(0, 1) - Eigen::RowVector3d(-0.25, 0.75, 0.0)).norm() < 1e-6);
  CHECK((at(0, 0) - Eigen::RowVector3d(-0.5, 0.0, 0.0)).norm() < 1e-6);
}

TEST_CASE("an FBX skin is posed in its scene, in metres with Y up") {
  // huesitos.fbx (Debian assimp-testmodels): Blender's Z-up data under a root rotation and a
  // scale of 100 (1 unit = 1 cm), placed 3.3 m from the origin. Its animation starts at the
  // bind pose: the skinned mesh at t = 0 must stay within 3 % of its size of the rest mesh
  // (measured 1.8 %: the first key is not exactly the bind pose).
  const std::filesystem::path file = "/usr/share/assimp/models/FBX/huesitos.fbx";
  if (!std::filesystem::exists(file)) {
    MESSAGE("assimp-testmodels not installed: skipped");
    return;
  }
  const LoadedSkin skin = load_skin_animation(file, {0.0, 1.0});
  REQUIRE(skin.motion.size() == 2);
  const Eigen::Vector3d extent = skin.rest.colwise().maxCoeff() - skin.rest.colwise().minCoeff();
  const double size = extent.maxCoeff();
  CHECK(size == doctest::Approx(5.4).epsilon(0.05));  // metres: 5.4 Blender units
  // Its weights sum to 0.95-1.4 (spring-fit divides them by the sum, as Blender does): away
  // from the origin unnormalised weights would move the skin by that factor.
  Eigen::MatrixXd weights = skin.weights;
  for (Eigen::Index v = 0; v < weights.rows(); ++v) weights.row(v) /= weights.row(v).sum();
  const Points3 x0 = linear_blend_skinning(skin.rest, weights, skin.motion[0]);
  const Points3 x1 = linear_blend_skinning(skin.rest, weights, skin.motion[1]);
  MESSAGE("huesitos at t = 0: " << (x0 - skin.rest).rowwise().norm().maxCoeff() / size
                                << " of its size from the rest mesh");
  CHECK((x0 - skin.rest).rowwise().norm().maxCoeff() < 0.03 * size);
  CHECK((x1 - skin.rest).rowwise().norm().maxCoeff() > 0.1 * size);  // and it moves
  CHECK(skin.transforms.size() == skin.joints.size());
  CHECK(std::count(skin.parents.begin(), skin.parents.end(), -1) >= 1);
  CHECK(skin.axes == "declared +y up, +x right, 1 unit = 1.000000 cm: converted to metres, +y up");
}

TEST_CASE("a rig from Blender, in three exports, is where Blender puts it at every frame") {
  // data/rigs/make_bend_rig.py: a rig whose armature object is moved, turned and scaled, exported
  // as FBX with Blender's defaults, as FBX with Z up, and as glTF, with Blender's own world
  // positions of the rest pose and frames 1, 8 and 16 (converted to Y up). Blender deforms by
  // linear blend skinning with each vertex's weights divided by their sum; so does the test. The
  // files hold float32 and baked keys on every frame: 2e-5 m covers their rounding (measured
  // below 4e-6).
  const std::filesystem::path dir = std::filesystem::path(DATADYN_DATA_DIR) / "rigs";
  std::ifstream in(dir / "bend_rig_blender.json");
  REQUIRE(in);
  const auto reference = nlohmann::json::parse(in);
  const auto points = [](const nlohmann::json& rows) {
    Points3 p(static_cast<Eigen::Index>(rows.size()), 3);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (int d = 0; d < 3; ++d) p(static_cast<Eigen::Index>(i), d) = rows[i][d].get<double>();
    return p;
  };
  const Points3 rest = points(reference["rest"]);
  std::vector<double> times;
  for (const int f : reference["frames"]) times.push_back((f - 1) / 24.0);
  for (const char* name : {"bend_rig.fbx", "bend_rig_zup.fbx", "bend_rig.glb"}) {
    INFO(name);
    const LoadedSkin skin = load_skin_animation(dir / name, times);
    REQUIRE(skin.motion.size() == times.size());
    Eigen::MatrixXd weights = skin.weights;
    for (Eigen::Index v = 0; v < weights.rows(); ++v) weights.row(v) /= weights.row(v).sum();
    // The files split vertices at UV seams: each of their vertices is one of Blender's.
    std::vector<Eigen::Index> blender(static_cast<std::size_t>(skin.rest.rows()), -1);
    double worst_rest = 0, worst_pose = 0;
    for (Eigen::Index v = 0; v < skin.rest.rows(); ++v) {
      Eigen::Index b = 0;
      worst_rest =
          std::max(worst_rest, (rest.rowwise() - skin.rest.row(v)).rowwise().norm().minCoeff(&b));
      blender[static_cast<std::size_t>(v)] = b;
    }
    for (std::size_t k = 0; k < times.size(); ++k) {
      const Points3 posed = points(reference["posed"][k]);
      const Points3 x = linear_blend_skinning(skin.rest, weights, skin.motion[k]);
      for (Eigen::Index v = 0; v < x.rows(); ++v)
        worst_pose = std::max(worst_pose,
                              (x.row(v) - posed.row(blender[static_cast<std::size_t>(v)])).norm());
    }
    MESSAGE(name << ": rest off by " << worst_rest << " m, poses by " << worst_pose << " m");
    CHECK(worst_rest < 2e-5);
    CHECK(worst_pose < 2e-5);
    // Every one of Blender's vertices is in the file.
    std::vector<char> seen(static_cast<std::size_t>(rest.rows()), 0);
    for (const auto b : blender) seen[static_cast<std::size_t>(b)] = 1;
    CHECK(std::count(seen.begin(), seen.end(), 1) == rest.rows());
  }
}

TEST_CASE("an FBX that declares a left-handed frame is mirrored into ours, its faces still out") {
  // bend_rig.fbx declares +y up, +x right and +z front (right-handed). The same file declaring
  // -z front holds the same numbers in a left-handed frame: its character is the mirror image in
  // z of the first, at rest and in every pose, and its triangles are wound the other way round so
  // that they still face out.
  const std::filesystem::path dir = std::filesystem::path(DATADYN_DATA_DIR) / "rigs";
  std::string bytes = test::file_bytes(dir / "bend_rig.fbx");
  // The property record: name, then the strings "int", "Integer", "", then 'I' and the value.
  const std::string name = "FrontAxisSign";
  const std::size_t at = bytes.find(name);
  REQUIRE(at != std::string::npos);
  const std::string value = std::string("I\x01\x00\x00\x00", 5);
  const std::size_t v = bytes.find(value, at);
  REQUIRE(v != std::string::npos);
  REQUIRE(v - at < 40);
  bytes.replace(v + 1, 4, std::string("\xff\xff\xff\xff", 4));
  test::TempDir tmp;
  const auto left = tmp.path() / "bend_rig_left.fbx";
  std::ofstream(left, std::ios::binary) << bytes;
  const std::vector<double> times{0.0, 7 / 24.0, 15 / 24.0};
  const LoadedSkin right_handed = load_skin_animation(dir / "bend_rig.fbx", times);
  const LoadedSkin mirrored = load_skin_animation(left, times);
  CHECK_FALSE(right_handed.mirrored);
  CHECK(mirrored.mirrored);
  CHECK(mirrored.axes.find("-z front (left-handed: mirrored)") != std::string::npos);
  const Eigen::Vector3d flip(1, 1, -1);
  // The same arithmetic on the same float32 numbers but for one sign: 1e-9 m covers rounding.
  CHECK((mirrored.rest - right_handed.rest * flip.asDiagonal()).cwiseAbs().maxCoeff() < 1e-9);
  REQUIRE(mirrored.triangles.rows() == right_handed.triangles.rows());
  for (Eigen::Index t = 0; t < mirrored.triangles.rows(); ++t) {
    CHECK(mirrored.triangles(t, 0) == right_handed.triangles(t, 0));
    CHECK(mirrored.triangles(t, 1) == right_handed.triangles(t, 2));
    CHECK(mirrored.triangles(t, 2) == right_handed.triangles(t, 1));
  }
  for (std::size_t k = 0; k < times.size(); ++k) {
    const Points3 a =
        linear_blend_skinning(right_handed.rest, right_handed.weights, right_handed.motion[k]);
    const Points3 b = linear_blend_skinning(mirrored.rest, mirrored.weights, mirrored.motion[k]);
    CHECK((b - a * flip.asDiagonal()).cwiseAbs().maxCoeff() < 1e-9);
  }
  // The outward normal of the mirrored mesh's first triangle is the mirror of the original's.
  const auto normal = [](const LoadedSkin& s) {
    const Eigen::Vector3d p0 = s.rest.row(s.triangles(0, 0)).transpose();
    const Eigen::Vector3d p1 = s.rest.row(s.triangles(0, 1)).transpose();
    const Eigen::Vector3d p2 = s.rest.row(s.triangles(0, 2)).transpose();
    return Eigen::Vector3d((p1 - p0).cross(p2 - p0).normalized());
  };
  CHECK((normal(mirrored) - flip.asDiagonal() * normal(right_handed)).norm() < 1e-6);
}

TEST_CASE("a BVH whose frame count or frame time is impossible is refused, naming file and line") {
  // assimp took Frame Time 0 or -1 (the capture sampled at an infinite or negative rate, exit
  // 0), and read "Frames: -4" as 4e9 frames to reserve ("cannot read the motion:
  // std::bad_alloc").
  test::TempDir dir;
  const auto bvh = [&](const std::string& name, const std::string& frames,
                       const std::string& frame_time) {
    const auto path = dir / name;
    std::ofstream(path) << "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition "
                           "Yposition Zposition Zrotation Xrotation Yrotation\n  End Site\n  {\n"
                           "    OFFSET 0 5 0\n  }\n}\nMOTION\nFrames: "
                        << frames << "\nFrame Time: " << frame_time
                        << "\n0 0 0 0 0 0\n0 0 0 5 0 0\n0 0 0 10 0 0\n";
    return path;
  };
  const auto message = [](const std::filesystem::path& path) {
    return test::io_error_message([&] { load_chain_motion(path, "Hips", {}, 1.0, 0.0, 30.0, 3); });
  };
  // The header is on lines 12 (Frames) and 13 (Frame Time); 3 frames of 6 values follow.
  const auto good = bvh("good.bvh", "3", "0.0333333");
  CHECK(message(good) == "(no IoError)");
  for (const char* time : {"0", "-1", "1e-300", "nan"}) {
    CAPTURE(time);
    const auto path = bvh("time.bvh", "3", time);
    CHECK(message(path) == path.string() + ": cannot read the motion: " + path.string() +
                               ":13 - Frame Time is " + time +
                               ", expected seconds per frame in [1e-06, 1000] (0.0333333 for 30 "
                               "fps)");
  }
  for (const char* frames : {"-4", "0", "2.5", "4000000000"}) {
    CAPTURE(frames);
    const auto path = bvh("frames.bvh", frames, "0.0333333");
    CHECK(message(path) == path.string() + ": cannot read the motion: " + path.string() +
                               ":12 - Frames is " + frames +
                               ", expected a whole number of frames from 1 to the 18 values that "
                               "follow the header");
  }
}
