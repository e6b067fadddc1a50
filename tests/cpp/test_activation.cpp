// gelu_tanh, gelu_erf, silu and swiglu (attnlens/activation.hpp) against float64 definitions
// (tanh, erf and exp of <cmath> in double), for both kernels, lengths off the lane count and
// arguments from −30 to 30 (where exp over- and underflows); and threads bit-identical to one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnlens/activation.hpp"
#include "attnlens/threads.hpp"
#include "support.hpp"

namespace {

enum class Which { gelu_tanh, gelu_erf, silu, swiglu };
const Which kAll[] = {Which::gelu_tanh, Which::gelu_erf, Which::silu, Which::swiglu};
const char* name(Which w) {
  return w == Which::gelu_tanh ? "gelu_tanh" : w == Which::gelu_erf ? "gelu_erf" : w == Which::silu ? "silu" : "swiglu";
}

double reference(Which w, double x, double up) {
  switch (w) {
    case Which::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Which::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Which::silu: return x / (1 + std::exp(-x));
    case Which::swiglu: return x / (1 + std::exp(-x)) * up;
  }
  return 0;
}

std::vector<float> apply(Which w, std::vector<float> x, const std::vector<float>& up, attnlens::Kernel k) {
  switch (w) {
    case Which::gelu_tanh: attnlens::gelu_tanh(x.data(), x.size(), k); break;
    case Which::gelu_erf: attnlens::gelu_erf(x.data(), x.size(), k); break;
    case Which::silu: attnlens::silu(x.data(), x.size(), k); break;
    case Which::swiglu: attnlens::swiglu(x.data(), up.data(), x.size(), k); break;
  }
  return x;
}

// x spread over [−30, 30], plus exact zeros and the ends.
std::vector<float> arguments(std::size_t n, std::uint32_t seed) {
  std::vector<float> x = support::uniform(n, seed);
  for (float& v : x) v *= 30.0f;
  if (n > 2) x[0] = 0.0f, x[1] = -30.0f, x[n - 1] = 30.0f;
  return x;
}

}  // namespace

TEST_CASE("activations match float64 definitions") {
  for (attnlens::Kernel kernel : support::kernels())
    for (Which w : kAll)
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{255}, std::size_t{1001}}) {
        const auto x = arguments(n, static_cast<std::uint32_t>(n) + 7);
        const auto up = support::uniform(n, static_cast<std::uint32_t>(n) + 8);
        const auto got = apply(w, x, up, kernel);
        double worst = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double want = reference(w, x[i], up[i]);
          // Relative to the value, with an absolute floor where it is near 0 (x·σ(x) at x ≪ 0).
          worst = std::max(worst, std::abs(got[i] - want) / std::max(1e-6, std::abs(want)));
        }
        INFO(std::string(name(w)), " ", std::string(support::name(kernel)), " n=", n);
        CHECK(worst < 2e-6);
      }
}

TEST_CASE("activations leave an empty array alone and never produce NaN at the ends") {
  attnlens::gelu_tanh(nullptr, 0);
  std::vector<float> x = {-100.0f, -88.9f, 88.9f, 100.0f, -0.0f};
  for (Which w : kAll) {
    const auto got = apply(w, x, std::vector<float>(x.size(), 1.0f), attnlens::Kernel::simd);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO(std::string(name(w)), " x=", x[i]);
      CHECK(std::isfinite(got[i]));
      CHECK(std::abs(got[i] - reference(w, x[i], 1.0)) <= 1e-6 * std::max(1.0, std::abs(double(x[i]))));
    }
  }
}

TEST_CASE("threaded activations are bit-identical to one thread") {
  if (attnlens::max_threads() == 1) return;  // a build without threads
  for (attnlens::Kernel kernel : support::kernels())
    for (Which w : kAll) {
      const std::size_t n = 3 * 65536 + 5;  // several chunks and a scalar tail
      const auto x = arguments(n, 91), up = support::uniform(n, 92);
      attnlens::set_threads(1);
      const auto serial = apply(w, x, up, kernel);
      for (unsigned threads : {2u, 3u}) {
        attnlens::set_threads(threads);
        const auto split = apply(w, x, up, kernel);
        INFO(std::string(name(w)), " ", std::string(support::name(kernel)), " threads=", threads);
        CHECK(attnlens::last_call_chunks() > 1);
        CHECK(std::memcmp(serial.data(), split.data(), n * sizeof(float)) == 0);
      }
    }
  attnlens::set_threads(1);
}
