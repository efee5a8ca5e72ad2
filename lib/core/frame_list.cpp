#include "core/frame_list.hpp"

namespace datadyn {

std::string frame_list_text(const std::vector<std::int64_t>& frames) {
  std::string text;
  for (std::size_t i = 0; i < frames.size();) {
    std::size_t last = i;
    std::int64_t step = 1;
    if (i + 1 < frames.size()) {
      step = frames[i + 1] - frames[i];
      last = i + 1;
      while (last + 1 < frames.size() && frames[last + 1] - frames[last] == step) ++last;
      if (step != 1 && last == i + 1) last = i;  // "4,6", not "4-6x2"
    }
    text += (text.empty() ? "" : ",") + std::to_string(frames[i]);
    if (last > i) {
      text += "-" + std::to_string(frames[last]);
      if (step != 1) text += "x" + std::to_string(step);
    }
    i = last + 1;
  }
  return text;
}

}  // namespace datadyn
