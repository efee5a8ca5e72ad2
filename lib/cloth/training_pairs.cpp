#include "cloth/training_pairs.hpp"

#include "cloth/miniature.hpp"
#include "core/check.hpp"

namespace datadyn::cloth {

PatchPairs training_pairs(const std::vector<Points3>& target_frames, const MiniatureGrid& grid,
                          const PatchOptions& options) {
  std::vector<Points3> mini;
  mini.reserve(target_frames.size());
  for (const Points3& t : target_frames)
    mini.push_back(downsample_downscale(t, grid.target_nx(), grid.target_ny(), grid.factor));
  return training_pairs(target_frames, mini, grid, options);
}

PatchPairs training_pairs(const std::vector<Points3>& target_frames,
                          const std::vector<Points3>& mini, const MiniatureGrid& grid,
                          const PatchOptions& options) {
  DATADYN_CHECK_EQ(mini.size(), target_frames.size());
  PatchPairs pairs;
  const Eigen::Index per_frame = grid.patch_count();
  const Eigen::Index frames =
      target_frames.size() >= 3 ? static_cast<Eigen::Index>(target_frames.size()) : 0;
  pairs.x.resize(grid.input_size(), frames * per_frame);
  pairs.y.resize(grid.output_size(), frames * per_frame);
  for (Eigen::Index k = 0; k < frames; ++k) {
    const auto t = static_cast<std::size_t>(k);
    pairs.x.middleCols(k * per_frame, per_frame) =
        patch_inputs(mini[t >= 2 ? t - 2 : 0], mini[t >= 1 ? t - 1 : 0], mini[t], grid, options);
    pairs.y.middleCols(k * per_frame, per_frame) =
        patch_outputs(target_frames[t], mini[t], grid, options);
  }
  return pairs;
}

PatchPairs concatenate(const std::vector<PatchPairs>& parts) {
  PatchPairs all;
  Eigen::Index n = 0;
  for (const auto& p : parts) n += p.x.cols();
  if (parts.empty()) return all;
  all.x.resize(parts.front().x.rows(), n);
  all.y.resize(parts.front().y.rows(), n);
  Eigen::Index o = 0;
  for (const auto& p : parts) {
    all.x.middleCols(o, p.x.cols()) = p.x;
    all.y.middleCols(o, p.y.cols()) = p.y;
    o += p.x.cols();
  }
  return all;
}

}  // namespace datadyn::cloth
