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
  pairs.x.resize(patch_input_size(options), frames * per_frame);
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

PairSet::PairSet(Eigen::Index input_size, Eigen::Index output_size, Eigen::Index capacity) {
  all_.x.resize(input_size, capacity);
  all_.y.resize(output_size, capacity);
}

void PairSet::append(const PatchPairs& pairs) {
  const Eigen::Index n = pairs.x.cols();
  if (n == 0) return;
  DATADYN_CHECK_EQ(pairs.x.rows(), all_.x.rows());
  DATADYN_CHECK_EQ(pairs.y.rows(), all_.y.rows());
  DATADYN_CHECK_LE(size_ + n, all_.x.cols());
  all_.x.middleCols(size_, n) = pairs.x;
  all_.y.middleCols(size_, n) = pairs.y;
  size_ += n;
}

PatchPairs PairSet::take() && {
  // Columns are contiguous (column-major): dropping the last ones keeps the others in place.
  all_.x.conservativeResize(Eigen::NoChange, size_);
  all_.y.conservativeResize(Eigen::NoChange, size_);
  return std::move(all_);
}

PatchPairs concatenate(const std::vector<PatchPairs>& parts) {
  if (parts.empty()) return {};
  Eigen::Index n = 0;
  for (const auto& p : parts) n += p.x.cols();
  PairSet all(parts.front().x.rows(), parts.front().y.rows(), n);
  for (const auto& p : parts) all.append(p);
  return std::move(all).take();
}

}  // namespace datadyn::cloth
