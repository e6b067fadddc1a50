#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

#include "attnlens/attention.hpp"
#include "attnlens/ops.hpp"
#include "attnlens/probe.hpp"
#include "reference.hpp"
#include "support.hpp"

using attnlens::AttentionOptions;
using attnlens::AttentionShape;

namespace {

struct Case {
  AttentionShape shape;
  bool causal = false;
  enum Mask { none, random, drop_first } mask = none;
  float scale = 0;         // 0: default
  float value_range = 1;   // inputs uniform in [-range, range)
  bool integer_grid = false;  // inputs are small integers: QKᵀ is exact, so huge scales are fair
};

std::vector<float> inputs(std::size_t n, std::uint32_t seed, const Case& c) {
  auto x = support::uniform(n, seed, -c.value_range, c.value_range);
  if (c.integer_grid)
    for (auto& v : x) v = std::round(v);
  return x;
}

void check_against_reference(const Case& c, attnlens::Kernel kernel, std::uint32_t seed) {
  const auto& s = c.shape;
  const auto q = inputs(s.heads * s.n_q * s.d_k, seed, c);
  const auto k = inputs(s.heads * s.n_k * s.d_k, seed + 1, c);
  const auto v = support::uniform(s.heads * s.n_k * s.d_v, seed + 2);
  std::vector<std::uint8_t> mask;
  if (c.mask == Case::random) {
    auto r = support::uniform(s.n_k, seed + 3, 0, 1);
    for (float x : r) mask.push_back(x < 0.7f);
  } else if (c.mask == Case::drop_first) {
    mask.assign(s.n_k, 1);
    mask[0] = 0;
  }
  AttentionOptions options;
  options.causal = c.causal;
  options.key_mask = {mask.data(), mask.size()};
  if (c.scale > 0) options.scale = c.scale;
  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(s.d_k));

  const auto got = attnlens::attention(s, {q, k, v}, options, true, kernel);
  const auto want = reference::attention(s.heads, s.n_q, s.n_k, s.d_k, s.d_v, q, k, v, scale,
                                         c.causal, mask);
  INFO("kernel ", support::name(kernel), " shape h=", s.heads, " nQ=", s.n_q, " nK=", s.n_k,
       " dK=", s.d_k, " dV=", s.d_v, " causal=", c.causal, " mask=", int(c.mask));
  CHECK(support::max_abs_diff(got.weights, want.weights) <= 1e-5);
  CHECK(support::normalised_error(got.output, want.output) <= 1e-4);
  CHECK(support::normalised_error(got.scores, want.scores) <= 1e-5);

  // Every row sums to 1, or is exactly 0 when all its keys are masked; masked weights are 0.
  std::size_t bad_rows = 0, nonzero_masked = 0, non_finite = 0;
  for (std::size_t h = 0; h < s.heads; ++h)
    for (std::size_t i = 0; i < s.n_q; ++i) {
      double sum = 0, want_sum = 0;
      for (std::size_t j = 0; j < s.n_k; ++j) {
        const std::size_t at = (h * s.n_q + i) * s.n_k + j;
        const float w = got.weights[at];
        non_finite += !std::isfinite(w);
        sum += w;
        want_sum += want.weights[at];
        const bool masked = (c.causal && j > i) || (!mask.empty() && !mask[j]);
        nonzero_masked += masked && w != 0.0f;
      }
      bad_rows += want_sum == 0 ? sum != 0 : std::abs(sum - 1) > 1e-5;
    }
  for (float o : got.output) non_finite += !std::isfinite(o);
  CHECK(bad_rows == 0);
  CHECK(nonzero_masked == 0);
  CHECK(non_finite == 0);
}

