#include "io/point_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"

namespace datadyn::io {

namespace {

/// Appends a 4-byte value in the given byte order.
template <class T>
void put(std::string& out, T v, std::endian order) {
  static_assert(sizeof(T) == 4);
  unsigned char b[4];
  std::memcpy(b, &v, 4);
  if (order != std::endian::native) std::reverse(b, b + 4);
  out.append(reinterpret_cast<const char*>(b), 4);
}

std::int32_t checked_count(const std::filesystem::path& path, std::size_t n, const char* what) {
  if (n == 0 || n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw IoError(path.string() + ": " + what + ": expected 1 to 2^31-1, got " + std::to_string(n));
  return static_cast<std::int32_t>(n);
}

void put_frame(AtomicFile& file, const Eigen::Ref<const Points3>& x, std::size_t points,
               std::size_t index, std::size_t total, std::endian order) {
  if (static_cast<std::size_t>(x.rows()) != points)
    throw IoError(file.path().string() + ": frame " + std::to_string(index + 1) + ": expected " +
                  std::to_string(points) + " points (the cache has a fixed point count), got " +
                  std::to_string(x.rows()));
  if (index >= total)
    throw IoError(file.path().string() + ": more frames than the " + std::to_string(total) +
                  " announced in the header");
  std::string buf;
  buf.reserve(points * 12);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (int d = 0; d < 3; ++d) put(buf, static_cast<float>(x(i, d)), order);
  file.write(buf);
}

void finish(AtomicFile& file, std::size_t written, std::size_t total) {
  if (written != total)
    throw IoError(file.path().string() + ": " + std::to_string(written) +
                  " frames written, the header announces " + std::to_string(total));
  file.commit();
}

}  // namespace

Pc2Writer::Pc2Writer(const std::filesystem::path& path, std::size_t points, std::size_t samples,
                     double start_frame, double sample_rate)
    : points_(points), samples_(samples) {
  const std::int32_t np = checked_count(path, points, "points");
  const std::int32_t ns = checked_count(path, samples, "samples");
  file_ = std::make_unique<AtomicFile>(path);
  std::string h("POINTCACHE2\0", 12);
  put(h, std::int32_t{1}, std::endian::little);
  put(h, np, std::endian::little);
  put(h, static_cast<float>(start_frame), std::endian::little);
  put(h, static_cast<float>(sample_rate), std::endian::little);
  put(h, ns, std::endian::little);
  file_->write(h);
}

Pc2Writer::~Pc2Writer() = default;

void Pc2Writer::write_frame(const Eigen::Ref<const Points3>& positions) {
  put_frame(*file_, positions, points_, written_, samples_, std::endian::little);
  ++written_;
}

void Pc2Writer::commit() {
  finish(*file_, written_, samples_);
}

MddWriter::MddWriter(const std::filesystem::path& path, std::size_t points,
                     const std::vector<double>& times)
    : points_(points), frames_(times.size()) {
  const std::int32_t np = checked_count(path, points, "points");
  const std::int32_t nf = checked_count(path, times.size(), "frames");
  file_ = std::make_unique<AtomicFile>(path);
  std::string h;
  put(h, nf, std::endian::big);
  put(h, np, std::endian::big);
  for (double t : times) put(h, static_cast<float>(t), std::endian::big);
  file_->write(h);
}

MddWriter::~MddWriter() = default;

void MddWriter::write_frame(const Eigen::Ref<const Points3>& positions) {
  put_frame(*file_, positions, points_, written_, frames_, std::endian::big);
  ++written_;
}

void MddWriter::commit() {
  finish(*file_, written_, frames_);
}

}  // namespace datadyn::io
