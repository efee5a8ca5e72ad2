#include "app/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace datadyn::app {

namespace detail {

struct ConfigState {
  json doc = json::object();
  std::string source;
  std::filesystem::path directory;  // of the config file; relative input files are found there
  struct Override {
    std::string pointer;  // "/solver/dt"
    std::string text;     // "0.002"
    std::string origin;   // "--set solver.dt"
    bool used = false;
  };
  std::vector<Override> overrides;
  std::vector<std::string> sets;  // as given, for ConfigOrigin
  json resolved = json::object();
};

/// Thrown by the parser callbacks below at a nesting deeper than kMaxJsonDepth.
struct TooDeep {};

bool opens(json::parse_event_t event) {
  return event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
}

std::string too_deep_text() {
  return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects";
}

/// nlohmann's message without its tag: "[json.exception.parse_error.101] parse error at line 3,
/// column 5: ..." -> "parse error at line 3, column 5: ...".
std::string parse_error_text(const json::exception& e) {
  const std::string what = e.what();
  const std::size_t p = what.find("] ");
  return p == std::string::npos ? what : what.substr(p + 2);
}

/// A parser callback that records in `found` the JSON pointer of the first key given twice in
/// one object (empty: none).
json::parser_callback_t duplicate_finder(std::string& found) {
  struct Level {
    bool array = false;
    std::size_t index = 0;  // of the next element, in an array
    std::string key;        // the current key, in an object
    std::set<std::string> keys;
  };
  auto levels = std::make_shared<std::vector<Level>>();
  return [levels, &found](int depth, json::parse_event_t event, json& parsed) {
    if (opens(event) && depth >= kMaxJsonDepth) throw TooDeep{};
    auto& l = *levels;
    const auto pointer = [&] {
      std::string p;
      for (const Level& v : l) {
        std::string part = v.array ? std::to_string(v.index) : v.key;
        // RFC 6901: "~" and "/" in a key are written "~0" and "~1".
        for (std::size_t at = 0; (at = part.find_first_of("~/", at)) != std::string::npos; at += 2)
          part.replace(at, 1, part[at] == '~' ? "~0" : "~1");
        p += "/" + part;
      }
      return p;
    };
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        l.push_back({event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::key:
        l.back().key = parsed.get<std::string>();
        if (!l.back().keys.insert(l.back().key).second && found.empty()) found = pointer();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        l.pop_back();
        if (!l.empty() && l.back().array) ++l.back().index;
        break;
      case json::parse_event_t::value:
        if (!l.empty() && l.back().array) ++l.back().index;
        break;
    }
    return true;
  };
}

json override_to_json(const std::string& text, bool want_bool, bool want_number, bool want_string,
                      bool want_list) {
  auto unquote = [](const std::string& t) {
    if (t.size() >= 2 &&
        ((t.front() == '"' && t.back() == '"') || (t.front() == '\'' && t.back() == '\'')))
      return t.substr(1, t.size() - 2);
    return t;
  };
  if (want_string) return json(unquote(text));
  if (want_bool) {
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
    if (t == "false" || t == "0" || t == "no" || t == "off") return false;
    return json(text);
  }
  auto scalar = [&](const std::string& t) -> json {
    json j = parse_json(t);
    if (!j.is_discarded() && (j.is_number() || j.is_boolean())) return j;
    return json(unquote(t));
  };
  if (want_number) return scalar(text);
  if (want_list) {
    if (!text.empty() && text.front() == '[') {
      json j = parse_json(text);
      return j.is_discarded() ? json(text) : j;
    }
    json arr = json::array();
    if (text.empty()) return arr;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) arr.push_back(scalar(item));
    return arr;
  }
  json j = parse_json(text);
  return j.is_discarded() ? json(text) : j;
}

}  // namespace detail

