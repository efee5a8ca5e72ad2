#include "wave/svg_curve.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <stdexcept>
#include <string_view>

#include <Eigen/Dense>

namespace datadyn::wave {

namespace {

using Affine = Eigen::Matrix3d;  // homogeneous 2D: [a c e; b d f; 0 0 1]

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

/// Numbers and words of an attribute value, read left to right.
class Scanner {
 public:
  Scanner(std::string_view text, std::string what) : text_(text), what_(std::move(what)) {}

  void skip() {
    while (at_ < text_.size() && is_space(text_[at_])) ++at_;
  }
  bool done() {
    skip();
    return at_ >= text_.size();
  }
  char peek() {
    skip();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  char take() {
    const char c = peek();
    if (c) ++at_;
    return c;
  }
  bool number_next() {
    const char c = peek();
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
  }
  /// An SVG number: digits with an optional sign, point and exponent ("10-5" is two numbers).
  double number() {
    if (!number_next())
      fail(std::string("expected a number, got ") +
           (at_ < text_.size() ? "\"" + std::string(text_.substr(at_, 12)) + "\"" : "the end"));
    const std::string rest(text_.substr(at_, 64));
    char* end = nullptr;
    const double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str() || !std::isfinite(v))
      fail("expected a number, got \"" + rest.substr(0, 12) + "\"");
    at_ += static_cast<std::size_t>(end - rest.c_str());
    return v;
  }
  std::string word() {
    skip();
    const std::size_t from = at_;
    while (at_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[at_]))) ++at_;
    return std::string(text_.substr(from, at_ - from));
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument(what_ + ": " + why);
  }

 private:
  std::string_view text_;
  std::string what_;
  std::size_t at_ = 0;
};

/// A `transform` attribute (SVG 1.1, sec. 7.6): the product of its functions, left to right.
Affine parse_transform(std::string_view value) {
  Scanner s(value, "transform=\"" + std::string(value) + "\"");
  Affine m = Affine::Identity();
  while (!s.done()) {
    const std::string name = s.word();
    if (s.take() != '(') s.fail("expected a function such as translate(x, y)");
    std::vector<double> a;
    while (s.peek() != ')' && s.peek() != '\0') a.push_back(s.number());
    if (s.take() != ')') s.fail("a function without its closing parenthesis");
    const auto args = [&](std::size_t lo, std::size_t hi) {
      if (a.size() < lo || a.size() > hi)
        s.fail(name + " takes " + std::to_string(lo) +
               (lo == hi ? "" : " to " + std::to_string(hi)) + " numbers, got " +
               std::to_string(a.size()));
    };
    Affine t = Affine::Identity();
    const double deg = std::numbers::pi / 180;
    if (name == "matrix") {
      args(6, 6);
      t << a[0], a[2], a[4], a[1], a[3], a[5], 0, 0, 1;
    } else if (name == "translate") {
      args(1, 2);
      t(0, 2) = a[0];
      t(1, 2) = a.size() > 1 ? a[1] : 0.0;
    } else if (name == "scale") {
      args(1, 2);
      t(0, 0) = a[0];
      t(1, 1) = a.size() > 1 ? a[1] : a[0];
    } else if (name == "rotate") {
      if (a.size() != 1 && a.size() != 3) s.fail("rotate takes 1 or 3 numbers");
      const double c = std::cos(a[0] * deg), sn = std::sin(a[0] * deg);
      const double cx = a.size() == 3 ? a[1] : 0.0, cy = a.size() == 3 ? a[2] : 0.0;
      // translate(cx, cy) rotate(a) translate(-cx, -cy)
      t << c, -sn, cx - c * cx + sn * cy, sn, c, cy - sn * cx - c * cy, 0, 0, 1;
    } else if (name == "skewX") {
      args(1, 1);
      t(0, 1) = std::tan(a[0] * deg);
    } else if (name == "skewY") {
      args(1, 1);
      t(1, 0) = std::tan(a[0] * deg);
    } else {
      s.fail("unknown function \"" + name +
             "\" (expected matrix, translate, scale, rotate, skewX or skewY)");
    }
    m = m * t;
  }
  return m;
}

std::vector<Eigen::Vector2d> polyline_points(std::string_view value) {
  Scanner s(value, "polyline points");
  std::vector<Eigen::Vector2d> out;
  while (!s.done()) {
    const double x = s.number();
    if (s.done()) s.fail("an odd count of numbers (a point without its y)");
    out.emplace_back(x, s.number());
  }
  return out;
}

