// The drawn target curve of wave-edit: an SVG's first polyline or straight path, with the
// transforms an editor wraps it in (Inkscape puts a layer's offset on its <g>).

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "wave/svg_curve.hpp"

using datadyn::wave::svg_curve;

namespace {

/// Whether `got` holds the points `want` (x0, y0, x1, y1, ...) to 1e-12: the arithmetic of a
/// few products and sums on numbers near 1.
bool same(const std::vector<Eigen::Vector2d>& got, const std::vector<double>& want) {
  if (got.size() * 2 != want.size()) return false;
  for (std::size_t k = 0; k < got.size(); ++k)
    if (std::abs(got[k].x() - want[2 * k]) > 1e-12 ||
        std::abs(got[k].y() - want[2 * k + 1]) > 1e-12)
      return false;
  return true;
}

/// An SVG document around `body`.
std::string svg(const std::string& body) {
  return "<svg>" + body + "</svg>";
}

}  // namespace

TEST_CASE("svg curve: polylines and straight paths, absolute and relative") {
  CHECK(same(svg_curve(svg("<polyline points='0,-0.12 0.08,-0.22 0.16,-0.12'/>")),
             {0, -0.12, 0.08, -0.22, 0.16, -0.12}));
  CHECK(same(svg_curve(svg("<path d='M0,-0.12 L0.08,-0.22 L0.16,-0.12'/>")),
             {0, -0.12, 0.08, -0.22, 0.16, -0.12}));
  // Inkscape's relative form, implicit linetos after a moveto, H and V, numbers run together.
  CHECK(same(svg_curve(svg("<path d='m 0,-0.12 0.08,-0.1 0.08,0.1'/>")),
             {0, -0.12, 0.08, -0.22, 0.16, -0.12}));
  CHECK(same(svg_curve(svg("<path d='M0-0.12H0.08V-0.22h0.08v0.1'/>")),
             {0, -0.12, 0.08, -0.12, 0.08, -0.22, 0.16, -0.22, 0.16, -0.12}));
  CHECK(same(svg_curve(svg("<path d='M.5.5 1e-1,2E1'/>")), {0.5, 0.5, 0.1, 20}));
}

TEST_CASE("svg curve: the transforms of the element and its groups apply, in SVG's order") {
  // translate(0, -0.03) on a group: every y 0.03 lower (the report's targets were 0.03 m off).
  CHECK(same(svg_curve(svg("<g transform='translate(0,-0.03)'>"
                           "<path d='M 0 -0.15 L 0.45 -0.17 L 0.9 -0.15'/></g>")),
             {0, -0.18, 0.45, -0.2, 0.9, -0.18}));
  // Nested: the outer group's transform applies last. scale(2) around translate(1): x -> 2 (x + 1).
  CHECK(same(svg_curve(svg("<g transform='scale(2)'><g transform='translate(1)'>"
                           "<polyline points='0,0 1,1'/></g></g>")),
             {2, 0, 4, 2}));
  // A list applies right to left to the points: translate(1, 0) scale(2): x -> 2 x + 1.
  CHECK(same(svg_curve(svg("<polyline transform='translate(1 0) scale(2)' points='0,0 1,1'/>")),
             {1, 0, 3, 2}));
  // matrix(a b c d e f), a rotation about a point, the skews.
  CHECK(same(svg_curve(svg("<polyline transform='matrix(1 2 3 4 5 6)' points='1,1'/>")), {9, 12}));
  CHECK(same(svg_curve(svg("<polyline transform='rotate(90, 1, 1)' points='2,1'/>")), {1, 2}));
  CHECK(same(svg_curve(svg("<polyline transform='skewX(45)' points='0,1'/>")), {1, 1}));
  CHECK(same(svg_curve(svg("<polyline transform='skewY(45)' points='1,0'/>")), {1, 1}));
  // A closed group's transform does not reach past it.
  CHECK(same(svg_curve(svg("<g transform='translate(5,5)'><rect/></g><polyline points='1,1'/>")),
             {1, 1}));
}

TEST_CASE("svg curve: what is not drawn is skipped, what cannot be followed is refused") {
  // A path in <defs> (a clip, a marker) is not the drawing; comments and prologs are skipped.
  CHECK(same(svg_curve("<?xml version='1.0'?><!-- <polyline points='9,9'/> -->"
                       "<svg:svg xmlns:svg='http://www.w3.org/2000/svg'><svg:defs>"
                       "<svg:path d='M 7 7'/></svg:defs><svg:path d=\"M 1 2 L 3 4\"/></svg:svg>"),
             {1, 2, 3, 4}));
  const auto refused = [](const std::string& text, const std::string& why) {
    try {
      (void)svg_curve(text);
    } catch (const std::invalid_argument& e) {
      INFO(e.what());
      return std::string(e.what()).find(why) != std::string::npos;
    }
    return false;
  };
  CHECK(refused(svg("<path d='M0,0 C1,1 2,2 3,0'/>"), "command C draws a curve"));
  CHECK(refused(svg("<path d='M0,0 L1,1 Z'/>"), "command Z closes the path"));
  CHECK(refused(svg("<path d='0,0 1,1'/>"), "must start with a moveto"));
  CHECK(refused(svg("<polyline points='0,0 1'/>"), "an odd count of numbers"));
  CHECK(refused(svg("<polyline points='0,0 1,nan'/>"), "expected a number"));
  CHECK(refused(svg("<g transform='shift(1)'><polyline points='0,0'/></g>"),
                "unknown function \"shift\""));
  CHECK(refused(svg("<polyline transform='scale(1 2 3)' points='0,0'/>"),
                "scale takes 1 to 2 numbers, got 3"));
  CHECK(refused(svg("<rect/>"), "no <polyline points=...> or <path d=...> drawn"));
}
