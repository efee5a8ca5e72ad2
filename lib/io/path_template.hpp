#pragma once
/// @file
/// Output path templates for frame sequences, as render-farm tools write them: a run of `#`
/// (`name.####.obj`: frame zero-padded to the run's length) or a printf-style `%d` / `%04d`;
/// and `{sequence}` for the name of the exported sequence.

#include <cstdint>
#include <filesystem>
#include <string>

namespace datadyn::io {

/// Whether `path` has a frame token (`#`, `%d`, `%0Nd`) in its file name.
bool has_frame_token(const std::filesystem::path& path);

/// `path` with its frame token replaced by `frame`: `####` and `%04d` pad to 4 digits (1 ->
/// 0001, 12345 -> 12345, -3 -> -003), `%d` does not pad. Only the first token is replaced.
/// Throws UsageError naming the template if it has none, or a `%` that is not `%d`/`%0Nd`/`%%`.
std::filesystem::path expand_frame(const std::filesystem::path& path, std::int64_t frame);

/// `path` with `.####` inserted before its extension (`a/b.obj` -> `a/b.####.obj`), unless it
/// already has a frame token.
std::filesystem::path with_frame_token(const std::filesystem::path& path);

/// Replaces every `{sequence}` in `path` by `sequence`. With `insert` and no `{sequence}` in the
/// template, inserts `_<sequence>` after the first part of the file name (`out/body.####.obj` ->
/// `out/body_cloth.####.obj`), so that several sequences exported together do not collide.
std::filesystem::path expand_sequence(const std::filesystem::path& path,
                                      const std::string& sequence, bool insert);

/// `path` with its last extension replaced by `extension` (".obj"), keeping frame tokens.
std::filesystem::path replace_extension(const std::filesystem::path& path,
                                        const std::string& extension);

/// A side file of the cache `path`: `path` without a final `.h5`, then `suffix`
/// (`out/springs.h5`, `.report.json` -> `out/springs.report.json`; `out/run.v2` ->
/// `out/run.v2.report.json`). Every tool names its reports, pictures, checkpoints and feature
/// caches this way.
std::filesystem::path sidecar(const std::filesystem::path& path, const std::string& suffix);

}  // namespace datadyn::io
