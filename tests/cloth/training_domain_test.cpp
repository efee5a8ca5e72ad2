// The record of what a model's training runs spanned, against which upscale and evaluate warn
// (tests/cli/cloth_train_test.cpp runs it through the tools and the model file).

#include <doctest/doctest.h>

#include <algorithm>

#include "cloth/training_domain.hpp"

using namespace datadyn::cloth;

namespace {

const TrainingDomain::Range& range_of(const TrainingDomain& d, const std::string& key) {
  const auto it = std::find_if(d.ranges.begin(), d.ranges.end(),
                               [&](const TrainingDomain::Range& r) { return r.key == key; });
  REQUIRE(it != d.ranges.end());
  return *it;
}

std::vector<std::string> keys_outside(const TrainingDomain& d, const ClothParams& p) {
  std::vector<std::string> keys;
  for (const auto& o : d.outside(p)) keys.push_back(o.trained.key);
  return keys;
}

}  // namespace

TEST_CASE("training domain: the least and greatest of each quantity over the runs") {
  ClothParams a, b, c;
  REQUIRE(apply_scene_preset("flag", a));
  b = c = a;
  a.mass = 0.008;
  b.mass = 0.012;
  c.mass = 0.01;
  b.wind.velocity = {6.0, 0.0, -3.0};
  c.k_structural = 3000.0;
  const TrainingDomain d = TrainingDomain::of({&a, &b, &c});
  CHECK(d.ranges.size() == TrainingDomain::quantity_keys().size());
  CHECK(range_of(d, "mass").low == 0.008);
  CHECK(range_of(d, "mass").high == 0.012);
  CHECK(range_of(d, "k_structural").low == 2000.0);
  CHECK(range_of(d, "k_structural").high == 3000.0);
  CHECK(range_of(d, "wind.velocity.z").low == -3.0);
  CHECK(range_of(d, "wind.velocity.z").high == 1.5);
  CHECK(range_of(d, "wind.drag").low == 0.6);
  CHECK(range_of(d, "sphere.enabled").high == 0.0);
  CHECK(range_of(d, "sphere.enabled").flag);
  CHECK_FALSE(range_of(d, "mass").flag);

  // Every training run, and a run between them, is inside.
  for (const ClothParams* p : {&a, &b, &c}) CHECK(d.outside(*p).empty());
  ClothParams between = a;
  between.mass = 0.011;
  between.wind.velocity.z() = 0.0;
  CHECK(d.outside(between).empty());

  // Each quantity outside is named once, in the order of the keys, with its value.
  ClothParams far = a;
  far.mass = 0.02;
  far.wind.velocity = {-6.0, 0.0, -1.5};
  far.sphere.enabled = true;
  const auto out = d.outside(far);
  CHECK(keys_outside(d, far) ==
        std::vector<std::string>{"mass", "wind.velocity.x", "sphere.enabled"});
  REQUIRE(out.size() == 3);
  CHECK(out[0].value == 0.02);
  CHECK(out[1].value == -6.0);
  CHECK(out[2].trained.flag);
  CHECK(out[2].value == 1.0);

  // A last-bit difference (the runs' values come back from JSON text) is inside; 1e-6 is not.
  ClothParams rounded = b;
  rounded.mass = 0.012 * (1 + 1e-12);
  CHECK(d.outside(rounded).empty());
  rounded.mass = 0.012 * (1 + 1e-6);
  CHECK(keys_outside(d, rounded) == std::vector<std::string>{"mass"});
}

TEST_CASE("training domain: a model's record without a quantity does not judge it") {
  ClothParams a;
  TrainingDomain d = TrainingDomain::of({&a});
  d.ranges.erase(std::remove_if(d.ranges.begin(), d.ranges.end(),
                                [](const TrainingDomain::Range& r) { return r.key == "mass"; }),
                 d.ranges.end());
  ClothParams heavy = a;
  heavy.mass = 1.0;
  heavy.damping = 0.5;
  CHECK(keys_outside(d, heavy) == std::vector<std::string>{"damping"});
}
