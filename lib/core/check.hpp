#pragma once
/// @file
/// CHECK macros for programmer errors (pbrt style): on failure they throw InternalError with the
/// expression, both operands and the source location. They stay on in release builds.

#include <sstream>

#include "core/errors.hpp"

namespace datadyn::detail {
template <class A, class B>
[[noreturn]] void check_failed(const char* expr, const A& a, const B& b, const char* file,
                               int line) {
  std::ostringstream os;
  os << file << ":" << line << ": check failed: " << expr << " (" << a << " vs " << b << ")";
  throw InternalError(os.str());
}
[[noreturn]] inline void check_failed(const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << file << ":" << line << ": check failed: " << expr;
  throw InternalError(os.str());
}
}  // namespace datadyn::detail

#define DATADYN_CHECK(cond) \
  ((cond) ? (void)0 : ::datadyn::detail::check_failed(#cond, __FILE__, __LINE__))
#define DATADYN_CHECK_OP_(a, b, op)                                                         \
  do {                                                                                      \
    const auto& dd_a_ = (a);                                                                \
    const auto& dd_b_ = (b);                                                                \
    if (!(dd_a_ op dd_b_))                                                                  \
      ::datadyn::detail::check_failed(#a " " #op " " #b, dd_a_, dd_b_, __FILE__, __LINE__); \
  } while (0)
#define DATADYN_CHECK_EQ(a, b) DATADYN_CHECK_OP_(a, b, ==)
#define DATADYN_CHECK_NE(a, b) DATADYN_CHECK_OP_(a, b, !=)
#define DATADYN_CHECK_LT(a, b) DATADYN_CHECK_OP_(a, b, <)
#define DATADYN_CHECK_LE(a, b) DATADYN_CHECK_OP_(a, b, <=)
#define DATADYN_CHECK_GT(a, b) DATADYN_CHECK_OP_(a, b, >)
#define DATADYN_CHECK_GE(a, b) DATADYN_CHECK_OP_(a, b, >=)
