#pragma once
// The whole content of a file, for byte-for-byte comparisons of outputs.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace datadyn::test {

/// Throws when the file cannot be opened, so two missing files never compare equal.
inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace datadyn::test