json parse_json(const std::string& text, std::string* error) {
  try {
    return json::parse(
        text,
        [](int depth, json::parse_event_t event, json&) {
          // `depth` counts the arrays and objects around: 0 for the outermost one's start.
          if (detail::opens(event) && depth >= kMaxJsonDepth) throw detail::TooDeep{};
          return true;
        },
        /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const detail::TooDeep&) {
    if (error) *error = detail::too_deep_text();
  } catch (const json::exception& e) {
    if (error) *error = detail::parse_error_text(e);
  }
  return json(json::value_t::discarded);
}

json parse_json_text(const std::string& text, const std::string& where) {
  std::string error;
  json j = parse_json(text, &error);
  if (j.is_discarded()) throw IoError(where + ": invalid JSON: " + error);
  return j;
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// " (did you mean \"dt\"?)" or the list of known keys, for an unknown key's message.
std::string suggestion(const std::string& key, const json& known_object) {
  if (!known_object.is_object() || known_object.empty()) return " (no keys are known here)";
  std::vector<std::string> known;
  for (const auto& [k, v] : known_object.items()) known.push_back(k);
  return nearest_of(key, known, "known keys");
}

std::string parent_pointer(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

std::string last_token(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

const json* find(const json& doc, const std::string& pointer) {
  if (pointer.empty()) return &doc;
  try {
    const json::json_pointer ptr(pointer);
    if (!doc.contains(ptr)) return nullptr;
    return &doc.at(ptr);
  } catch (const json::exception&) {
    return nullptr;  // a token json cannot resolve, e.g. a list index beyond 2^64 from --set
  }
}

/// " at line L, column C" of the first number in JSON `text` beyond a double's range, or "" if
/// none is found. Strings and comments are skipped, so "1e400" in a name or a comment before the
/// number, or as the end of "21e400", does not mislead it: the parser reads in text order and
/// stops at the first number that overflows.
std::string overflow_place(const std::string& text) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = ++i;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;  // an escaped character, a quote among them
      ++i;
    } else if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
      const bool block = text[i + 1] == '*';
      const std::size_t end = text.find(block ? "*/" : "\n", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + (block ? 2 : 0);
      for (; i < stop; ++i)
        if (text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::size_t begin = i;
      while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                                 std::strchr("+-.eE", text[i]) != nullptr))
        ++i;
      const std::string number = text.substr(begin, i - begin);
      if (std::isinf(std::strtod(number.c_str(), nullptr)))
        return " at line " + std::to_string(line) + ", column " +
               std::to_string(begin - line_start + 1);
    } else {
      ++i;
    }
  }
  return "";
}

}  // namespace

