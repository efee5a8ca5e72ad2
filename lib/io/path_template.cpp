#include "io/path_template.hpp"

#include <algorithm>
#include <optional>

#include "core/errors.hpp"

namespace datadyn::io {

namespace {

/// A frame token in a file name: [pos, pos + length), zero-padded to `width` digits.
struct Token {
  std::size_t pos = 0, length = 0;
  int width = 0;
};

std::optional<Token> find_token(const std::string& name, const std::string& full) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '#') {
      std::size_t j = i;
      while (j < name.size() && name[j] == '#') ++j;
      return Token{i, j - i, static_cast<int>(j - i)};
    }
    if (name[i] == '%') {
      if (i + 1 < name.size() && name[i + 1] == '%') {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      int width = 0;
      if (j < name.size() && name[j] == '0') {
        ++j;
        while (j < name.size() && name[j] >= '0' && name[j] <= '9')
          width = width * 10 + (name[j++] - '0');
      }
      if (j < name.size() && name[j] == 'd' && width <= 32) return Token{i, j + 1 - i, width};
      throw UsageError("output template '" + full + "': expected %d or %0Nd (e.g. %04d) at '" +
                       name.substr(i) + "'");
    }
  }
  return std::nullopt;
}

std::string unescape_percent(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '%' && i + 1 < s.size() && s[i + 1] == '%') ++i;
  }
  return out;
}

std::string padded(std::int64_t frame, int width) {
  const bool negative = frame < 0;
  std::string digits = std::to_string(negative ? -frame : frame);
  const std::size_t want = static_cast<std::size_t>(std::max(0, width - (negative ? 1 : 0)));
  if (digits.size() < want) digits.insert(0, want - digits.size(), '0');
  return (negative ? "-" : "") + digits;
}

}  // namespace

bool has_frame_token(const std::filesystem::path& path) {
  return find_token(path.filename().string(), path.string()).has_value();
}

std::filesystem::path expand_frame(const std::filesystem::path& path, std::int64_t frame) {
  const std::string name = path.filename().string();
  const auto token = find_token(name, path.string());
  if (!token)
    throw UsageError("output template '" + path.string() +
                     "': expected a frame token (#### or %04d) in the file name");
  const std::string before = unescape_percent(name.substr(0, token->pos));
  const std::string after = name.substr(token->pos + token->length);
  // Only the first token is replaced; a later % must still be a valid (escaped) one.
  (void)find_token(after, path.string());
  return path.parent_path() / (before + padded(frame, token->width) + unescape_percent(after));
}

std::filesystem::path with_frame_token(const std::filesystem::path& path) {
  if (has_frame_token(path)) return path;
  const std::string ext = path.extension().string();
  const std::string stem = path.stem().string();
  return path.parent_path() / (stem + ".####" + ext);
}

std::filesystem::path expand_sequence(const std::filesystem::path& path,
                                      const std::string& sequence, bool insert) {
  std::string s = path.string();
  static const std::string key = "{sequence}";
  bool found = false;
  for (std::size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + sequence.size())) {
    s.replace(p, key.size(), sequence);
    found = true;
  }
  if (found || !insert) return s;
  const std::string name = path.filename().string();
  std::size_t cut = name.find('.', 1);
  if (cut == std::string::npos) cut = name.size();
  return path.parent_path() / (name.substr(0, cut) + "_" + sequence + name.substr(cut));
}

std::filesystem::path replace_extension(const std::filesystem::path& path,
                                        const std::string& extension) {
  std::filesystem::path p = path;
  p.replace_extension(extension);
  return p;
}

std::filesystem::path sidecar(const std::filesystem::path& path, const std::string& suffix) {
  std::string s = path.string();
  if (path.has_stem() && path.extension() == ".h5") s.resize(s.size() - 3);
  return s + suffix;
}

}  // namespace datadyn::io
