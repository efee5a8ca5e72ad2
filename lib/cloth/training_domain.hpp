#pragma once
/// @file
/// What the runs a model was trained on spanned, quantity by quantity, so that upscaling a run
/// outside it can say so. The network answers only for motions like those it learned: Lee, Oh,
/// Lee 2019 (sec. 6, fig. 15) show wrong wrinkles for wind from a direction the training data
/// did not have. The quantities are those a run sets (mass, spring constants, time step, damping,
/// gravity, wind, colliders); the grid's size is not one, as the patches do not see it.

#include <string>
#include <vector>

#include "cloth/cloth_params.hpp"

namespace datadyn::cloth {

struct TrainingDomain {
  struct Range {
    std::string key;  ///< as in the config: "mass", "wind.velocity.x", "sphere.enabled"
    double low = 0.0, high = 0.0;
    bool flag = false;  ///< 0 or 1 for false or true
  };
  /// A quantity of a run outside the range the model was trained on.
  struct Departure {
    Range trained;
    double value = 0.0;
  };
  std::vector<Range> ranges;  ///< every quantity of quantity_keys(), in its order

  /// The least and greatest value of every quantity over `runs`. @pre runs not empty
  static TrainingDomain of(const std::vector<const ClothParams*>& runs);
  /// The quantities, in the order of `ranges`.
  static std::vector<std::string> quantity_keys();
  /// The quantities of `run` outside their ranges, in the order of `ranges`. A value within
  /// 1e-9 of the range's scale counts as inside (the runs' values come back from JSON text).
  /// Keys the domain does not hold (a model written before a quantity was recorded) are skipped.
  std::vector<Departure> outside(const ClothParams& run) const;
};

}  // namespace datadyn::cloth
