#pragma once
// Independent readers of the formats mesh-export writes, written from the format descriptions
// (not from the library's writers), for round-trip tests: OBJ, binary PLY, PC2, MDD, and a
// structural parser of the USDA subset (layer metadata, prims, attributes, time samples).

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "support/file_bytes.hpp"

namespace datadyn::test {

// ------------------------------------------------------------------------------------------------
// OBJ

struct ObjData {
  std::vector<Eigen::Vector3d> v;
  std::vector<Eigen::Vector2d> vt;
  std::vector<std::vector<int>> f;   // 0-based
  std::vector<std::vector<int>> ft;  // 0-based texture coordinate of each corner, -1: none
  std::vector<std::string> comments;
  std::string object;
  std::string smoothing;  // the argument of the last `s` statement, "" when there is none
};

inline ObjData read_obj(const std::filesystem::path& p) {
  ObjData d;
  std::istringstream in(file_bytes(p));
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "#") {
      d.comments.push_back(line.substr(2));
    } else if (tag == "o") {
      ls >> d.object;
    } else if (tag == "s") {
      ls >> d.smoothing;
    } else if (tag == "v") {
      Eigen::Vector3d x;
      ls >> x[0] >> x[1] >> x[2];
      if (!ls) throw std::runtime_error(p.string() + ": bad vertex line: " + line);
      d.v.push_back(x);
    } else if (tag == "vt") {
      Eigen::Vector2d t;
      ls >> t[0] >> t[1];
      if (!ls) throw std::runtime_error(p.string() + ": bad texture line: " + line);
      d.vt.push_back(t);
    } else if (tag == "f") {
      std::vector<int> face, tex;
      for (std::string tok; ls >> tok;) {
        const auto slash = tok.find('/');
        face.push_back(std::stoi(tok.substr(0, slash)) - 1);
        tex.push_back(slash == std::string::npos ? -1 : std::stoi(tok.substr(slash + 1)) - 1);
      }
      d.f.push_back(face);
      d.ft.push_back(tex);
    } else if (!tag.empty()) {
      throw std::runtime_error(p.string() + ": unexpected line: " + line);
    }
  }
  return d;
}

// ------------------------------------------------------------------------------------------------
// PLY (binary little-endian or ASCII vertex lists; the face list as "list uchar int")

struct PlyData {
  std::vector<std::string> comments;
  std::size_t vertex_count = 0;
  std::vector<std::string> vertex_properties;         // in order
  std::map<std::string, std::vector<double>> vertex;  // property -> values
  std::vector<std::vector<int>> faces;
};

inline PlyData read_ply(const std::filesystem::path& p) {
  const std::string s = file_bytes(p);
  const std::size_t end = s.find("end_header\n");
  if (s.rfind("ply\n", 0) != 0 || end == std::string::npos)
    throw std::runtime_error(p.string() + ": not a PLY");
  PlyData d;
  std::istringstream header(s.substr(0, end));
  std::vector<std::string> vtypes;
  std::size_t face_count = 0;
  std::string element;
  for (std::string line; std::getline(header, line);) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "format") {
      std::string f;
      ls >> f;
      if (f != "binary_little_endian") throw std::runtime_error("format " + f);
    } else if (tag == "comment") {
      d.comments.push_back(line.substr(8));
    } else if (tag == "element") {
      std::size_t n;
      ls >> element >> n;
      (element == "vertex" ? d.vertex_count : face_count) = n;
    } else if (tag == "property" && element == "vertex") {
      std::string type, name;
      ls >> type >> name;
      vtypes.push_back(type);
      d.vertex_properties.push_back(name);
    } else if (tag == "property" && element == "face") {
      std::string list, ct, it, name;
      ls >> list >> ct >> it >> name;
      if (ct != "uchar" || it != "int") throw std::runtime_error("face list " + ct + " " + it);
    }
  }
  std::size_t pos = end + 11;
  auto take = [&](std::size_t n) {
    if (pos + n > s.size()) throw std::runtime_error(p.string() + ": truncated");
    unsigned char b[8];
    std::memcpy(b, s.data() + pos, n);
    pos += n;
    if constexpr (std::endian::native == std::endian::big) std::reverse(b, b + n);
    return std::vector<unsigned char>(b, b + n);
  };
  for (std::size_t i = 0; i < d.vertex_count; ++i)
    for (std::size_t k = 0; k < vtypes.size(); ++k) {
      double v = 0;
      if (vtypes[k] == "float") {
        float f;
        std::memcpy(&f, take(4).data(), 4);
        v = f;
      } else if (vtypes[k] == "uchar") {
        v = take(1)[0];
      } else if (vtypes[k] == "int") {
        std::int32_t x;
        std::memcpy(&x, take(4).data(), 4);
        v = x;
      } else {
        throw std::runtime_error("property type " + vtypes[k]);
      }
      d.vertex[d.vertex_properties[k]].push_back(v);
    }
  for (std::size_t i = 0; i < face_count; ++i) {
    const int n = take(1)[0];
    std::vector<int> f;
    for (int k = 0; k < n; ++k) {
      std::int32_t x;
      std::memcpy(&x, take(4).data(), 4);
      f.push_back(x);
    }
    d.faces.push_back(f);
  }
  if (pos != s.size()) throw std::runtime_error(p.string() + ": trailing bytes");
  return d;
}

