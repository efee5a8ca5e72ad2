// Cache write and read throughput against a raw binary file of the same data written with
// fwrite, measured in one run: the ratio says what the HDF5 layout (chunking, shuffle, deflate,
// atomic rename) costs over the cheapest possible dump.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/types.hpp"
#include "io/cache.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  using namespace datadyn;
  const int frames = 200, n = 50000;
  const auto dir = std::filesystem::temp_directory_path() / "datadyn-bench-cache";
  std::filesystem::create_directories(dir);
  std::vector<Points3> data;
  for (int f = 0; f < 4; ++f) {
    Points3 p(n, 3);
    for (int i = 0; i < n; ++i) p.row(i) << 0.01 * i, std::sin(0.001 * i + f), std::cos(0.002 * i);
    data.push_back(p);
  }
  const double mb = frames * n * 3 * 4 / 1e6;

  auto t0 = std::chrono::steady_clock::now();
  {
    std::FILE* f = std::fopen((dir / "raw.bin").c_str(), "wb");
    std::vector<float> buf(static_cast<std::size_t>(n) * 3);
    for (int k = 0; k < frames; ++k) {
      const Points3& p = data[k % 4];
      for (int i = 0; i < n * 3; ++i) buf[static_cast<std::size_t>(i)] = static_cast<float>(p.data()[i]);
      std::fwrite(buf.data(), 4, buf.size(), f);
    }
    std::fclose(f);
  }
  const double raw_write = seconds_since(t0);

  for (int level : {0, 1, 4}) {
    t0 = std::chrono::steady_clock::now();
    const auto path = dir / ("cache" + std::to_string(level) + ".h5");
    {
      io::CacheWriter w(path, {"bench", "", "{}", ""}, io::WriteOptions{level});
      auto& s = w.add_sequence("s", {24.0, 3});
      for (int k = 0; k < frames; ++k)
        s.append_frame(k, k / 24.0, {{"points/position", io::view(data[k % 4])}});
      w.commit();
    }
    const double write = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    io::CacheReader r(path);
    const auto s = r.sequence("s");
    double sum = 0;
    for (std::size_t k = 0; k < s.frame_count(); ++k) sum += s.read_frame<float>("points/position", k).data[5];
    const double read = seconds_since(t0);
    std::printf("deflate %d: write %.0f MB/s (%.2fx raw fwrite), read %.0f MB/s, file %.1f MB of %.1f MB (checksum %.3f)\n",
                level, mb / write, raw_write / write, mb / read,
                std::filesystem::file_size(path) / 1e6, mb, sum);
  }
  std::printf("raw fwrite: %.0f MB/s\n", mb / raw_write);
  std::filesystem::remove_all(dir);
  return 0;
}