std::string counted(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string byte_text(std::uintmax_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  static constexpr const char* units[] = {"kB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  std::size_t u = 0;
  for (value /= 1000.0; value >= 999.5 && u + 1 < std::size(units); ++u) value /= 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", value, units[u]);
  return buf;
}

std::string nearest_of(const std::string& word, const std::vector<std::string>& known,
                       const std::string& what) {
  std::string best, all;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& k : known) {
    const std::size_t d = edit_distance(word, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
    all += (all.empty() ? "" : ", ") + k;
  }
  if (!best.empty() && best_d <= std::max<std::size_t>(2, word.size() / 3))
    return " (did you mean \"" + best + "\"?)";
  return " (" + what + ": " + all + ")";
}

std::string Range::describe(const std::string& noun) const {
  std::ostringstream os;
  os << noun;
  if (min && max) {
    os << " in " << (min_exclusive ? "(" : "[") << *min << ", " << *max
       << (max_exclusive ? ")" : "]");
  } else if (min) {
    os << (min_exclusive ? " > " : " >= ") << *min;
  } else if (max) {
    os << (max_exclusive ? " < " : " <= ") << *max;
  }
  return os.str();
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string json_text(const json& j) {
  // A list of a million numbers in an error made a line of 10 MB: long values are cut, with
  // their size said.
  constexpr std::size_t kMax = 200;
  std::string text = json_dump(j);
  if (text.size() <= kMax) return text;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  const std::string size = j.is_array()    ? counted(j.size(), "item", "items")
                           : j.is_object() ? counted(j.size(), "key", "keys")
                                           : counted(text.size(), "byte", "bytes");
  return text.substr(0, cut) + "... (" + size + " in all)";
}

std::string json_dump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

ConfigReader ConfigReader::from_json(json document, std::string source,
                                     const std::vector<std::string>& sets) {
  auto state = std::make_shared<detail::ConfigState>();
  if (!document.is_object())
    throw ConfigError(source, "/", "a JSON object at the top level", json_text(document));
  state->doc = std::move(document);
  state->source = std::move(source);
  state->sets = sets;
  for (const std::string& s : sets) {
    const std::size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError(ConfigError::FreeText{}, "--set " + s, "",
                        "expected key.path=value (e.g. solver.dt=0.002)");
    }
    const std::string key = s.substr(0, eq);
    std::string pointer;
    std::stringstream ss(key);
    std::string part;
    while (std::getline(ss, part, '.')) {
      if (part.empty())
        throw ConfigError(ConfigError::FreeText{}, "--set " + s, "", "empty key in '" + key + "'");
      pointer += "/" + part;
    }
    state->overrides.push_back({pointer, s.substr(eq + 1), "--set " + key, false});
  }
  return ConfigReader(std::move(state), "");
}

ConfigReader ConfigReader::load(const std::optional<std::filesystem::path>& file,
                                const std::vector<std::string>& sets) {
  if (!file) return from_json(json::object(), "<defaults>", sets);
  const std::string name = file->string();
  // A directory opens as a stream on Linux and then read as "invalid JSON at line 1".
  if (std::filesystem::is_directory(*file))
    throw ConfigError(ConfigError::FreeText{}, name, "", "is a directory, not a config file");
  std::ifstream in(*file);
  if (!in) {
    throw ConfigError(ConfigError::FreeText{}, name, "",
                      std::filesystem::exists(*file) ? "cannot read the file" : "no such file");
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  json doc;
  std::string duplicate;  // JSON pointer of the first key given twice in one object
  try {
    doc = json::parse(text, detail::duplicate_finder(duplicate), /*allow_exceptions=*/true,
                      /*ignore_comments=*/true);
  } catch (const detail::TooDeep&) {
    throw ConfigError(ConfigError::FreeText{}, name, "",
                      "invalid JSON: " + detail::too_deep_text());
  } catch (const json::parse_error& e) {
    throw ConfigError(ConfigError::FreeText{}, name, "",
                      "invalid JSON: " + detail::parse_error_text(e));
  } catch (const json::out_of_range& e) {
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'": no place given, so
    // it is found here.
    const std::string what = e.what();
    const std::string where = overflow_place(text);
    const std::size_t p = what.find("] ");
    throw ConfigError(ConfigError::FreeText{}, name, "",
                      "invalid JSON" + where + ": " +
                          (p == std::string::npos ? what : what.substr(p + 2)) +
                          " (beyond a double's range)");
  }
  // JSON leaves a key given twice to the reader, and the last one silently won.
  if (!duplicate.empty())
    throw ConfigError(ConfigError::FreeText{}, name, duplicate,
                      "key given twice in one object (the first value would be ignored)");
  ConfigReader reader = from_json(std::move(doc), name, sets);
  reader.state_->directory = file->parent_path();
  return reader;
}

const json& ConfigReader::resolved() const {
  return state_->resolved;
}
const std::string& ConfigReader::source() const {
  return state_->source;
}

ConfigOrigin::ConfigOrigin(std::string source, const std::vector<std::string>& sets)
    : source_(std::move(source)) {
  for (const std::string& s : sets) set_keys_.push_back(s.substr(0, s.find('=')));
}

std::string ConfigOrigin::operator()(const std::vector<std::string>& keys) const {
  // a.b is related to a, a.b and a.b.c: a --set of any of them gave (part of) the value.
  auto within = [](const std::string& inner, const std::string& outer) {
    return inner.size() >= outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
           (inner.size() == outer.size() || inner[outer.size()] == '.');
  };
  std::vector<std::string> dotted;
  for (std::string key : keys) {
    if (key.starts_with('/')) key.erase(0, 1);
    std::replace(key.begin(), key.end(), '/', '.');
    dotted.push_back(std::move(key));
  }
  std::string named;
  std::set<std::string> done;  // a key set twice is named once
  for (const std::string& set : set_keys_) {
    bool related = false;
    for (const std::string& key : dotted) related |= within(set, key) || within(key, set);
    if (related && done.insert(set).second)
      named += std::string(named.empty() ? "" : ", ") + "--set " + set;
  }
  return named.empty() ? source_ : named;
}

ConfigOrigin ConfigReader::origins() const {
  return ConfigOrigin(state_->source, state_->sets);
}

std::string ConfigReader::dotted(const std::string& key) const {
  std::string d = pointer_.empty() ? key : pointer_.substr(1) + "." + key;
  std::replace(d.begin(), d.end(), '/', '.');
  return d;
}

std::string ConfigReader::origin(const std::vector<std::string>& keys) const {
  std::vector<std::string> full;
  for (const std::string& key : keys) full.push_back(dotted(key));
  return origins()(full);
}

namespace {

/// The list indices of an override at `pointer` below the list at `list` ("/a/b" for
/// "/a/b/1" or, in a list of lists, "/a/b/1/0"); nothing if it is not an element's.
std::optional<std::vector<std::string>> element_indices(const std::string& pointer,
                                                        const std::string& list) {
  const std::string p = list + "/";
  if (pointer.size() <= p.size() || pointer.compare(0, p.size(), p) != 0) return std::nullopt;
  std::vector<std::string> indices;
  for (std::size_t at = p.size(); at <= pointer.size();) {
    const std::size_t end = std::min(pointer.find('/', at), pointer.size());
    std::string token = pointer.substr(at, end - at);
    if (token.empty() || token.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    indices.push_back(std::move(token));
    at = end + 1;
  }
  return indices;
}

}  // namespace

ConfigReader::Raw ConfigReader::raw(const std::string& key) const {
  const std::string p = pointer_ + "/" + key;
  Raw r;
  r.origin = state_->source;
  for (auto& o : state_->overrides) {
    if (o.pointer == p) {
      o.used = true;
      r.override = &o.text;
      r.origin = o.origin;
    }
  }
  if (!r.override) {
    r.value = find(state_->doc, p);
    // An element's --set changed the list: messages about the list name it.
    for (const auto& o : state_->overrides)
      if (element_indices(o.pointer, p)) r.origin = o.origin;
  }
  return r;
}

bool ConfigReader::has_element_overrides(const std::string& key) const {
  const std::string p = pointer_ + "/" + key;
  for (const auto& o : state_->overrides)
    if (element_indices(o.pointer, p)) return true;
  return false;
}

json ConfigReader::with_element_overrides(const std::string& key, json list, Raw& r) const {
  const std::string p = pointer_ + "/" + key;
  for (auto& o : state_->overrides) {
    const auto indices = element_indices(o.pointer, p);
    if (!indices) continue;
    o.used = true;
    r.origin = o.origin;
    json* element = &list;
    std::string at = p;
    for (const std::string& index : *indices) {
      if (!element->is_array())
        throw ConfigError(
            ConfigError::FreeText{}, o.origin, o.pointer,
            at + " is " + json_text(*element) + ", not a list: it has no element " + index);
      if (index.size() > 9 || std::stoul(index) >= element->size())
        throw ConfigError(ConfigError::FreeText{}, o.origin, o.pointer,
                          "index " + index + " is past the end of " + at + ", a list of " +
                              std::to_string(element->size()) +
                              "; --set changes elements of a list, it cannot add one (give the "
                              "list in the config file)");
      element = &(*element)[std::stoul(index)];
      at += "/" + index;
    }
    *element = detail::override_to_json(o.text, element->is_boolean(), element->is_number(),
                                        element->is_string(), element->is_array());
  }
  return list;
}

bool ConfigReader::has(const std::string& key) const {
  const std::string p = pointer_ + "/" + key;
  for (const auto& o : state_->overrides)
    if (o.pointer == p) return true;
  return find(state_->doc, p) != nullptr;
}

void ConfigReader::record(const std::string& key, json value) {
  state_->resolved[json::json_pointer(pointer_ + "/" + key)] = std::move(value);
}

void ConfigReader::fail_at(const Raw& r, const std::string& key, const std::string& expected,
                           const std::string& got) const {
  throw ConfigError(r.origin, pointer_ + "/" + key, expected, got);
}

ConfigReader::Raw ConfigReader::depending(Raw r, const std::string& key,
                                          const std::vector<std::string>& depends_on) const {
  if (!depends_on.empty()) {
    std::vector<std::string> keys = depends_on;
    keys.push_back(dotted(key));
    r.origin = origins()(keys);
  }
  return r;
}

void ConfigReader::fail(const std::string& key, const std::string& expected,
                        const std::vector<std::string>& depends_on) const {
  const Raw r = depending(raw(key), key, depends_on);
  // A --set shows its text as given: unquoted where it is JSON (`[5,5]`), quoted where it was
  // read as a string (`"[5,5,x]"`).
  std::string got;
  if (r.override) {
    const json parsed = parse_json(*r.override);
    got = json_text(parsed.is_discarded() ? json(*r.override) : parsed);
  } else if (r.value) {
    got = json_text(*r.value);
  }
  // A list with its elements' --sets shows as read.
  const json::json_pointer resolved_at(pointer_ + "/" + key);
  if (has_element_overrides(key) && state_->resolved.contains(resolved_at))
    got = json_text(state_->resolved[resolved_at]);
  if (got.empty()) {
    // Not given: the default, which a check across keys can fail too ("ks_max > ks_min").
    const json::json_pointer at(pointer_ + "/" + key);
    got = state_->resolved.contains(at) ? json_text(state_->resolved[at]) + " (the default)"
                                        : "nothing";
  }
  fail_at(r, key, expected, got);
}

void ConfigReader::fail_order(const std::string& low, const std::string& high, bool strict,
                              const std::string& qualifier) const {
  const bool on_low = blamed({low, high}) == low;
  const std::string& other = on_low ? high : low;
  const json::json_pointer other_at(pointer_ + "/" + other);
  const std::string other_value =
      state_->resolved.contains(other_at) ? " (" + json_text(state_->resolved[other_at]) + ")" : "";
  const std::string relation =
      on_low ? (strict ? "below " : "not above ") : (strict ? "above " : "not below ");
  fail(on_low ? low : high, "a value " + relation + other + other_value + qualifier,
       {dotted(other)});
}

std::string ConfigReader::blamed(const std::vector<std::string>& keys) const {
  for (auto k = keys.rbegin(); k != keys.rend(); ++k)
    if (has(*k) || has_element_overrides(*k)) return *k;
  return keys.back();
}

void ConfigReader::fail_together(const std::vector<std::string>& keys,
                                 const std::string& expected) const {
  const std::string key = blamed(keys);
  std::vector<std::string> others;
  for (const std::string& k : keys)
    if (k != key) others.push_back(dotted(k));
  fail(key, expected, others);
}

std::filesystem::path ConfigReader::resolve_file(const std::string& key,
                                                 const std::string& file) const {
  std::filesystem::path path(file);
  if (path.is_relative() && !raw(key).override) path = state_->directory / path;
  return path;
}

void ConfigReader::get_output_file(const std::string& key, std::string& file) {
  get(key, file);
  if (!file.empty()) file = resolve_file(key, file).string();
}

void ConfigReader::get_input_file(const std::string& key, std::string& file,
                                  const std::vector<std::string>& stem_suffixes) {
  get(key, file);
  if (file.empty()) return;
  const Raw r = raw(key);
  const std::filesystem::path path = resolve_file(key, file);
  // A directory, a missing file or one without read permission are all mistakes in the name.
  const auto readable = [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && std::ifstream(p).good();
  };
  bool found = readable(path);
  for (const auto& suffix : stem_suffixes) {
    if (found) break;
    found = readable(std::filesystem::path(path.string() + suffix));
  }
  if (!found) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    const std::string why = !std::filesystem::exists(status)            ? "no such file"
                            : std::filesystem::is_directory(status)     ? "a directory"
                            : !std::filesystem::is_regular_file(status) ? "not a regular file"
                                                                        : "cannot be read";
    std::string expected = "an existing file";
    if (!stem_suffixes.empty()) {
      expected += " (or a stem with";
      for (std::size_t i = 0; i < stem_suffixes.size(); ++i)
        expected += (i ? ", " : " ") + stem_suffixes[i];
      expected += ")";
    }
    fail_at(r, key, expected, json_text(json(file)) + " (" + path.string() + ": " + why + ")");
  }
  file = path.string();
}

void ConfigReader::require_input_file(const std::string& key, std::string& file,
                                      const std::vector<std::string>& stem_suffixes) {
  if (!has(key)) fail(key, "a file name (this key is required)");
  get_input_file(key, file, stem_suffixes);
  if (file.empty()) fail(key, "a file name");
}

void ConfigReader::get_json(const std::string& key, json& value) {
  Raw r = raw(key);
  if (r.override)
    value = detail::override_to_json(*r.override, false, false, false, false);
  else if (r.value)
    value = *r.value;
  // An element of a list in it ("scene.tank.vertices.1=[2,0]", "...vertices.1.0=2"), as the
  // typed lists take them.
  if (has_element_overrides(key)) value = with_element_overrides(key, std::move(value), r);
  // The typed values' bound (kMaxConfigMagnitude) holds here too: a velocity of 1e308 in a
  // free-form list failed in the run.
  const std::function<double(const json&)> largest = [&](const json& j) {
    double m = 0;
    if (j.is_number_float()) m = std::abs(j.get<double>());
    if (j.is_structured())
      for (const auto& e : j) m = std::max(m, largest(e));
    return m;
  };
  if (largest(value) > kMaxConfigMagnitude)
    fail_at(r, key, "values of magnitude at most 1e15", json_text(value));
  record(key, value);
}

ConfigReader ConfigReader::child(const std::string& key) {
  const std::string p = pointer_ + "/" + key;
  for (auto& o : state_->overrides) {
    if (o.pointer == p) {
      o.used = true;
      throw ConfigError(o.origin, p,
                        "a key inside this section (e.g. " + o.origin.substr(6) + ".<key>=value)",
                        "a value for the section itself");
    }
  }
  if (const json* v = find(state_->doc, p); v && !v->is_object())
    throw ConfigError(state_->source, p, "an object", json_text(*v));
  const json::json_pointer jp(p);
  if (!state_->resolved.contains(jp)) state_->resolved[jp] = json::object();
  return ConfigReader(state_, p);
}

void ConfigReader::finish() const {
  const json& resolved = state_->resolved;
  // Keys in the document that no reader asked for.
  std::function<void(const json&, const std::string&)> walk = [&](const json& node,
                                                                  const std::string& p) {
    const json* known = find(resolved, p);
    if (!known) return;
    if (node.is_object() && known->is_object()) {
      for (const auto& [k, v] : node.items()) {
        const std::string kp = p + "/" + k;
        if (!find(resolved, kp)) {
          throw ConfigError(ConfigError::FreeText{}, state_->source, kp,
                            "unknown key \"" + k + "\"" + suggestion(k, *known));
        }
        walk(v, kp);
      }
    } else if (node.is_array() && known->is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], p + "/" + std::to_string(i));
    }
  };
  walk(state_->doc, "");
  for (const auto& o : state_->overrides) {
    if (o.used) continue;
    // The first part of the key that is not there is named: an index past the end of a list
    // ("bodies.1.alpha" with one body), a word where a list wants an index ("bodies.-1",
    // "bodies.00": "unknown key alpha", "past the end"), a misspelt group ("solverr.dt":
    // "unknown key dt (no keys are known here)").
    std::string prefix;
    for (std::size_t at = 1; at <= o.pointer.size();) {
      const std::size_t end = std::min(o.pointer.find('/', at), o.pointer.size());
      const std::string token = o.pointer.substr(at, end - at);
      const json* here = find(resolved, prefix);
      const bool there = find(resolved, prefix + "/" + token) != nullptr;
      if (here && here->is_array() && !there) {
        const bool index = !token.empty() &&
                           token.find_first_not_of("0123456789") == std::string::npos &&
                           (token.size() == 1 || token[0] != '0');
        if (!index)
          throw ConfigError(ConfigError::FreeText{}, o.origin, o.pointer,
                            "expected an index of " + prefix + ", a list of " +
                                std::to_string(here->size()) + " (0 for the first), got \"" +
                                token + "\"");
        throw ConfigError(ConfigError::FreeText{}, o.origin, o.pointer,
                          "index " + token + " is past the end of " + prefix + ", a list of " +
                              std::to_string(here->size()) +
                              "; --set changes elements of a list, it cannot add one (give the "
                              "list in the config file)");
      }
      if (here && here->is_object() && !there && end < o.pointer.size())
        throw ConfigError(ConfigError::FreeText{}, o.origin, prefix + "/" + token,
                          "unknown key \"" + token + "\"" + suggestion(token, *here));
      prefix += "/" + token;
      at = end + 1;
    }
    const json* parent = find(resolved, parent_pointer(o.pointer));
    throw ConfigError(ConfigError::FreeText{}, o.origin, o.pointer,
                      "unknown key \"" + last_token(o.pointer) + "\"" +
                          suggestion(last_token(o.pointer), parent ? *parent : json()));
  }
}

}  // namespace datadyn::app
