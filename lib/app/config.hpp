#pragma once
/// @file
/// Config loading for every tool: JSON with comments, defaults in code, `--set a.b=value`
/// overrides parsed by the type of the value they replace, unknown keys rejected with the nearest
/// known key suggested. A Params struct is filled by one function that calls get() for each field;
/// the same calls record the resolved config (defaults filled in) for --print-config and for the
/// provenance of every output.
///
///   void read(ConfigReader& r, SolverParams& p) {
///     r.get("dt", p.dt, positive());          // keeps the default when the key is absent
///     r.get("substeps", p.substeps, at_least(1));
///     r.get_enum("method", p.method, {{"greedy", Method::Greedy}, {"optimal", Method::Optimal}});
///     auto sub = r.child("walls"); read(sub, p.walls);
///   }
///
/// Errors are ConfigError: `config.json: /solver/dt: expected a number > 0, got -0.1`, or
/// `--set solver.dt: /solver/dt: ...` when the value came from the command line.

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace datadyn::app {

using json = nlohmann::json;

/// For a word not among `known` (a config key, a command): " (did you mean \"x\"?)" when one is
/// within a few edits, else " (<what>: a, b, c)".
std::string nearest_of(const std::string& word, const std::vector<std::string>& known,
                       const std::string& what);

/// "1 body", "0 bodies", "3 bodies": a count and its noun, for messages.
std::string counted(std::size_t n, const std::string& one, const std::string& many);

/// "812 B", "1.19 MB", "2.2 GB": a byte count in three significant digits of decimal units, as
/// `ls -h --si` and file managers show sizes.
std::string byte_text(std::uintmax_t bytes);

/// A check on a number: what it accepts, in words for the error message.
struct Range {
  std::optional<double> min, max;
  bool min_exclusive = false, max_exclusive = false;
  bool accepts(double v) const {
    if (min && (min_exclusive ? !(v > *min) : !(v >= *min))) return false;
    if (max && (max_exclusive ? !(v < *max) : !(v <= *max))) return false;
    return true;
  }
  /// "a number > 0", "an integer in [1, 10]": `noun` is the type's name.
  std::string describe(const std::string& noun = "a number") const;
};
inline Range positive() {
  return {0.0, std::nullopt, true, false};
}
inline Range non_negative() {
  return {0.0, std::nullopt, false, false};
}
inline Range at_least(double v) {
  return {v, std::nullopt, false, false};
}
inline Range in_range(double lo, double hi) {
  return {lo, hi, false, false};
}
inline Range unit_interval() {
  return in_range(0.0, 1.0);
}

/// The deepest nesting of arrays and objects a JSON text may have. A config, a --set value or a
/// cache's JSON attribute is a few levels deep; nlohmann's parser overflowed the stack (SIGSEGV)
/// on some 100,000.
inline constexpr int kMaxJsonDepth = 256;
/// `text` as JSON (comments allowed), or a discarded value (is_discarded()) where it is not JSON
/// or nests deeper than kMaxJsonDepth; `error`, when given, gets the reason ("parse error at line
/// 1, column 2: ...", "nested deeper than 256 levels").
json parse_json(const std::string& text, std::string* error = nullptr);
/// The same for the text of a file or an attribute: an IoError "<where>: invalid JSON: <reason>".
json parse_json_text(const std::string& text, const std::string& where);

/// JSON text of a value for messages ("-0.1", "\"abc\"", "[1, 2]"); beyond 200 characters it is
/// cut, with the value's size said ("[1,2,3,... (1,000,000 items in all)").
std::string json_text(const json& j);
/// A number for a message, as printf's %g writes it: "0.25", "1e+300", "nan" (json_text writes
/// NaN as null).
std::string number_text(double v);
/// JSON text for files, attributes and logs (`indent` as json::dump). It never throws: a string
/// with bytes that are not UTF-8 (a Latin-1 file name in a command line or config) gets U+FFFD
/// for them, where json::dump failed the run after its work was done.
std::string json_dump(const json& j, int indent = -1);

/// Where config values came from, for errors found by checks across keys or after reading:
/// `origin({"sweep", "scene.l0"})` names the --sets that gave a value at, under or above any of
/// the keys ("--set sweep.heights"), else the config's name, as ConfigError expects. A key is
/// dotted ("scene.l0") or a JSON pointer ("/scene/l0").
class ConfigOrigin {
 public:
  ConfigOrigin() = default;
  /// `sets`: the --set arguments as given ("a.b=value").
  ConfigOrigin(std::string source, const std::vector<std::string>& sets);
  std::string operator()(const std::vector<std::string>& keys) const;

 private:
  std::string source_ = "<defaults>";
  std::vector<std::string> set_keys_;  // dotted, in command-line order
};

namespace detail {
struct ConfigState;
}

class ConfigReader {
 public:
  /// Reads the config at `file` (nullopt: built-in defaults only) with `--set` overrides
  /// ("a.b=value", "list.0.key=value"). Throws ConfigError for an unreadable file, a JSON syntax
  /// error (with line and column) or a malformed override.
  static ConfigReader load(const std::optional<std::filesystem::path>& file,
                           const std::vector<std::string>& sets = {});
  /// The same from an in-memory document; `source` names it in messages.
  static ConfigReader from_json(json document, std::string source,
                                const std::vector<std::string>& sets = {});

  /// Reads key into value (kept as is when absent), checks it and records it as resolved.
  /// T: bool, int, int64_t, size_t, double, float, std::string, std::vector of those,
  /// std::array<double, N>, Eigen::Vector2d/3d.
  template <class T>
  void get(const std::string& key, T& value, const Range& range = {});
  /// Like get, but the key must be present (in the file or a --set).
  template <class T>
  void require(const std::string& key, T& value, const Range& range = {});
  /// A string from a fixed set of names mapped to an enum.
  template <class E>
  void get_enum(const std::string& key, E& value,
                const std::vector<std::pair<std::string, E>>& names);
  /// A file the run reads, named by key ("" or absent: none). A relative name from the config
  /// file is resolved against that file's directory, one from a --set or a default against the
  /// working directory; `file` receives the resolved name and the resolved config keeps the name
  /// as given. A name that is not an existing, readable file is a config error; `stem_suffixes`
  /// lets a stem stand for its files ({".node"}: "body" for body.node).
  void get_input_file(const std::string& key, std::string& file,
                      const std::vector<std::string>& stem_suffixes = {});
  /// Like get_input_file, but the key must be present and not empty.
  void require_input_file(const std::string& key, std::string& file,
                          const std::vector<std::string>& stem_suffixes = {});
  /// A file the run writes, named by key ("" or absent: none), resolved like get_input_file
  /// (beside the config file, or in the working directory for a --set) but not checked.
  void get_output_file(const std::string& key, std::string& file);
  /// Any JSON under key, taken as it is (free-form sections); the whole subtree counts as known.
  void get_json(const std::string& key, json& value);

  /// Whether the key is given (in the file or a --set).
  bool has(const std::string& key) const;
  /// Reader for the object at key (absent: an empty object, so every default is recorded).
  ConfigReader child(const std::string& key);
  /// Reads a list of objects: when present it replaces `items` (each element starts from
  /// `prototype` and is read by `read`); when absent each default element is read to record it.
  /// A list longer than `max_items` fails before any element is read; `max_reason` says where the
  /// bound comes from when other keys set it (" (one per slice: slices.count = 24)"), and
  /// `max_depends_on` lists those keys (dotted, as for fail()) so that their --sets are named.
  template <class T>
  void get_list(const std::string& key, std::vector<T>& items, const T& prototype,
                const std::function<void(ConfigReader&, T&)>& read,
                std::size_t max_items = static_cast<std::size_t>(-1),
                const std::string& max_reason = {},
                const std::vector<std::string>& max_depends_on = {});

  /// Checks that every key in the document and every --set was used; throws ConfigError naming
  /// the first unknown one and the nearest known key. Call once after reading everything.
  void finish() const;

  /// The resolved config: every value read, defaults included.
  const json& resolved() const;
  /// JSON pointer of this reader's object ("" for the root).
  const std::string& pointer() const { return pointer_; }
  /// Name of the source for messages (the config file, or "<defaults>").
  const std::string& source() const;
  /// Where the values at `keys` (relative to this reader, dotted) came from: ConfigOrigin.
  std::string origin(const std::vector<std::string>& keys) const;
  /// The same for the whole document, to keep for checks made after reading.
  ConfigOrigin origins() const;
  /// key of this reader as a dotted key from the root ("solver.dt"), for `depends_on`.
  std::string dotted(const std::string& key) const;

  /// Throws ConfigError for key with "expected <expected>, got <value as given>". A check across
  /// keys lists its other keys in `depends_on` (dotted, from the config's root: "scene.l0"): the
  /// message then names each --set that gave one of them, or key, as the value's origin.
  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const std::vector<std::string>& depends_on = {}) const;
  /// For a failed check that `low` < `high` (<= unless strict), two keys of this object already
  /// read: fails on `low` when only it was given, else on `high`, naming the other key and its
  /// value ("expected a value above min_corner ([0,0,0]) on every axis"; `qualifier` is
  /// " on every axis").
  [[noreturn]] void fail_order(const std::string& low, const std::string& high, bool strict = true,
                               const std::string& qualifier = "") const;
  /// Of keys of this object checked together, the one a failed check blames: the last the config
  /// gave (a --set min_corner above the default max_corner is min_corner's fault, a --set rings
  /// too many for the default layers is rings'), else the last.
  std::string blamed(const std::vector<std::string>& keys) const;
  /// fail() on the key of `keys` that blamed() names, the others named as read with it.
  [[noreturn]] void fail_together(const std::vector<std::string>& keys,
                                  const std::string& expected) const;

 private:
  ConfigReader(std::shared_ptr<detail::ConfigState> state, std::string pointer)
      : state_(std::move(state)), pointer_(std::move(pointer)) {}

  struct Raw {
    const json* value = nullptr;            // from the document
    const std::string* override = nullptr;  // from --set (raw text)
    std::string origin;                     // file name or "--set a.b"
  };
  Raw raw(const std::string& key) const;
  /// `r` of `key` with the origin of a check across keys: the --sets of `depends_on` and of key.
  Raw depending(Raw r, const std::string& key, const std::vector<std::string>& depends_on) const;
  /// `list` (the key's list as given, or its default) with the `--set key.<i>=value` overrides of
  /// its elements applied (each must exist: a --set cannot add one); `r.origin` becomes the last
  /// such --set's, for messages. Unchanged when there are none.
  json with_element_overrides(const std::string& key, json list, Raw& r) const;
  bool has_element_overrides(const std::string& key) const;
  /// `file` as given at key, relative to the config file's directory unless a --set gave it.
  std::filesystem::path resolve_file(const std::string& key, const std::string& file) const;
  void record(const std::string& key, json value);
  [[noreturn]] void fail_at(const Raw& raw, const std::string& key, const std::string& expected,
                            const std::string& got) const;

  template <class T>
  bool convert(const json& j, T& out) const;
  std::shared_ptr<detail::ConfigState> state_;
  std::string pointer_;
};

