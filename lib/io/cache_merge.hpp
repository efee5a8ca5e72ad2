#pragma once
/// @file
/// Merging the caches of a sharded run (`--shard K/N` on a farm) into one cache that equals the
/// single-machine run byte for byte (DESIGN "Scaling out"; docs/cache-format.md "Merging").

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/progress.hpp"

namespace datadyn::io {

struct MergeResult {
  std::size_t sequences = 0;        ///< sequences in the merged cache
  std::size_t frames = 0;           ///< frames summed over the sequences
  std::size_t split_sequences = 0;  ///< sequences whose frames came from more than one input
  /// Sequences whose merged frame numbers do not advance by one constant step (a shard missing
  /// or cut short by a failed task), as "name: frames 1-14,21-30".
  std::vector<std::string> gaps;
};

/// Merges shard outputs of one run into `output` (written atomically, in the canonical layout
/// every CacheWriter commits).
/// - Root attributes other than command_line and created_utc (the tool, its version and the
///   resolved config) must agree; created_utc is taken from the first input and command_line
///   from `command_line(first input's command line)`.
/// - A sequence in several inputs is concatenated along its frames in frame order: points and
///   grids arrays with per_frame = 1, and time and frame. Its static arrays and attributes must
///   agree. A group outside /sequences holding an int64 `frame` dataset is a per-frame table:
///   its datasets are concatenated the same way (rows are frames).
/// - Everything else must be identical wherever it appears, and is copied once.
/// Throws IoError naming the files and the dataset when inputs disagree, a frame appears twice,
/// or an input is damaged: every input is read through first as `check_cache` reads it (the
/// copy moves chunks undecoded, and would carry a damaged one or a NaN into the result).
/// `progress(done, total)` counts the per-frame chunks copied (one per frame of each per-frame
/// array of a sequence; `total`, counted from the inputs before the copy starts, is the same in
/// every call). It is called before each chunk and after each dataset, and may throw to stop the
/// merge (the tools' SIGINT/SIGTERM check); the temporary files are then removed. After the last
/// chunk the merged file is rewritten in the canonical layout and read back, without calls.
MergeResult merge_caches(const std::vector<std::filesystem::path>& inputs,
                         const std::filesystem::path& output,
                         const std::function<std::string(const std::string&)>& command_line,
                         const ProgressCallback& progress = {});

}  // namespace datadyn::io
