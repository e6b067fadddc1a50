// linear(): y = x · Wᵀ + bias with W in nn.Linear's [out, in] layout at float32, float16 or
// bfloat16, against a float64 reference that decodes the 16-bit formats from their definition
// (sign, exponent, mantissa; std::ldexp), for both kernels, the matrix-vector path (m = 1) and
// the packed one, shapes off the lane count, with and without bias; and threads bit-identical
// to one thread.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attnlens/linear.hpp"
#include "attnlens/threads.hpp"
#include "support.hpp"

using attnlens::WeightMatrix;
using attnlens::WeightType;

namespace {

// Float16 and bfloat16 by definition, in float64.
double f16_value(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                         : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}
double bf16_value(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 7) & 255, mantissa = h & 127;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -133)
                                         : std::ldexp(128 + mantissa, exponent - 134);
  return sign ? -magnitude : magnitude;
}

// A random weight matrix of `type`: float32 in [−1, 1]; float16 with exponents 0–15 (|w| < 2,
// subnormals about one in sixteen, all of them with `subnormal`); bfloat16 with |w| in [2^−16, 2).
struct Weights {
  WeightType type;
  std::size_t out, in;
  std::vector<float> f32;
  std::vector<std::uint16_t> bits;
  std::vector<double> value;  // the exact value of every element
  WeightMatrix matrix() const {
    return {type == WeightType::f32 ? static_cast<const void*>(f32.data()) : bits.data(), type, out, in};
  }
};

Weights make_weights(WeightType type, std::size_t out, std::size_t in, std::uint32_t seed,
                     bool subnormal = false) {
  Weights w{type, out, in, {}, {}, {}};
  const std::size_t count = out * in;
  std::mt19937 rng(seed);
  if (type == WeightType::f32) {
    w.f32 = support::uniform(count, seed);
    w.value.assign(w.f32.begin(), w.f32.end());
    return w;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t r = rng();
    std::uint16_t h;
    if (type == WeightType::f16) {
      const std::uint32_t exponent = subnormal ? 0 : (r >> 11) % 16;
      h = static_cast<std::uint16_t>((r & 0x8000u) | exponent << 10 | (r & 0x3FFu));
      w.value.push_back(f16_value(h));
    } else {
      const std::uint32_t exponent = 112 + (r >> 8) % 16;
      h = static_cast<std::uint16_t>((r & 0x8000u) | exponent << 7 | (r & 0x7Fu));
      w.value.push_back(bf16_value(h));
    }
    w.bits.push_back(h);
  }
  return w;
}

std::vector<double> reference(std::size_t m, const std::vector<float>& x, const Weights& w,
                              const std::vector<float>& bias) {
  std::vector<double> y(m * w.out);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t o = 0; o < w.out; ++o) {
      double sum = bias.empty() ? 0.0 : bias[o];
      for (std::size_t c = 0; c < w.in; ++c) sum += double(x[i * w.in + c]) * w.value[o * w.in + c];
      y[i * w.out + o] = sum;
    }
  return y;
}

std::vector<float> run(std::size_t m, const std::vector<float>& x, const Weights& w,
                       const std::vector<float>& bias, attnlens::Kernel kernel) {
  std::vector<float> y(m * w.out, -7.0f);
  attnlens::linear(m, x.data(), w.matrix(), bias.empty() ? nullptr : bias.data(), y.data(), kernel);
  return y;
}

const char* type_name(WeightType t) {
  return t == WeightType::f32 ? "f32" : t == WeightType::f16 ? "f16" : "bf16";
}

constexpr WeightType kTypes[] = {WeightType::f32, WeightType::f16, WeightType::bf16};

}  // namespace

TEST_CASE("16-bit conversions are exact") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (((h >> 10) & 31) != 31) REQUIRE(double(attnlens::f16_to_f32(bits)) == f16_value(bits));
    if (((h >> 7) & 255) != 255) REQUIRE(double(attnlens::bf16_to_f32(bits)) == bf16_value(bits));
  }
  CHECK(std::isinf(attnlens::f16_to_f32(0x7C00)));
  CHECK(std::isnan(attnlens::f16_to_f32(0x7E00)));
  CHECK(attnlens::f16_to_f32(0x0001) == std::ldexp(1.0f, -24));
  CHECK(attnlens::f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(attnlens::weight_type_size(WeightType::f32) == 4);
  CHECK(attnlens::weight_type_size(WeightType::f16) == 2);
  CHECK(attnlens::weight_type_size(WeightType::bf16) == 2);
}

TEST_CASE("the kernels widen every finite 16-bit value exactly") {
  // Rows of 32 consecutive bit patterns times one-hot inputs: y[i, r] = w[r, j_i] exactly.
  constexpr std::size_t in = 32, rows = 65536 / in;
  for (WeightType type : {WeightType::f16, WeightType::bf16}) {
    std::vector<std::uint16_t> bits(65536);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const bool finite = type == WeightType::f16 ? ((i >> 10) & 31) != 31 : ((i >> 7) & 255) != 255;
      bits[i] = static_cast<std::uint16_t>(finite ? i : 0);
    }
    const WeightMatrix w{bits.data(), type, rows, in};
    for (attnlens::Kernel kernel : support::kernels())
      for (std::size_t m : {1, 5})  // the matrix-vector kernel, then packed panels
        for (std::size_t j = 0; j < in; j += m) {
          std::vector<float> x(m * in, 0.0f), y(m * rows);
          for (std::size_t i = 0; i < m; ++i) x[i * in + (j + i) % in] = 1.0f;
          attnlens::linear(m, x.data(), w, nullptr, y.data(), kernel);
          std::size_t wrong = 0;
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t r = 0; r < rows; ++r) {
              const std::uint16_t h = bits[r * in + (j + i) % in];
              const double want = type == WeightType::f16 ? f16_value(h) : bf16_value(h);
              wrong += double(y[i * rows + r]) != want;
            }
          INFO(std::string(support::name(kernel)), " ", std::string(type_name(type)), " m=", m, " j=", j);
          CHECK(wrong == 0);
        }
  }
}