/// The vertices of a path of straight lines (SVG 1.1, sec. 8.3): M, L, H, V and m, l, h, v.
std::vector<Eigen::Vector2d> path_points(std::string_view value) {
  Scanner s(value, "path d");
  std::vector<Eigen::Vector2d> out;
  Eigen::Vector2d cur(0, 0);
  char command = 0;
  while (!s.done()) {
    if (!s.number_next()) {
      command = s.take();
      const std::string_view curves = "CcSsQqTtAa", close = "Zz", lines = "MmLlHhVv";
      if (curves.find(command) != std::string_view::npos)
        s.fail(std::string("command ") + command +
               " draws a curve, which the target cannot follow; use straight segments (in "
               "Inkscape: Extensions > Modify Path > Flatten Beziers)");
      if (close.find(command) != std::string_view::npos)
        s.fail(std::string("command ") + command +
               " closes the path back to its start; draw the curve as an open line");
      if (lines.find(command) == std::string_view::npos)
        s.fail(std::string("unknown command \"") + command + "\"");
      continue;
    }
    if (!command) s.fail("path data must start with a moveto (M or m)");
    // A relative moveto at the start of a path is absolute (sec. 8.3.2).
    const bool relative = std::islower(static_cast<unsigned char>(command)) && !out.empty();
    switch (command) {
      case 'M':
      case 'm':
      case 'L':
      case 'l': {
        const double x = s.number(), y = s.number();
        cur = relative ? Eigen::Vector2d(cur + Eigen::Vector2d(x, y)) : Eigen::Vector2d(x, y);
        // Numbers after a moveto's pair are lineto pairs of the same kind.
        if (command == 'M') command = 'L';
        if (command == 'm') command = 'l';
        break;
      }
      case 'H':
      case 'h': {
        const double x = s.number();
        cur.x() = relative ? cur.x() + x : x;
        break;
      }
      default: {  // V, v
        const double y = s.number();
        cur.y() = relative ? cur.y() + y : y;
        break;
      }
    }
    out.push_back(cur);
  }
  return out;
}

struct Attribute {
  std::string name, value;
};

std::string local_name(const std::string& name) {
  const std::size_t colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

}  // namespace

std::vector<Eigen::Vector2d> svg_curve(const std::string& text) {
  struct Open {
    std::string name;
    Affine m;
    bool hidden;
  };
  std::vector<Open> stack;
  const auto top = [&] { return stack.empty() ? Affine(Affine::Identity()) : stack.back().m; };
  const auto hidden_now = [&] { return !stack.empty() && stack.back().hidden; };
  std::size_t i = 0;
  while ((i = text.find('<', i)) != std::string::npos) {
    const auto skip_to = [&](const char* end) {
      const std::size_t e = text.find(end, i);
      i = e == std::string::npos ? text.size() : e + std::string_view(end).size();
    };
    if (text.compare(i, 4, "<!--") == 0) {
      skip_to("-->");
      continue;
    }
    if (text.compare(i, 9, "<![CDATA[") == 0) {
      skip_to("]]>");
      continue;
    }
    if (i + 1 < text.size() && (text[i + 1] == '?' || text[i + 1] == '!')) {
      skip_to(">");
      continue;
    }
    const bool closing = i + 1 < text.size() && text[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
           text[j] != '>' && text[j] != '/')
      ++j;
    const std::string name = local_name(text.substr(name_start, j - name_start));
    if (closing) {
      // Pops to the element it closes (an unclosed child is closed with it).
      for (std::size_t k = stack.size(); k-- > 0;)
        if (stack[k].name == name) {
          stack.resize(k);
          break;
        }
      i = j;
      skip_to(">");
      continue;
    }
    std::vector<Attribute> attributes;
    bool self_closing = false;
    while (j < text.size()) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size()) break;
      if (text[j] == '>') {
        ++j;
        break;
      }
      if (text[j] == '/') {
        self_closing = true;
        ++j;
        continue;
      }
      const std::size_t a = j;
      while (j < text.size() && text[j] != '=' && text[j] != '>' &&
             !std::isspace(static_cast<unsigned char>(text[j])))
        ++j;
      Attribute attribute{local_name(text.substr(a, j - a)), ""};
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == '=') {
        ++j;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        const char quote = j < text.size() ? text[j] : '\0';
        if (quote == '"' || quote == '\'') {
          const std::size_t end = text.find(quote, j + 1);
          if (end == std::string::npos)
            throw std::invalid_argument("<" + name + ">: attribute " + attribute.name +
                                        " without its closing quote");
          attribute.value = text.substr(j + 1, end - j - 1);
          j = end + 1;
        }
      }
      attributes.push_back(std::move(attribute));
    }
    i = j;
    const auto value = [&](const char* key) -> const std::string* {
      for (const auto& a : attributes)
        if (a.name == key) return &a.value;
      return nullptr;
    };
    Affine m = top();
    if (const std::string* t = value("transform")) m = m * parse_transform(*t);
    const bool hidden = hidden_now() || name == "defs" || name == "clipPath" || name == "mask" ||
                        name == "marker" || name == "pattern" || name == "symbol";
    const std::string* data = name == "polyline" ? value("points")
                              : name == "path"   ? value("d")
                                                 : nullptr;
    if (data && !hidden) {
      std::vector<Eigen::Vector2d> points =
          name == "polyline" ? polyline_points(*data) : path_points(*data);
      for (auto& p : points) p = (m * Eigen::Vector3d(p.x(), p.y(), 1)).head<2>();
      return points;
    }
    if (!self_closing) stack.push_back({name, m, hidden});
  }
  throw std::invalid_argument(
      "no <polyline points=...> or <path d=...> drawn (outside <defs> and the like)");
}

}  // namespace datadyn::wave