// ---------------------------------------------------------------------------------------------
// Implementation of the templates.

namespace detail {
template <class T>
struct TypeName;
template <>
struct TypeName<bool> {
  static std::string get() { return "true or false"; }
};
template <>
struct TypeName<int> {
  static std::string get() { return "an integer"; }
};
template <>
struct TypeName<std::int64_t> {
  static std::string get() { return "an integer"; }
};
template <>
struct TypeName<std::size_t> {
  static std::string get() { return "an integer >= 0"; }
};
template <>
struct TypeName<double> {
  static std::string get() { return "a number"; }
};
template <>
struct TypeName<float> {
  static std::string get() { return "a number"; }
};
template <>
struct TypeName<std::string> {
  static std::string get() { return "a string"; }
};
template <class T>
struct TypeName<std::vector<T>> {
  static std::string get() {
    if constexpr (std::is_same_v<T, bool>)
      return "a list of true/false values";
    else if constexpr (std::is_integral_v<T>)
      return "a list of integers";
    else if constexpr (std::is_floating_point_v<T>)
      return "a list of numbers";
    else if constexpr (std::is_same_v<T, std::string>)
      return "a list of strings";
    else if constexpr (requires { std::tuple_size<T>::value; })
      return "a list of lists of " + std::to_string(std::tuple_size<T>::value) + " numbers";
    else
      return "a list of lists";
  }
};
template <class T, std::size_t N>
struct TypeName<std::array<T, N>> {
  static std::string get() { return "a list of " + std::to_string(N) + " numbers"; }
};
template <int N>
struct TypeName<Eigen::Matrix<double, N, 1>> {
  static std::string get() { return "a list of " + std::to_string(N) + " numbers"; }
};

/// Parses override text into JSON of the kind T expects: "true"/"0.5"/"abc"/"1,2,3"/"[1,2,3]".
json override_to_json(const std::string& text, bool want_bool, bool want_number, bool want_string,
                      bool want_list);

template <class T>
struct IsNumber : std::bool_constant<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>> {};

/// The largest magnitude among the floating-point numbers in `v` (0 for none).
template <class T>
double largest_magnitude(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::abs(static_cast<double>(v));
  } else if constexpr (std::is_base_of_v<Eigen::MatrixBase<T>, T>) {
    return v.size() ? v.cwiseAbs().maxCoeff() : 0.0;
  } else if constexpr (requires { v.begin(); } && !std::is_same_v<T, std::string>) {
    double m = 0;
    for (const auto& x : v) m = std::max(m, largest_magnitude(x));
    return m;
  } else {
    return 0;
  }
}
}  // namespace detail

