#pragma once
/// @file
/// Point caches for fixed-topology animation, written one frame at a time (memory: one frame):
///
///   PC2 (little-endian): char[12] "POINTCACHE2\0"; int32 version = 1; int32 numPoints;
///       float32 startFrame; float32 sampleRate; int32 numSamples;
///       then numSamples x numPoints x float32[3].
///   MDD (big-endian throughout): int32 numFrames; int32 numPoints; float32 times[numFrames];
///       then numFrames x numPoints x float32[3] (no rest-pose block).
///
/// Both pair with a mesh of the same vertex order (the frame-1 OBJ); Blender's Mesh Cache
/// modifier, Houdini's File SOP and Maya's geometry cache read them. The sample count is fixed in
/// the header, so commit() fails unless exactly that many frames were written: a short cache is
/// never left under the real name.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::io {

class AtomicFile;

/// Streams a PC2 file.
class Pc2Writer {
 public:
  /// @param points       vertices per frame, > 0
  /// @param samples      frames that will be written, > 0
  /// @param start_frame  frame number of the first sample
  /// @param sample_rate  frames between samples (1: every frame)
  Pc2Writer(const std::filesystem::path& path, std::size_t points, std::size_t samples,
            double start_frame, double sample_rate);
  ~Pc2Writer();
  /// Appends one frame, #points by 3 (metres). Throws IoError on a wrong row count or too many
  /// frames.
  void write_frame(const Eigen::Ref<const Points3>& positions);
  void commit();

 private:
  std::unique_ptr<AtomicFile> file_;
  std::size_t points_, samples_, written_ = 0;
};

/// Streams an MDD file.
class MddWriter {
 public:
  /// @param points  vertices per frame, > 0
  /// @param times   seconds of every frame that will be written (its size is the frame count)
  MddWriter(const std::filesystem::path& path, std::size_t points,
            const std::vector<double>& times);
  ~MddWriter();
  void write_frame(const Eigen::Ref<const Points3>& positions);
  void commit();

 private:
  std::unique_ptr<AtomicFile> file_;
  std::size_t points_, frames_, written_ = 0;
};

}  // namespace datadyn::io
