#pragma once
/// @file
/// Training pairs of the upscaling network from one target sequence (Lee, Oh, Lee 2019, sec. 3.2,
/// table 2): each target frame is reduced to its miniature by DSDS; for every frame t and every
/// 2 x 2 miniature patch, the input is the patch over frames t-2, t-1, t (eq. 2; frames before
/// the first are the first, as upscale takes them) and the output the target patch at t (eq. 3).

#include <vector>

#include <Eigen/Core>

#include "cloth/upscale.hpp"
#include "core/types.hpp"

namespace datadyn::cloth {

struct PatchPairs {
  Eigen::MatrixXf x;  ///< #patch_input_size(options) by #pairs, target metres
  Eigen::MatrixXf y;  ///< #3(f+1)^2 by #pairs, target metres
};

/// Pairs of a target sequence (frames #target_nx*target_ny by 3 each), frame by frame, patches
/// row by row. Sequences shorter than 3 frames give no pairs (they have no motion to learn).
PatchPairs training_pairs(const std::vector<Points3>& target_frames, const MiniatureGrid& grid,
                          const PatchOptions& options);

/// The pairs of several sequences in one set, one after another in the order appended. Room for
/// `capacity` pairs (an upper bound: each sequence's frames times its patches) is taken up front,
/// so that joining the sequences holds each pair once, not a second time in a copy.
class PairSet {
 public:
  PairSet(Eigen::Index input_size, Eigen::Index output_size, Eigen::Index capacity);
  /// @pre the sizes match, and the pairs appended stay within the capacity
  void append(const PatchPairs& pairs);
  /// The pairs appended, the unused room released.
  PatchPairs take() &&;

 private:
  PatchPairs all_;
  Eigen::Index size_ = 0;
};

/// The pairs of several sequences one after another, in the order given.
PatchPairs concatenate(const std::vector<PatchPairs>& parts);

/// Pairs whose inputs come from given miniature frames (#mx*my by 3 each, miniature metres, one per
/// target frame), e.g. the miniature simulated alongside the target rather than its DSDS.
/// @pre mini_frames.size() == target_frames.size()
PatchPairs training_pairs(const std::vector<Points3>& target_frames,
                          const std::vector<Points3>& mini_frames, const MiniatureGrid& grid,
                          const PatchOptions& options);

}  // namespace datadyn::cloth