const Case kCases[] = {
    {{1, 1, 1, 1, 1}},                        // n = 1, dK = 1
    {{1, 1, 5, 1, 3}},                        // one query, dK = 1
    {{2, 3, 7, 5, 9}},                        // nQ ≠ nK, dK ≠ dV, odd sizes
    {{3, 17, 13, 6, 11}},                     // SIMD tails everywhere
    {{4, 33, 65, 64, 64}},
    {{1, 129, 127, 67, 3}},
    {{8, 16, 16, 64, 64}},
    {{2, 9, 9, 8, 8}, true},                  // causal
    {{2, 12, 7, 5, 4}, true},                 // causal, nQ > nK
    {{2, 5, 12, 5, 4}, true},                 // causal, nQ < nK
    {{3, 10, 23, 7, 5}, false, Case::random},     // padding mask
    {{2, 11, 11, 4, 6}, true, Case::random},      // causal + padding
    {{2, 6, 6, 3, 3}, true, Case::drop_first},    // query 0 sees nothing: zeros, no NaN
    {{1, 7, 9, 4, 4}, false, Case::none, 0.01f},  // custom scale
    {{2, 13, 21, 5, 7}, false, Case::none, 1e6f, 3, true},  // saturated: one-hot rows
    {{1, 8, 8, 2, 3}, false, Case::none, 1.0f, 70, true},   // scores up to ±1e4
    {{1, 1031, 1009, 16, 8}},                 // n ≥ 1000
};

}  // namespace

TEST_CASE("attention matches the float64 reference on many shapes and options") {
  for (attnlens::Kernel kernel : support::kernels()) {
    std::uint32_t seed = 1;
    for (const Case& c : kCases) check_against_reference(c, kernel, seed += 10);
  }
}

// The relaxed build's second register-tile shape (cpp/src/kernels/blocked.hpp) must give the very
// same bits as its first, on the output-only path and with weights and scores: which one runs is
// chosen by speed at load (web/engine/tiles.js).
TEST_CASE("both register-tile shapes give bit-identical results") {
  if (!attnlens::has_wide_tiles()) {
    attnlens::set_wide_tiles(true);
    CHECK_FALSE(attnlens::wide_tiles());  // builds with one shape ignore the request
    return;
  }
  struct Result {
    std::vector<float> output_only;
    attnlens::AttentionResult all;
  };
  auto run = [](const Case& c, std::uint32_t seed, bool wide) {
    attnlens::set_wide_tiles(wide);
    REQUIRE(attnlens::wide_tiles() == wide);
    const auto& s = c.shape;
    const auto q = inputs(s.heads * s.n_q * s.d_k, seed, c);
    const auto k = inputs(s.heads * s.n_k * s.d_k, seed + 1, c);
    const auto v = support::uniform(s.heads * s.n_k * s.d_v, seed + 2);
    std::vector<std::uint8_t> mask;
    if (c.mask != Case::none) {
      mask.assign(s.n_k, 1);
      for (std::size_t j = 0; j < s.n_k; j += 3) mask[j] = 0;
    }
    AttentionOptions options;
    options.causal = c.causal;
    options.key_mask = {mask.data(), mask.size()};
    if (c.scale > 0) options.scale = c.scale;
    Result r;
    r.output_only.assign(s.heads * s.n_q * s.d_v, -1.0f);
    attnlens::attention(s, {q, k, v}, options, {r.output_only, {}, {}}, attnlens::Kernel::simd);
    r.all = attnlens::attention(s, {q, k, v}, options, true, attnlens::Kernel::simd);
    return r;
  };
  std::uint32_t seed = 7;
  for (const Case& c : kCases) {
    seed += 10;
    const Result narrow = run(c, seed, false), wide = run(c, seed, true);
    INFO("shape h=", c.shape.heads, " nQ=", c.shape.n_q, " nK=", c.shape.n_k, " dK=", c.shape.d_k,
         " dV=", c.shape.d_v, " causal=", c.causal, " mask=", int(c.mask));
    CHECK(wide.output_only == narrow.output_only);
    CHECK(wide.all.output == narrow.all.output);
    CHECK(wide.all.weights == narrow.all.weights);
    CHECK(wide.all.scores == narrow.all.scores);
  }
  // And the wide shape against the float64 reference on its own.
  attnlens::set_wide_tiles(true);
  for (const Case& c : kCases) check_against_reference(c, attnlens::Kernel::simd, seed += 10);
  attnlens::set_wide_tiles(false);
}

