// The weights-only path: no output buffer, so the A·V product (and V itself) is skipped. Its
// weights must match the float64 reference and be bit-identical to the full path's.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attnlens/attention.hpp"
#include "attnlens/multi_head.hpp"
#include "reference.hpp"
#include "support.hpp"

using attnlens::AttentionOptions;
using attnlens::AttentionShape;

namespace {

struct Case {
  AttentionShape shape;
  bool causal = false;
  bool mask = false;
  float scale = 0;  // 0: default
};

const Case kCases[] = {
    {{1, 1, 1, 1, 1}},
    {{2, 3, 7, 5, 9}},
    {{3, 17, 13, 6, 11}, false, true},
    {{2, 12, 7, 5, 4}, true},
    {{2, 5, 12, 5, 4}, true, true},
    {{4, 70, 65, 64, 64}, true},
    {{1, 129, 200, 33, 3}, false, false, 0.05f},
};

}  // namespace

TEST_CASE("weights-only attention matches the float64 reference and the full path") {
  for (attnlens::Kernel kernel : support::kernels()) {
    std::uint32_t seed = 500;
    for (const Case& c : kCases) {
      const auto& s = c.shape;
      const auto q = support::uniform(s.heads * s.n_q * s.d_k, seed += 3);
      const auto k = support::uniform(s.heads * s.n_k * s.d_k, seed + 1);
      const auto v = support::uniform(s.heads * s.n_k * s.d_v, seed + 2);
      std::vector<std::uint8_t> mask;
      if (c.mask)
        for (std::size_t j = 0; j < s.n_k; ++j) mask.push_back(j % 3 != 1);
      AttentionOptions options;
      options.causal = c.causal;
      options.key_mask = {mask.data(), mask.size()};
      if (c.scale > 0) options.scale = c.scale;
      const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(s.d_k));
      const auto want = reference::attention(s.heads, s.n_q, s.n_k, s.d_k, s.d_v, q, k, v,
                                             scale, c.causal, mask);
      const auto full = attnlens::attention(s, {q, k, v}, options, true, kernel);
      INFO(support::name(kernel), " h=", s.heads, " nQ=", s.n_q, " nK=", s.n_k, " dK=", s.d_k,
           " causal=", c.causal, " mask=", c.mask);

      const std::size_t nn = s.heads * s.n_q * s.n_k;
      // Without v at all, and with v given but unused; then weights + scores, then scores only.
      for (bool give_v : {false, true}) {
        std::vector<float> weights(nn, -1.0f);
        const attnlens::AttentionInputs in{q, k, give_v ? attnlens::Span<const float>(v)
                                                        : attnlens::Span<const float>()};
        attnlens::attention(s, in, options, {{}, weights, {}}, kernel);
        CHECK(support::max_abs_diff(weights, want.weights) <= 1e-5);
        CHECK(weights == full.weights);
      }
      std::vector<float> weights(nn), scores(nn), only_scores(nn);
      attnlens::attention(s, {q, k, {}}, options, {{}, weights, scores}, kernel);
      CHECK(weights == full.weights);
      CHECK(scores == full.scores);
      attnlens::attention(s, {q, k, {}}, options, {{}, {}, only_scores}, kernel);
      CHECK(only_scores == full.scores);
    }
  }
}

TEST_CASE("weights-only attention redoes overflowing rows like the full path") {
  // Scores of ±inf: the row softmax gives the infinite keys equal shares, never NaN.
  const float big = std::numeric_limits<float>::max() / 4;
  const std::vector<float> q = {big, big, 1, 0}, k = {big, big, -big, -big, big, big, 0, 1};
  const std::vector<float> v(4 * 3, 1.0f);
  for (attnlens::Kernel kernel : support::kernels()) {
    const auto full = attnlens::attention({1, 2, 4, 2, 3}, {q, k, v}, {}, false, kernel);
    std::vector<float> weights(8);
    attnlens::attention({1, 2, 4, 2, 3}, {q, k, {}}, {}, {{}, weights, {}}, kernel);
    CHECK(weights == full.weights);
    CHECK(weights[0] == doctest::Approx(0.5));
    CHECK(weights[2] == doctest::Approx(0.5));
    for (float w : weights) CHECK(std::isfinite(w));
  }
}

