#pragma once
/// @file
/// The curve an artist draws in a vector editor (Inkscape, Illustrator): the first polyline or
/// straight-line path of an SVG file, in the file's user units, with the transforms of the
/// element and its groups applied (SVG 1.1, sec. 7.5 and 8.3).

#include <string>
#include <vector>

#include <Eigen/Core>

namespace datadyn::wave {

/// The points of the first `<polyline points="...">` or `<path d="...">` of `text` that is
/// drawn (not inside `<defs>`, `<clipPath>`, `<mask>`, `<marker>`, `<pattern>` or `<symbol>`),
/// each mapped by the `transform` attributes of the element and of every element around it
/// (`matrix`, `translate`, `scale`, `rotate`, `skewX`, `skewY`). A path may use the straight-
/// line commands M, L, H, V and their relative forms m, l, h, v (as Inkscape writes them), with
/// implicit repetitions. Coordinates are the document's user units, y down; the caller scales
/// and flips them.
/// @throws std::invalid_argument with a sentence saying what is wrong: no such element, a
///   curve or closing command (C, S, Q, T, A, Z: the drawn shape would be lost), a malformed
///   number or transform.
std::vector<Eigen::Vector2d> svg_curve(const std::string& text);

}  // namespace datadyn::wave