TEST_CASE("weight_row widens one row exactly") {
  for (WeightType type : kTypes) {
    const Weights w = make_weights(type, 5, 37, 11);
    std::vector<float> row(37);
    attnlens::weight_row(w.matrix(), 3, row.data());
    for (std::size_t c = 0; c < 37; ++c) CHECK(double(row[c]) == w.value[3 * 37 + c]);
  }
}

TEST_CASE("linear matches a float64 reference for every type, shape and kernel") {
  const std::size_t ms[] = {1, 2, 3, 4, 5, 17, 64, 130};
  const std::size_t ins[] = {1, 7, 37, 64, 130};
  const std::size_t outs[] = {1, 5, 29, 48, 67};
  std::uint32_t seed = 100;
  for (attnlens::Kernel kernel : support::kernels())
    for (WeightType type : kTypes)
      for (std::size_t in : ins)
        for (std::size_t out : outs) {
          const Weights w = make_weights(type, out, in, ++seed);
          const auto bias = support::uniform(out, seed + 1);
          for (std::size_t m : ms) {
            const auto x = support::uniform(m * in, seed + 2 + std::uint32_t(m));
            for (bool with_bias : {false, true}) {
              const std::vector<float> b = with_bias ? bias : std::vector<float>{};
              const auto got = run(m, x, w, b, kernel);
              INFO(std::string(support::name(kernel)), " ", std::string(type_name(type)), " m=", m, " in=", in,
                   " out=", out, " bias=", with_bias);
              CHECK(support::normalised_error(got, reference(m, x, w, b)) < 2e-6 * std::sqrt(double(in) + 1));
            }
          }
        }
}

TEST_CASE("float16 subnormal weights are widened exactly") {
  for (attnlens::Kernel kernel : support::kernels())
    for (std::size_t m : {1, 3, 17}) {
      const Weights w = make_weights(WeightType::f16, 21, 70, 7, true);
      const auto x = support::uniform(m * 70, 8);
      const auto got = run(m, x, w, {}, kernel);
      const auto want = reference(m, x, w, {});
      INFO(std::string(support::name(kernel)), " m=", m);
      // The results are around 2^−20: a flush to zero would give a normalised error of 1.
      CHECK(support::normalised_error(got, want) < 1e-5);
      double largest = 0;
      for (double v : want) largest = std::max(largest, std::abs(v));
      CHECK(largest > 1e-7);
    }
}

TEST_CASE("linear with an empty sum gives the bias") {
  const std::vector<float> bias = {1, 2, 3};
  std::vector<float> y(6, -1.0f);
  attnlens::linear(2, nullptr, {nullptr, WeightType::f16, 3, 0}, bias.data(), y.data());
  CHECK(y == std::vector<float>{1, 2, 3, 1, 2, 3});
  attnlens::linear(2, nullptr, {nullptr, WeightType::f32, 3, 0}, nullptr, y.data());
  CHECK(y == std::vector<float>(6, 0.0f));
}

TEST_CASE("threaded linear is bit-identical to one thread") {
  if (attnlens::max_threads() == 1) return;  // a build without threads
  struct Shape {
    std::size_t m, in, out;
  };
  // The matrix-vector path (m = 1) and the packed one (from m = 2), each large enough to be split.
  const Shape shapes[] = {{1, 768, 3001}, {2, 515, 2000}, {4, 300, 2500}, {17, 257, 1003},
                          {64, 300, 500}, {130, 129, 333}};
  for (attnlens::Kernel kernel : support::kernels())
    for (WeightType type : kTypes) {
      std::uint32_t seed = 500;
      for (const Shape& s : shapes) {
        const Weights w = make_weights(type, s.out, s.in, ++seed);
        const auto x = support::uniform(s.m * s.in, seed + 1);
        const auto bias = support::uniform(s.out, seed + 2);
        attnlens::set_threads(1);
        const auto serial = run(s.m, x, w, bias, kernel);
        for (unsigned threads : {2u, 3u, 4u}) {
          attnlens::set_threads(threads);
          const auto split = run(s.m, x, w, bias, kernel);
          INFO(std::string(support::name(kernel)), " ", std::string(type_name(type)), " m=", s.m, " in=", s.in,
               " out=", s.out, " threads=", threads);
          CHECK(attnlens::last_call_chunks() > 1);
          CHECK(std::memcmp(serial.data(), split.data(), serial.size() * sizeof(float)) == 0);
        }
      }
    }
  // A small call stays on the calling thread.
  const Weights small = make_weights(WeightType::f16, 16, 32, 3);
  run(1, support::uniform(32, 4), small, {}, attnlens::Kernel::simd);
  CHECK(attnlens::last_call_chunks() == 1);
  attnlens::set_threads(1);
}
