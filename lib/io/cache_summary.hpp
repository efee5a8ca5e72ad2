#pragma once
/// @file
/// What a cache holds, for `dd-cache info`, and a full read of every dataset for `dd-cache check`.

#include <filesystem>
#include <functional>
#include <string>

namespace datadyn::io {

/// A human-readable listing: provenance, then each sequence with its frames, points, arrays,
/// topology, grids and attributes.
std::string cache_summary(const std::filesystem::path& path);

/// Reads every attribute and every dataset of every group (a group HDF5 cannot list, a chunk
/// that does not inflate), then opens every sequence (validating shapes, types, topology and
/// texture coordinate indices) and checks every frame of every per-frame array and grid for NaN and infinity.
/// Throws IoError naming the file, the object and, for frames, the frame. `on_sequence` is called
/// after each sequence is read (name, frames).
void check_cache(const std::filesystem::path& path,
                 const std::function<void(const std::string&, std::size_t)>& on_sequence = {});

}  // namespace datadyn::io
