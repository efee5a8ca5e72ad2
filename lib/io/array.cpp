#include "io/array.hpp"

#include <charconv>
#include <sstream>

#include "io/cache.hpp"

namespace datadyn::io {

const char* element_type_name(ElementType t) {
  switch (t) {
    case ElementType::Int8:
      return "int8";
    case ElementType::UInt8:
      return "uint8";
    case ElementType::Int32:
      return "int32";
    case ElementType::Int64:
      return "int64";
    case ElementType::Float32:
      return "float32";
    case ElementType::Float64:
      return "float64";
  }
  return "?";
}

std::size_t element_count(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

std::string shape_string(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

namespace {

/// The shortest text that reads back as the same double (0.32, not 0.32000000000000001).
std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string attribute_string(const AttributeValue& value) {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          os << '"' << v << '"';
        } else if constexpr (std::is_same_v<V, double>) {
          os << shortest(v);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          os << v;
        } else {
          os << "[";
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) os << ", ";
            if constexpr (std::is_same_v<V, std::vector<std::string>>)
              os << '"' << v[i] << '"';
            else if constexpr (std::is_same_v<V, std::vector<double>>)
              os << shortest(v[i]);
            else
              os << v[i];
          }
          os << "]";
        }
      },
      value);
  return os.str();
}

}  // namespace datadyn::io