/// No config value of any tool is near this; 1e308 passed the checks and overflowed later
/// (positions beyond float32, a simulation state that is not finite, an integrator's check).
inline constexpr double kMaxConfigMagnitude = 1e15;

template <class T>
bool ConfigReader::convert(const json& j, T& out) const {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return false;
    out = j.get<bool>();
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    // A value T cannot hold is refused, not wrapped: -1e15 frames must not become a positive
    // int that passes the range check.
    if (j.is_number_unsigned()) {
      const auto u = j.get<std::uint64_t>();
      if (!std::in_range<T>(u)) return false;
      out = static_cast<T>(u);
      return true;
    }
    if (j.is_number_integer()) {
      const auto v = j.get<std::int64_t>();
      if (!std::in_range<T>(v)) return false;
      out = static_cast<T>(v);
      return true;
    }
    if (j.is_number_float()) {  // 3.0 is an integer; 2.5 is not
      const double d = j.get<double>();
      if (std::floor(d) != d || !std::isfinite(d)) return false;
      // |d| < 2^63: the conversion to int64 below is defined.
      if (!(std::abs(d) < 9.2e18)) return false;
      const auto v = static_cast<std::int64_t>(d);
      if (!std::in_range<T>(v)) return false;
      out = static_cast<T>(v);
      return true;
    }
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) return false;
    out = j.get<T>();
    return std::isfinite(static_cast<double>(out));
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return false;
    out = j.get<std::string>();
    return true;
  } else if constexpr (std::is_same_v<T, Eigen::Vector3d> || std::is_same_v<T, Eigen::Vector2d>) {
    if (!j.is_array() || j.size() != static_cast<std::size_t>(T::RowsAtCompileTime)) return false;
    for (Eigen::Index i = 0; i < T::RowsAtCompileTime; ++i)
      if (!convert(j[static_cast<std::size_t>(i)], out[i])) return false;
    return true;
  } else {
    // std::vector<U> or std::array<U, N>
    if (!j.is_array()) return false;
    T tmp{};
    if constexpr (requires { tmp.resize(0); }) {
      tmp.resize(j.size());
    } else {
      if (j.size() != tmp.size()) return false;
    }
    for (std::size_t i = 0; i < j.size(); ++i)
      if (!convert(j[i], tmp[i])) return false;
    out = std::move(tmp);
    return true;
  }
}

