// MPS weight and lattice constants against their values in the MPS literature.

#include <doctest/doctest.h>

#include <initializer_list>

#include "fluid/mps_kernel.hpp"

using namespace datadyn::fluid;

TEST_CASE("mps weight: r_e/r - 1 inside the radius, 0 outside") {
  CHECK(mps_weight(1.0, 2.1) == doctest::Approx(1.1));
  CHECK(mps_weight(2.0, 2.1) == doctest::Approx(0.05));
  CHECK(mps_weight(2.1, 2.1) == 0.0);
  CHECK(mps_weight(5.0, 2.1) == 0.0);
}

TEST_CASE("lattice n0 and lambda match the reference values (2D, l0 = 1)") {
  // The literature's values to 6 decimals (eqs. 3 and 11 summed over the lattice's neighbours by
  // hand); the sums here are exact up to rounding.
  const auto d = lattice_constants(2.1, 1.0, 2);
  CHECK(d.neighbours == 12);
  CHECK(d.n0 == doctest::Approx(6.539697).epsilon(1e-7));
  CHECK(d.lambda == doctest::Approx(1.388351).epsilon(1e-7));
  const auto l = lattice_constants(3.1, 1.0, 2);
  CHECK(l.neighbours == 28);
  CHECK(l.n0 == doctest::Approx(18.976417).epsilon(1e-7));
  CHECK(l.lambda == doctest::Approx(2.448472).epsilon(1e-7));
}

TEST_CASE("lattice constants rescale: n0 is invariant, lambda scales with l0^2") {
  for (double l0 : {1e-6, 0.005, 0.025, 1e6}) {
    INFO("l0 = " << l0);
    const auto c = lattice_constants(3.1 * l0, l0, 2);
    CHECK(c.neighbours == 28);
    CHECK(c.n0 == doctest::Approx(18.976417).epsilon(1e-7));
    CHECK(c.lambda / (l0 * l0) == doctest::Approx(2.448472).epsilon(1e-7));
  }
}
