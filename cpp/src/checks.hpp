// Shared argument checks: each returns "" when fine, or a message naming the argument.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <string>

#include "attnlens/span.hpp"

namespace attnlens::checks {

// a·b·c without overflow, or 0 when it would exceed what a buffer of floats can index.
inline std::size_t product(std::size_t a, std::size_t b, std::size_t c = 1) {
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / sizeof(float);
  if (a == 0 || b == 0 || c == 0) return 0;
  if (a > limit / b) return 0;
  const std::size_t ab = a * b;
  if (ab > limit / c) return 0;
  return ab * c;
}

inline std::string positive(const char* name, std::size_t value) {
  if (value > 0) return {};
  return std::string(name) + " must be a positive integer (got 0)";
}

inline std::string length(const char* name, std::size_t got, std::size_t want, const char* shape) {
  if (got == want) return {};
  return std::string(name) + " must have " + std::to_string(want) + " elements (" + shape +
         "), got " + std::to_string(got);
}

// A buffer that claims elements must have an address (a null Span{nullptr, n} would be read or
// written through, or silently ignored).
template <class T>
inline std::string not_null(const char* name, Span<T> buffer) {
  if (buffer.data || buffer.size == 0) return {};
  return std::string(name) + " has " + std::to_string(buffer.size) + " elements but no data (null)";
}

inline std::string too_large(const char* what) {
  return std::string(what) + " is too large to address in memory";
}

inline std::string scale(float value) {
  if (std::isfinite(value) && value > 0) return {};
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", static_cast<double>(value));
  return std::string("scale must be a finite number > 0 (got ") + shown + ")";
}

}  // namespace attnlens::checks
