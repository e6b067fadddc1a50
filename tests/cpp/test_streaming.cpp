// The output-only path: attention() with no `weights` (and no `scores`) buffer streams over key
// blocks with an online softmax. Checked against the float64 reference and against the two-pass
// path (weights requested) on shapes that straddle every block and tile boundary of every
// instantiation (query blocks of 24/40/48/64, key blocks of 48/64/96, tiles of 3 to 8), with
// causal and padding masks, fully masked blocks and rows, and extreme scores.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnlens/attention.hpp"
#include "attnlens/probe.hpp"
#include "reference.hpp"
#include "support.hpp"

using attnlens::AttentionOptions;
using attnlens::AttentionShape;

namespace {

struct Run {
  std::vector<float> output, weights;
};

// Streaming when with_weights is false, two-pass when true.
Run run(const AttentionShape& s, const std::vector<float>& q, const std::vector<float>& k,
        const std::vector<float>& v, const AttentionOptions& options, attnlens::Kernel kernel,
        bool with_weights) {
  Run r;
  r.output.assign(s.heads * s.n_q * s.d_v, std::numeric_limits<float>::quiet_NaN());
  if (with_weights) r.weights.assign(s.heads * s.n_q * s.n_k, -1.0f);
  attnlens::attention(s, {q, k, v}, options, {r.output, r.weights, {}}, kernel);
  return r;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

std::size_t non_finite(const std::vector<float>& x) {
  std::size_t count = 0;
  for (float f : x) count += !std::isfinite(f);
  return count;
}

enum class Mask { none, random, first_keys, every_other_block, drop_first };

std::vector<std::uint8_t> make_mask(Mask kind, std::size_t n_k, std::uint32_t seed) {
  std::vector<std::uint8_t> mask;
  switch (kind) {
    case Mask::none:
      break;
    case Mask::random:
      for (float x : support::uniform(n_k, seed, 0, 1)) mask.push_back(x < 0.6f);
      break;
    case Mask::first_keys:  // whole leading key blocks masked: the first visible block comes late
      mask.assign(n_k, 1);
      for (std::size_t j = 0; j < std::min<std::size_t>(n_k - 1, 130); ++j) mask[j] = 0;
      break;
    case Mask::every_other_block:
      mask.assign(n_k, 1);
      for (std::size_t j = 0; j < n_k; ++j) mask[j] = (j / 37) % 2 == 0;
      break;
    case Mask::drop_first:
      mask.assign(n_k, 1);
      mask[0] = 0;
      break;
  }
  return mask;
}

struct Case {
  AttentionShape shape;
  bool causal = false;
  Mask mask = Mask::none;
};

// n around the query blocks (24, 40, 48, 64), key blocks (48, 60/64, 96) and tiles; dV that is
// and is not a whole number of value tiles; dK from 1 to 80.
const Case kCases[] = {
    {{1, 1, 1, 1, 1}},
    {{1, 1, 200, 8, 8}},                      // one query, many key blocks
    {{1, 200, 1, 8, 8}},                      // one key
    {{2, 23, 47, 16, 16}},
    {{2, 24, 48, 16, 16}},
    {{2, 25, 49, 16, 16}},
    {{1, 39, 63, 32, 32}},
    {{1, 40, 64, 32, 32}},
    {{1, 41, 65, 32, 32}},
    {{1, 47, 95, 64, 64}},
    {{1, 49, 97, 64, 64}},
    {{1, 63, 129, 64, 64}},
    {{1, 65, 193, 64, 64}},
    {{3, 97, 131, 5, 7}},                     // odd widths: dV padded to whole tiles
    {{2, 130, 70, 80, 3}},
    {{1, 257, 255, 64, 64}},
    {{2, 50, 50, 12, 20}, true},              // causal, square
    {{1, 129, 129, 64, 64}, true},
    {{1, 200, 60, 16, 16}, true},             // causal, nQ > nK
    {{1, 60, 200, 16, 16}, true},             // causal, nQ < nK: later keys never visible
    {{2, 100, 150, 16, 8}, false, Mask::random},
    {{1, 150, 300, 16, 16}, false, Mask::first_keys},
    {{1, 200, 200, 16, 16}, true, Mask::first_keys},  // queries < 130 see nothing: zero rows
    {{1, 90, 300, 16, 16}, false, Mask::every_other_block},
    {{2, 70, 70, 8, 8}, true, Mask::drop_first},      // query 0 sees nothing
    {{1, 66, 131, 9, 9}, true, Mask::random},
};

}  // namespace

TEST_CASE("streaming output matches the float64 reference and the two-pass path") {
  for (attnlens::Kernel kernel : support::kernels()) {
    std::uint32_t seed = 100;
    for (const Case& c : kCases) {
      const auto& s = c.shape;
      seed += 10;
      const auto q = support::uniform(s.heads * s.n_q * s.d_k, seed);
      const auto k = support::uniform(s.heads * s.n_k * s.d_k, seed + 1);
      const auto v = support::uniform(s.heads * s.n_k * s.d_v, seed + 2);
      const auto mask = make_mask(c.mask, s.n_k, seed + 3);
      AttentionOptions options;
      options.causal = c.causal;
      options.key_mask = {mask.data(), mask.size()};
      const double scale = 1.0 / std::sqrt(double(s.d_k));
      const auto want = reference::attention(s.heads, s.n_q, s.n_k, s.d_k, s.d_v, q, k, v, scale,
                                             c.causal, mask);
      const Run stream = run(s, q, k, v, options, kernel, false);
      const Run full = run(s, q, k, v, options, kernel, true);
      INFO("kernel ", support::name(kernel), " h=", s.heads, " nQ=", s.n_q, " nK=", s.n_k,
           " dK=", s.d_k, " dV=", s.d_v, " causal=", c.causal, " mask=", int(c.mask));
      CHECK(non_finite(stream.output) == 0);
      CHECK(support::max_abs_diff(stream.output, want.output) <= 1e-5);
      CHECK(max_abs_diff(stream.output, full.output) <= 1e-5);
      CHECK(support::max_abs_diff(full.weights, want.weights) <= 1e-5);
      // Rows with nothing visible: exactly zero output in both paths.
      std::size_t bad_zero_rows = 0;
      for (std::size_t r = 0; r < s.heads * s.n_q; ++r) {
        double want_sum = 0;
        for (std::size_t j = 0; j < s.n_k; ++j) want_sum += want.weights[r * s.n_k + j];
        if (want_sum != 0) continue;
        for (std::size_t p = 0; p < s.d_v; ++p) {
          const std::size_t at = r * s.d_v + p;
          bad_zero_rows += stream.output[at] != 0.0f || full.output[at] != 0.0f;
        }
      }
      CHECK(bad_zero_rows == 0);
    }
  }
}

TEST_CASE("streaming is stable when the row max jumps by 1e4 between key blocks") {
  // Query (100, 100) against keys whose scores are −1e4 for the first 150 keys, then 0, then
  // +1e4 and 1e4 − 1 at keys 250, 251: the running max jumps by 1e4 mid-row, so the output
  // accumulated so far is rescaled by exp(−2e4) = 0 without producing NaN.
  const std::size_t n_k = 300;
  std::vector<float> q = {100, 100}, k(n_k * 2), v(n_k);
  for (std::size_t j = 0; j < n_k; ++j) {
    const float x = j < 150 ? -50.0f : j == 250 || j == 251 ? 50.0f : 0.0f;
    k[2 * j] = x;
    k[2 * j + 1] = j == 251 ? 49.99f : x;  // score 1e4 − 1
    v[j] = float(j);
  }
  AttentionOptions options;
  options.scale = 1.0f;
  for (attnlens::Kernel kernel : support::kernels()) {
    const AttentionShape s{1, 1, n_k, 2, 1};
    const Run stream = run(s, q, k, v, options, kernel, false);
    const Run full = run(s, q, k, v, options, kernel, true);
    const double e = std::exp(-1.0), want = (250 + 251 * e) / (1 + e);
    INFO("kernel ", support::name(kernel));
    CHECK(stream.output[0] == doctest::Approx(want).epsilon(1e-5));
    CHECK(full.output[0] == doctest::Approx(want).epsilon(1e-5));
    CHECK(full.weights[250] == doctest::Approx(1 / (1 + e)).epsilon(1e-5));
    CHECK(full.weights[0] == 0.0f);
  }
}

TEST_CASE("streaming: saturated and overflowing scores never give NaN") {
  for (attnlens::Kernel kernel : support::kernels()) {
    INFO("kernel ", support::name(kernel));
    {  // A huge scale on an integer grid: one-hot rows, output = the value of the argmax key.
      const AttentionShape s{2, 70, 90, 3, 4};
      auto q = support::uniform(s.heads * s.n_q * s.d_k, 5, -3, 3);
      auto k = support::uniform(s.heads * s.n_k * s.d_k, 6, -3, 3);
      for (auto& x : q) x = std::round(x);
      for (auto& x : k) x = std::round(x);
      const auto v = support::uniform(s.heads * s.n_k * s.d_v, 7);
      for (float scale : {1e6f, 3e38f}) {
        AttentionOptions options;
        options.scale = scale;
        const auto want = reference::attention(s.heads, s.n_q, s.n_k, s.d_k, s.d_v, q, k, v,
                                               scale, false, {});
        const Run stream = run(s, q, k, v, options, kernel, false);
        const Run full = run(s, q, k, v, options, kernel, true);
        INFO("scale ", scale);
        CHECK(non_finite(stream.output) == 0);
        CHECK(non_finite(full.weights) == 0);
        CHECK(support::max_abs_diff(stream.output, want.output) <= 1e-5);
        CHECK(support::max_abs_diff(full.weights, want.weights) <= 1e-5);
      }
    }
    {  // QKᵀ overflows float (2e40): the infinite scores share the weight equally, in both paths.
      const std::size_t n_k = 100;
      std::vector<float> q = {1e20f, 1e20f}, k(n_k * 2, 1.0f), v(n_k);
      for (std::size_t j = 0; j < n_k; ++j) v[j] = float(j);
      k[2 * 70] = k[2 * 70 + 1] = 1e20f;
      k[2 * 80] = k[2 * 80 + 1] = 1e20f;
      const AttentionShape s{1, 1, n_k, 2, 1};
      const Run stream = run(s, q, k, v, {}, kernel, false);
      const Run full = run(s, q, k, v, {}, kernel, true);
      CHECK(stream.output[0] == doctest::Approx(75.0));
      CHECK(full.output[0] == doctest::Approx(75.0));
      CHECK(full.weights[70] == 0.5f);
      CHECK(full.weights[80] == 0.5f);
      CHECK(full.weights[0] == 0.0f);
    }
  }
}

TEST_CASE("streaming scratch grows with n·d, not n²") {
  // 4096 keys and queries with dK = dV = 16: the score matrix alone would be 64 MiB per head.
  const AttentionShape s{1, 4096, 4096, 16, 16};
  const auto q = support::uniform(s.n_q * s.d_k, 1), k = support::uniform(s.n_k * s.d_k, 2),
             v = support::uniform(s.n_k * s.d_v, 3);
  for (attnlens::Kernel kernel : support::kernels()) {
    std::vector<float> out(s.n_q * s.d_v);
    attnlens::attention(s, {q, k, v}, {}, {out, {}, {}}, kernel);
    const std::size_t streaming = attnlens::last_call_scratch_bytes();
    std::vector<float> weights(s.n_q * s.n_k);
    attnlens::attention(s, {q, k, v}, {}, {out, weights, {}}, kernel);
    const std::size_t two_pass = attnlens::last_call_scratch_bytes();
    INFO("kernel ", support::name(kernel), " streaming ", streaming, " B, two-pass ", two_pass,
         " B");
    // Packed K (and V when padded) plus fixed-size blocks: well under (dK + dV + 64)·nK floats.
    CHECK(streaming <= (s.d_k + s.d_v + 64) * s.n_k * sizeof(float));
    CHECK(streaming > 0);
    CHECK(two_pass > streaming);  // the two-pass path keeps a block of whole score rows
  }
}