template <class T>
void ConfigReader::get(const std::string& key, T& value, const Range& range) {
  Raw r = raw(key);
  std::string expected = detail::TypeName<T>::get();
  constexpr bool numeric = detail::IsNumber<T>::value;
  if (numeric && (range.min || range.max))
    expected = range.describe(std::is_integral_v<T> ? "an integer" : "a number");
  constexpr bool is_list = !std::is_arithmetic_v<T> && !std::is_same_v<T, std::string>;
  bool elements = false;
  if constexpr (is_list) elements = has_element_overrides(key);
  if (r.value || r.override || elements) {
    json j;
    if (r.override) {
      j = detail::override_to_json(*r.override, std::is_same_v<T, bool>, numeric,
                                   std::is_same_v<T, std::string>, is_list);
    } else if (r.value) {
      j = *r.value;
    } else if constexpr (std::is_same_v<T, Eigen::Vector3d> || std::is_same_v<T, Eigen::Vector2d>) {
      j = json::array();
      for (Eigen::Index i = 0; i < value.size(); ++i) j.push_back(value[i]);
    } else if constexpr (is_list) {
      j = json(value);  // the default, whose elements a --set changes
    }
    if (elements) j = with_element_overrides(key, std::move(j), r);
    T parsed{};
    if (!convert(j, parsed)) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // A whole number the key's type cannot hold: say how large it may be.
        if (j.is_number() && std::floor(j.get<double>()) == j.get<double>())
          expected += " and <= " + std::to_string(std::numeric_limits<T>::max());
      }
      fail_at(r, key, expected, json_text(j));
    }
    if constexpr (numeric) {
      if (!range.accepts(static_cast<double>(parsed))) fail_at(r, key, expected, json_text(j));
    } else if constexpr (requires { static_cast<double>(*parsed.begin()); }) {
      if (range.min || range.max) {
        for (const auto& x : parsed)
          if (!range.accepts(static_cast<double>(x)))
            fail_at(r, key, expected + ", each" + range.describe(""), json_text(j));
      }
    }
    if (detail::largest_magnitude(parsed) > kMaxConfigMagnitude)
      fail_at(r, key,
              (std::is_floating_point_v<T> ? std::string("a number") : expected) +
                  " of magnitude at most 1e15",
              json_text(j));
    value = std::move(parsed);
  }
  if constexpr (std::is_same_v<T, Eigen::Vector3d> || std::is_same_v<T, Eigen::Vector2d>) {
    json arr = json::array();
    for (Eigen::Index i = 0; i < value.size(); ++i) arr.push_back(value[i]);
    record(key, arr);
  } else {
    record(key, json(value));
  }
}

