#include "cloth/training_domain.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace datadyn::cloth {

namespace {

struct Quantity {
  const char* key;
  std::function<double(const ClothParams&)> value;
  bool flag = false;  // shown as false/true
};

const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> q = {
      {"mass", [](const ClothParams& p) { return p.mass; }},
      {"k_structural", [](const ClothParams& p) { return p.k_structural; }},
      {"k_shear", [](const ClothParams& p) { return p.k_shear; }},
      {"k_bending", [](const ClothParams& p) { return p.k_bending; }},
      {"time_step", [](const ClothParams& p) { return p.time_step; }},
      {"substeps", [](const ClothParams& p) { return double(p.substeps); }},
      {"damping", [](const ClothParams& p) { return p.damping; }},
      {"gravity.x", [](const ClothParams& p) { return p.gravity.x(); }},
      {"gravity.y", [](const ClothParams& p) { return p.gravity.y(); }},
      {"gravity.z", [](const ClothParams& p) { return p.gravity.z(); }},
      {"wind.velocity.x", [](const ClothParams& p) { return p.wind.velocity.x(); }},
      {"wind.velocity.y", [](const ClothParams& p) { return p.wind.velocity.y(); }},
      {"wind.velocity.z", [](const ClothParams& p) { return p.wind.velocity.z(); }},
      {"wind.drag", [](const ClothParams& p) { return p.wind.drag; }},
      {"wind.drag_tangent", [](const ClothParams& p) { return p.wind.drag_tangent; }},
      {"wind.gust", [](const ClothParams& p) { return p.wind.gust; }},
      {"sphere.enabled", [](const ClothParams& p) { return double(p.sphere.enabled); }, true},
      {"ground.enabled", [](const ClothParams& p) { return double(p.ground.enabled); }, true},
  };
  return q;
}

}  // namespace

std::vector<std::string> TrainingDomain::quantity_keys() {
  std::vector<std::string> keys;
  for (const auto& q : quantities()) keys.emplace_back(q.key);
  return keys;
}

TrainingDomain TrainingDomain::of(const std::vector<const ClothParams*>& runs) {
  TrainingDomain d;
  for (const auto& q : quantities()) {
    Range r{q.key, q.value(*runs.front()), q.value(*runs.front()), q.flag};
    for (const ClothParams* p : runs) {
      r.low = std::min(r.low, q.value(*p));
      r.high = std::max(r.high, q.value(*p));
    }
    d.ranges.push_back(std::move(r));
  }
  return d;
}

std::vector<TrainingDomain::Departure> TrainingDomain::outside(const ClothParams& run) const {
  std::vector<Departure> out;
  for (const auto& q : quantities()) {
    const auto it =
        std::find_if(ranges.begin(), ranges.end(), [&](const Range& r) { return r.key == q.key; });
    if (it == ranges.end()) continue;  // not recorded by the model's writer
    const double v = q.value(run);
    const double slack = 1e-9 * std::max({std::abs(it->low), std::abs(it->high), 1e-300});
    if (v >= it->low - slack && v <= it->high + slack) continue;
    Range trained = *it;
    trained.flag = q.flag;
    out.push_back({trained, v});
  }
  return out;
}

}  // namespace datadyn::cloth
