#pragma once
/// @file
/// The message of the IoError a call throws, for tests that check what an error names.

#include <string>
#include <utility>

#include "core/errors.hpp"

namespace datadyn::test {

/// The IoError message of f(), or "(no IoError)" if it returned or threw something else.
template <class F>
std::string io_error_message(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no IoError)";
}

}  // namespace datadyn::test