TEST_CASE("softmax is stable for scores of ±1e4") {
  // One query against four keys with scores 1e4, -1e4, 1e4 - 1, 0 (scale 1).
  const std::vector<float> q = {100, 100}, k = {50, 50, -50, -50, 50, 49.99f, 0, 0},
                           v = {1, 2, 3, 4};
  AttentionOptions options;
  options.scale = 1.0f;
  for (attnlens::Kernel kernel : support::kernels()) {
    const auto r = attnlens::attention({1, 1, 4, 2, 1}, {q, k, v}, options, false, kernel);
    const double e = std::exp(-1.0);
    CHECK(r.weights[0] == doctest::Approx(1 / (1 + e)).epsilon(1e-5));
    CHECK(r.weights[1] == 0.0f);
    CHECK(r.weights[2] == doctest::Approx(e / (1 + e)).epsilon(1e-5));
    CHECK(r.weights[3] == 0.0f);
  }
}

TEST_CASE("a query whose keys are all masked gets zero weights and a zero output") {
  const auto q = support::uniform(3 * 4, 7), k = support::uniform(5 * 4, 8),
             v = support::uniform(5 * 2, 9);
  const std::vector<std::uint8_t> mask(5, 0);
  AttentionOptions options;
  options.key_mask = {mask.data(), mask.size()};
  for (attnlens::Kernel kernel : support::kernels()) {
    const auto r = attnlens::attention({1, 3, 5, 4, 2}, {q, k, v}, options, false, kernel);
    for (float w : r.weights) CHECK(w == 0.0f);
    for (float o : r.output) CHECK(o == 0.0f);
  }
}

TEST_CASE("matmul matches the reference, bias and tails included, B packed or not") {
  // {64, 96, 33} and {70, 41, 130} are tall enough for matmul to pack B's panels per call.
  for (attnlens::Kernel kernel : support::kernels())
    for (const auto& mnk : {std::array<std::size_t, 3>{1, 1, 1}, {5, 7, 3}, {13, 29, 17},
                            {64, 96, 33}, {3, 200, 1}, {70, 41, 130}, {9, 8, 512}}) {
      const std::size_t m = mnk[0], n = mnk[1], k = mnk[2];
      const auto a = support::uniform(m * k, 11), b = support::uniform(k * n, 12),
                 bias = support::uniform(n, 13);
      const auto want = reference::project(a, m, k, b, n, bias);
      std::vector<double> want64(want.begin(), want.end());
      INFO(support::name(kernel), " m=", m, " n=", n, " k=", k);
      std::vector<float> c(m * n), packed_c(m * n, -1.0f);
      attnlens::matmul(m, n, k, a.data(), b.data(), c.data(), bias.data(), kernel);
      CHECK(support::normalised_error(c, want64) <= 1e-5);
      const attnlens::PackedMatrix packed(k, n, b.data());
      attnlens::matmul(m, a.data(), packed, packed_c.data(), bias.data(), kernel);
      attnlens::matmul(m, a.data(), packed, packed_c.data(), bias.data(), kernel);  // packed once, reused
      CHECK(support::normalised_error(packed_c, want64) <= 1e-5);
    }
}

TEST_CASE("packed matmul: every row count (whole row tiles of 5 and 4, single rows)") {
  // gemm_packed packs A's rows into tiles (5 and 4 rows in the relaxed-SIMD build, 4 elsewhere)
  // and leaves single rows: a row put in the wrong place or left out is an O(1) error. n covers
  // whole column panels plus vector and scalar tails on every build.
  for (attnlens::Kernel kernel : support::kernels())
    for (std::size_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 19, 21, 36})
      for (std::size_t n : {19, 53, 100})
        for (std::size_t k : {5, 33}) {
          const auto a = support::uniform(m * k, 21), b = support::uniform(k * n, 22),
                     bias = support::uniform(n, 23);
          const auto want = reference::project(a, m, k, b, n, bias);
          const std::vector<double> want64(want.begin(), want.end());
          INFO(support::name(kernel), " m=", m, " n=", n, " k=", k);
          std::vector<float> packed_c(m * n, -1.0f);
          const attnlens::PackedMatrix packed(k, n, b.data());
          attnlens::matmul(m, a.data(), packed, packed_c.data(), bias.data(), kernel);
          CHECK(support::normalised_error(packed_c, want64) <= 1e-5);
        }
}