TEST_CASE("attention needs at least one result buffer; v only when the output is asked for") {
  using support::contains;
  std::vector<float> q(8), k(12), v(15), out(10), weights(6);
  const AttentionShape s{1, 2, 3, 4, 5};
  auto error = [&](attnlens::AttentionInputs in, attnlens::AttentionOutputs o) {
    return support::error_message([&] { attnlens::attention(s, in, {}, o); });
  };
  CHECK(contains(error({q, k, v}, {}), "at least one result buffer"));
  CHECK(contains(error({q, k, {}}, {out, weights, {}}), "v must have 15 elements"));
  CHECK(contains(error({q, k, {v.data(), 14}}, {{}, weights, {}}), "v must have 15 elements"));
  CHECK(contains(error({q, k, {nullptr, 15}}, {{}, weights, {}}), "v has 15 elements but no data"));
  CHECK(error({q, k, {}}, {{}, weights, {}}) == "(no exception)");
}

TEST_CASE("weights-only multi-head attention needs no W_V and matches the full path") {
  const std::size_t n_q = 9, n_k = 7, dm = 12, heads = 3;
  const float r = 1 / std::sqrt(float(dm));
  const auto x = support::uniform(n_q * dm, 1), x_kv = support::uniform(n_k * dm, 2);
  const auto w_q = support::uniform(dm * dm, 3, -r, r), w_k = support::uniform(dm * dm, 4, -r, r);
  const auto w_v = support::uniform(dm * dm, 5, -r, r), b = support::uniform(dm, 6);
  for (attnlens::Kernel kernel : support::kernels())
    for (bool cross : {false, true}) {
      const std::size_t keys = cross ? n_k : n_q;
      attnlens::MultiHeadInputs in;
      in.x_q = x, in.w_q = w_q, in.w_k = w_k, in.w_v = w_v, in.b_q = b, in.b_k = b;
      if (cross) in.x_kv = x_kv;
      AttentionOptions options;
      options.causal = !cross;
      std::vector<float> output(n_q * dm), full(heads * n_q * keys), lean(heads * n_q * keys);
      attnlens::multi_head_attention({n_q, n_k, dm, heads}, in, options, {output, full}, kernel);
      in.w_v = {};
      attnlens::multi_head_attention({n_q, n_k, dm, heads}, in, options, {{}, lean}, kernel);
      INFO(support::name(kernel), " cross=", cross);
      CHECK(lean == full);
      // And against the float64 reference: project, split into heads, attend.
      const auto q = reference::project(x, n_q, dm, w_q, dm, b);
      const auto k = reference::project(cross ? x_kv : x, keys, dm, w_k, dm, b);
      const std::size_t d = dm / heads;
      std::vector<float> qh(n_q * dm), kh(keys * dm), vh(keys * dm);
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t c = 0; c < d; ++c) {
          for (std::size_t i = 0; i < n_q; ++i) qh[(h * n_q + i) * d + c] = q[i * dm + h * d + c];
          for (std::size_t j = 0; j < keys; ++j) kh[(h * keys + j) * d + c] = k[j * dm + h * d + c];
        }
      const auto want = reference::attention(heads, n_q, keys, d, d, qh, kh, vh,
                                             1.0 / std::sqrt(double(d)), options.causal, {});
      CHECK(support::max_abs_diff(lean, want.weights) <= 1e-5);
      CHECK(support::contains(support::error_message([&] {
              attnlens::multi_head_attention({n_q, n_k, dm, heads}, in, options, {{}, {}});
            }),
            "at least one result buffer"));
      CHECK(support::contains(support::error_message([&] {
              attnlens::multi_head_attention({n_q, n_k, dm, heads}, in, options, {output, full});
            }),
            "w_v must have"));
    }
}