// ------------------------------------------------------------------------------------------------
// PC2 and MDD

struct PointCacheData {
  std::int32_t points = 0, frames = 0;
  float start = 0, rate = 0;  // PC2 only
  std::vector<float> times;   // MDD only
  std::vector<std::vector<Eigen::Vector3d>> x;
};

inline std::int32_t get_i32(const std::string& s, std::size_t& pos, bool big) {
  unsigned char b[4];
  if (pos + 4 > s.size()) throw std::runtime_error("truncated");
  std::memcpy(b, s.data() + pos, 4);
  pos += 4;
  return big ? (std::int32_t(b[0]) << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
             : (std::int32_t(b[3]) << 24) | (b[2] << 16) | (b[1] << 8) | b[0];
}
inline float get_f32(const std::string& s, std::size_t& pos, bool big) {
  const std::int32_t i = get_i32(s, pos, big);
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

inline PointCacheData read_pc2(const std::filesystem::path& p) {
  const std::string s = file_bytes(p);
  if (s.size() < 32 || std::memcmp(s.data(), "POINTCACHE2\0", 12) != 0)
    throw std::runtime_error(p.string() + ": not a PC2");
  std::size_t pos = 12;
  PointCacheData d;
  if (get_i32(s, pos, false) != 1) throw std::runtime_error("PC2 version");
  d.points = get_i32(s, pos, false);
  d.start = get_f32(s, pos, false);
  d.rate = get_f32(s, pos, false);
  d.frames = get_i32(s, pos, false);
  for (int f = 0; f < d.frames; ++f) {
    std::vector<Eigen::Vector3d> x(static_cast<std::size_t>(d.points));
    for (auto& v : x)
      for (int k = 0; k < 3; ++k) v[k] = get_f32(s, pos, false);
    d.x.push_back(x);
  }
  if (pos != s.size()) throw std::runtime_error(p.string() + ": trailing bytes");
  return d;
}

inline PointCacheData read_mdd(const std::filesystem::path& p) {
  const std::string s = file_bytes(p);
  std::size_t pos = 0;
  PointCacheData d;
  d.frames = get_i32(s, pos, true);
  d.points = get_i32(s, pos, true);
  for (int f = 0; f < d.frames; ++f) d.times.push_back(get_f32(s, pos, true));
  for (int f = 0; f < d.frames; ++f) {
    std::vector<Eigen::Vector3d> x(static_cast<std::size_t>(d.points));
    for (auto& v : x)
      for (int k = 0; k < 3; ++k) v[k] = get_f32(s, pos, true);
    d.x.push_back(x);
  }
  if (pos != s.size()) throw std::runtime_error(p.string() + ": trailing bytes");
  return d;
}

// ------------------------------------------------------------------------------------------------
// USDA: a structural parser of the subset a mesh layer uses. Throws std::runtime_error with the
// line number on anything it does not understand, so a malformed layer fails the test.

struct UsdValue {
  enum Kind { Number, String, Token, List, Tuple, Dict, Samples } kind = Number;
  double number = 0;
  std::string text;                                    // String, Token
  std::vector<UsdValue> items;                         // List, Tuple
  std::vector<std::pair<std::string, UsdValue>> dict;  // Dict (key "type name"), Samples (time)
};

struct UsdAttribute {
  std::string type;  // "point3f[]", "uniform token", ...
  std::map<std::string, UsdValue> metadata;
  bool has_default = false;
  UsdValue value;
  std::vector<std::pair<double, UsdValue>> samples;
};

struct UsdPrim {
  std::string specifier, type, name;
  std::map<std::string, UsdValue> metadata;
  std::map<std::string, UsdAttribute> attributes;
  std::vector<UsdPrim> children;
  const UsdPrim* child(const std::string& n) const {
    for (const auto& c : children)
      if (c.name == n) return &c;
    return nullptr;
  }
};

struct UsdLayer {
  std::map<std::string, UsdValue> metadata;
  std::vector<UsdPrim> prims;
};

class UsdaParser {
 public:
  explicit UsdaParser(std::string text) : s_(std::move(text)) {}

  UsdLayer parse() {
    if (s_.rfind("#usda 1.0\n", 0) != 0) fail("expected '#usda 1.0' on the first line");
    pos_ = 10;
    UsdLayer layer;
    skip();
    if (peek() == '(') layer.metadata = metadata_block();
    while (skip(), pos_ < s_.size()) layer.prims.push_back(prim());
    return layer;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const auto line =
        std::count(s_.begin(), s_.begin() + static_cast<std::ptrdiff_t>(std::min(pos_, s_.size())),
                   '\n') +
        1;
    throw std::runtime_error("usda line " + std::to_string(line) + ": " + what);
  }
  void skip() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  char peek() {
    skip();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  std::string identifier() {
    skip();
    const std::size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == ':' || s_[pos_] == '.'))
      ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '[' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ']')
      pos_ += 2;  // array types: int[]
    if (b == pos_) fail("expected an identifier");
    return s_.substr(b, pos_ - b);
  }
  std::string string_literal() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') break;
      if (c == '\n') fail("newline in a string");
      if (c == '\\') {
        if (pos_ >= s_.size()) fail("unterminated escape");
        const char e = s_[pos_++];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else {
        out += c;
      }
    }
    return out;
  }
  double number() {
    skip();
    const char* b = s_.c_str() + pos_;
    char* e = nullptr;
    const double v = std::strtod(b, &e);
    if (e == b) fail("expected a number");
    pos_ += static_cast<std::size_t>(e - b);
    return v;
  }
  UsdValue value() {
    UsdValue v;
    const char c = peek();
    if (c == '"') {
      v.kind = UsdValue::String;
      v.text = string_literal();
    } else if (c == '[' || c == '(') {
      ++pos_;
      const char close = c == '[' ? ']' : ')';
      v.kind = c == '[' ? UsdValue::List : UsdValue::Tuple;
      while (!accept(close)) {
        v.items.push_back(value());
        if (!accept(',') && peek() != close) fail("expected ',' or a closing bracket");
      }
    } else if (c == '{') {
      ++pos_;
      // A dictionary ("type name = value" entries) or time samples ("time: value,").
      skip();
      const bool samples =
          pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) ||
                               s_[pos_] == '-' || s_[pos_] == '.');
      v.kind = samples ? UsdValue::Samples : UsdValue::Dict;
      while (!accept('}')) {
        if (samples) {
          const double t = number();
          expect(':');
          UsdValue item = value();
          v.dict.emplace_back(std::to_string(t), item);
          if (!accept(',') && peek() != '}') fail("expected ',' after a time sample");
        } else {
          const std::string type = identifier();
          const std::string name = identifier();
          expect('=');
          v.dict.emplace_back(type + " " + name, value());
        }
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.') {
      v.kind = UsdValue::Number;
      v.number = number();
    } else {
      v.kind = UsdValue::Token;
      v.text = identifier();
    }
    return v;
  }
  std::map<std::string, UsdValue> metadata_block() {
    expect('(');
    std::map<std::string, UsdValue> m;
    while (!accept(')')) {
      const std::string key = identifier();
      expect('=');
      m[key] = value();
    }
    return m;
  }
  UsdPrim prim() {
    UsdPrim p;
    p.specifier = identifier();
    if (p.specifier != "def" && p.specifier != "over" && p.specifier != "class")
      fail("expected def, over or class, got " + p.specifier);
    if (peek() != '"') p.type = identifier();
    p.name = string_literal();
    if (peek() == '(') p.metadata = metadata_block();
    expect('{');
    while (!accept('}')) {
      skip();
      if (s_.compare(pos_, 4, "def ") == 0) {
        p.children.push_back(prim());
        continue;
      }
      std::string type = identifier();
      if (type == "uniform" || type == "custom") type += " " + identifier();
      std::string name = identifier();
      const bool samples =
          name.size() > 12 && name.compare(name.size() - 12, 12, ".timeSamples") == 0;
      if (samples) name.resize(name.size() - 12);
      UsdAttribute& a = p.attributes[name];
      if (!a.type.empty() && a.type != type)
        fail(name + ": declared as " + a.type + " and " + type);
      a.type = type;
      if (peek() == '(') a.metadata = metadata_block();
      if (accept('=')) {
        // A default value may be followed by the attribute's metadata: `= [...] (...)`.
        const auto metadata_after = [&] {
          skip();
          if (peek() == '(') a.metadata = metadata_block();
        };
        UsdValue v = value();
        if (samples) {
          if (v.kind != UsdValue::Samples && !(v.kind == UsdValue::Dict && v.dict.empty()))
            fail(name + ".timeSamples: expected {time: value, ...}");
          for (auto& [t, x] : v.dict) a.samples.emplace_back(std::stod(t), x);
        } else {
          a.has_default = true;
          a.value = v;
          metadata_after();
        }
      }
    }
    return p;
  }
  std::string s_;
  std::size_t pos_ = 0;
};

inline UsdLayer read_usda(const std::filesystem::path& p) {
  return UsdaParser(file_bytes(p)).parse();
}

}  // namespace datadyn::test
