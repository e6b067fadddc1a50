// Test helpers: seeded random data, error measures and exception messages.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnlens/kernel.hpp"

namespace support {

inline std::vector<float> uniform(std::size_t n, std::uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

inline double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) m = std::max(m, std::abs(double(got[i]) - want[i]));
  return m;
}

// max |got − want| / max(|want|, tiny): the error relative to the magnitude of the result.
inline double normalised_error(const std::vector<float>& got, const std::vector<double>& want) {
  double scale = 1e-30;
  for (double w : want) scale = std::max(scale, std::abs(w));
  return max_abs_diff(got, want) / scale;
}

inline std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every kernel this binary has: the SIMD instantiation (when compiled in) and the scalar one.
inline std::vector<attnlens::Kernel> kernels() {
  if (attnlens::simd_available()) return {attnlens::Kernel::simd, attnlens::Kernel::scalar};
  return {attnlens::Kernel::scalar};
}

inline const char* name(attnlens::Kernel k) {
  return k == attnlens::Kernel::simd ? attnlens::simd_arch_name() : "scalar";
}

}  // namespace support