template <class T>
void ConfigReader::require(const std::string& key, T& value, const Range& range) {
  if (!has(key)) fail(key, detail::TypeName<T>::get() + " (this key is required)");
  get(key, value, range);
}

template <class E>
void ConfigReader::get_enum(const std::string& key, E& value,
                            const std::vector<std::pair<std::string, E>>& names) {
  std::string expected = "one of";
  for (std::size_t i = 0; i < names.size(); ++i)
    expected += (i ? ", \"" : " \"") + names[i].first + "\"";
  std::string name;
  for (const auto& [n, e] : names)
    if (e == value) name = n;
  const Raw r = raw(key);
  if (r.value || r.override) {
    json j = r.override ? json(*r.override) : *r.value;
    bool found = false;
    if (j.is_string()) {
      for (const auto& [n, e] : names) {
        if (n == j.get<std::string>()) {
          value = e;
          name = n;
          found = true;
        }
      }
    }
    if (!found) fail_at(r, key, expected, json_text(j));
  }
  record(key, name);
}

template <class T>
void ConfigReader::get_list(const std::string& key, std::vector<T>& items, const T& prototype,
                            const std::function<void(ConfigReader&, T&)>& read,
                            std::size_t max_items, const std::string& max_reason,
                            const std::vector<std::string>& max_depends_on) {
  const Raw r = raw(key);
  if (r.override) {
    // `--set key=[]` empties the list (no examples, no fixed slices); an element is set by its
    // own keys, which the elements' reader checks one by one.
    const json j = parse_json(*r.override);
    if (!j.is_array() || !j.empty())
      fail_at(r, key,
              "[] for an empty list, or one key of an element (e.g. " + r.origin.substr(6) +
                  ".0.<key>=...)",
              "\"" + *r.override + "\"");
    items.clear();
    record(key, json::array());
    return;
  }
  if (r.value) {
    if (!r.value->is_array()) fail_at(r, key, "a list of objects", json_text(*r.value));
    // Before the elements: reading 10^5 of them took seconds before the length was checked.
    if (r.value->size() > max_items)
      fail_at(depending(r, key, max_depends_on), key,
              "a list of at most " + std::to_string(max_items) + " objects" + max_reason,
              json_text(*r.value));
    items.assign(r.value->size(), prototype);
  }
  record(key, json::array());
  for (std::size_t i = 0; i < items.size(); ++i) {
    ConfigReader sub = child(key + "/" + std::to_string(i));
    read(sub, items[i]);
  }
}

}  // namespace datadyn::app
