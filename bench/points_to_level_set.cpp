// A level set from 100,000 particles at a voxel size of half the particle spacing (radius 2
// voxels = one spacing, half-width 3), timed side by side with Debian's `vdb_tool -points2ls` on
// the same particles, in one run:
//   kernel:  our level_set_from_particles against the "Points->SDF" time vdb_tool reports;
//   process: `mesh-export` (HDF5 cache -> .vdb) against `vdb_tool -read .ply -points2ls -write`,
//            both whole processes with their reading and writing;
//   and OpenVDB's ParticlesToLevelSet called in-process (the rasterizer vdb_tool uses).
// Medians of 5 interleaved runs. Ratios > 1 mean ours is faster.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/types.hpp"
#include "io/cache.hpp"
#include "io/mesh_formats.hpp"
#include "io/vdb_level_set.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Runs a shell command, returns its wall time in seconds and its stdout+stderr.
double run_timed(const std::string& command, std::string& output,
                 const std::filesystem::path& log) {
  const auto t0 = Clock::now();
  const int rc = std::system((command + " >" + log.string() + " 2>&1").c_str());
  const double t = seconds_since(t0);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  output = ss.str();
  if (rc != 0) {
    std::fprintf(stderr, "failed (%d): %s\n%s\n", rc, command.c_str(), output.c_str());
    std::exit(1);
  }
  return t;
}

/// vdb_tool -verbose prints "Points->SDF ... completed in 928.917 milliseconds" or "... in 1
/// second and 81.036 milliseconds (1081.036ms)".
double vdb_tool_kernel_seconds(const std::string& out) {
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(Points->SDF[^\n]*\(([0-9.]+)ms\))")) ||
      std::regex_search(out, m, std::regex(R"(Points->SDF[^\n]*in ([0-9.]+) milliseconds)")))
    return std::stod(m[1]) / 1000.0;
  std::fprintf(stderr, "no Points->SDF timing in vdb_tool's output:\n%s\n", out.c_str());
  std::exit(1);
}

}  // namespace

int main() {
  using namespace datadyn;
  const auto dir = std::filesystem::temp_directory_path() / "datadyn-bench-p2ls";
  std::filesystem::create_directories(dir);

  // 100,000 particles: a 50 x 50 x 40 lattice of spacing h, jittered by up to 10% (seed 1).
  const double h = 0.01, voxel = h / 2, radius = 2 * voxel;
  const int nx = 50, ny = 50, nz = 40;
  Points3 p(nx * ny * nz, 3);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> jitter(-0.1 * h, 0.1 * h);
  for (int k = 0, i = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int x = 0; x < nx; ++x, ++i)
        p.row(i) << x * h + jitter(rng), j * h + jitter(rng), k * h + jitter(rng);
  // Both sides read float32 positions: round them here so that they see the same particles.
  p = p.cast<float>().cast<double>();

  io::PolygonMesh cloud;
  cloud.points = p;
  io::write_ply(dir / "particles.ply", cloud);
  {
    io::CacheWriter w(dir / "particles.h5", {"bench", "", "{}", ""});
    auto& s = w.add_sequence("particles", {24.0, 3});
    s.append_frame(1, 0.0, {{"points/position", io::view(p)}});
    w.commit();
  }

  io::ParticleLevelSetParams params;
  params.voxel_size = voxel;
  params.radius = radius;
  const std::string vdb_tool = "vdb_tool -verbose -read " + (dir / "particles.ply").string() +
                               " -points2ls voxel=" + std::to_string(voxel) +
                               " radius=2 width=3 -write " + (dir / "vdb_tool.vdb").string();
  const std::string mesh_export = std::string(DATADYN_BIN_DIR) + "/mesh-export -q -i " +
                                  (dir / "particles.h5").string() + " -o " +
                                  (dir / "ours.vdb").string() +
                                  " --set level_set.voxel_size=" + std::to_string(voxel) +
                                  " --set level_set.radius=" + std::to_string(radius);

  std::vector<double> ours, reference, tool_kernel, tool_process, our_process;
  std::size_t active = 0, reference_active = 0;
  std::string out;
  for (int run = 0; run < 5; ++run) {
    auto t0 = Clock::now();
    params.rasterizer = io::ParticleRasterizer::Leaf;
    const auto a = io::level_set_from_particles(p, params);
    ours.push_back(seconds_since(t0));
    active = a.level_set.active_voxel_count();

    t0 = Clock::now();
    params.rasterizer = io::ParticleRasterizer::OpenVdb;
    const auto b = io::level_set_from_particles(p, params);
    reference.push_back(seconds_since(t0));
    reference_active = b.level_set.active_voxel_count();

    tool_process.push_back(run_timed(vdb_tool, out, dir / "log"));
    tool_kernel.push_back(vdb_tool_kernel_seconds(out));
    our_process.push_back(run_timed(mesh_export, out, dir / "log"));
  }
  run_timed("vdb_print -l " + (dir / "vdb_tool.vdb").string(), out, dir / "log");
  std::smatch m;
  std::string tool_active = "?";
  if (std::regex_search(out, m,
                        std::regex(R"(([0-9,]+) active voxels|active voxels:\s*([0-9,]+))")))
    tool_active = m[1].matched ? m[1].str() : m[2].str();
  run_timed("vdb_print -l -m " + (dir / "vdb_tool.vdb").string(), out, dir / "log");
  if (std::regex_search(out, m, std::regex(R"(file_voxel_count: ([0-9]+))"))) tool_active = m[1];

  const double k_ours = median(ours), k_ref = median(reference), k_tool = median(tool_kernel);
  const double p_tool = median(tool_process), p_ours = median(our_process);
  std::printf(
      "points_to_level_set: %d particles, voxel %.4g m (half the spacing), radius 2 "
      "voxels, half-width 3, %u hardware threads\n",
      static_cast<int>(p.rows()), voxel, std::thread::hardware_concurrency());
  std::printf("  active voxels: ours %zu, OpenVDB ParticlesToLevelSet %zu, vdb_tool %s\n", active,
              reference_active, tool_active.c_str());
  std::printf(
      "  kernel:  ours %.3f s, vdb_tool Points->SDF %.3f s: ratio %.2fx "
      "(OpenVDB ParticlesToLevelSet in-process %.3f s: %.2fx)\n",
      k_ours, k_tool, k_tool / k_ours, k_ref, k_ref / k_ours);
  std::printf("  process: mesh-export %.3f s, vdb_tool %.3f s: ratio %.2fx\n", p_ours, p_tool,
              p_tool / p_ours);
  std::filesystem::remove_all(dir);
  return 0;
}
