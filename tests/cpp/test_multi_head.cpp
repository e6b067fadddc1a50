#include <doctest/doctest.h>

#include <cmath>

#include "attnlens/multi_head.hpp"
#include "reference.hpp"
#include "support.hpp"

namespace {

struct Case {
  std::size_t n_q, n_k, d_model, heads;
  bool cross, with_out_projection, with_bias, causal;
};

// [n, heads·d] → [heads, n, d]
std::vector<float> split(const std::vector<float>& x, std::size_t n, std::size_t heads,
                         std::size_t d) {
  std::vector<float> out(x.size());
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < d; ++c) out[(h * n + i) * d + c] = x[i * heads * d + h * d + c];
  return out;
}

void check(const Case& c, attnlens::Kernel kernel, std::uint32_t seed) {
  const std::size_t dm = c.d_model, d = dm / c.heads, n_k = c.cross ? c.n_k : c.n_q;
  const float w_range = 1.0f / std::sqrt(float(dm));
  const auto xq = support::uniform(c.n_q * dm, seed);
  const auto xkv = c.cross ? support::uniform(n_k * dm, seed + 1) : xq;
  const auto wq = support::uniform(dm * dm, seed + 2, -w_range, w_range);
  const auto wk = support::uniform(dm * dm, seed + 3, -w_range, w_range);
  const auto wv = support::uniform(dm * dm, seed + 4, -w_range, w_range);
  const auto wo = support::uniform(dm * dm, seed + 5, -w_range, w_range);
  std::vector<float> bq, bk, bv, bo;
  if (c.with_bias) {
    bq = support::uniform(dm, seed + 6);
    bk = support::uniform(dm, seed + 7);
    bv = support::uniform(dm, seed + 8);
    if (c.with_out_projection) bo = support::uniform(dm, seed + 9);
  }
  attnlens::MultiHeadInputs in;
  in.x_q = xq;
  if (c.cross) in.x_kv = xkv;
  in.w_q = wq, in.w_k = wk, in.w_v = wv, in.b_q = bq, in.b_k = bk, in.b_v = bv, in.b_o = bo;
  if (c.with_out_projection) in.w_o = wo;
  attnlens::AttentionOptions options;
  options.causal = c.causal;
  std::vector<float> output(c.n_q * dm), weights(c.heads * c.n_q * n_k);
  attnlens::multi_head_attention({c.n_q, c.n_k, dm, c.heads}, in, options, {output, weights},
                                 kernel);

  // Reference: project, split heads, attend in float64, merge, project out.
  const auto q = split(reference::project(xq, c.n_q, dm, wq, dm, bq), c.n_q, c.heads, d);
  const auto k = split(reference::project(xkv, n_k, dm, wk, dm, bk), n_k, c.heads, d);
  const auto v = split(reference::project(xkv, n_k, dm, wv, dm, bv), n_k, c.heads, d);
  const auto att = reference::attention(c.heads, c.n_q, n_k, d, d, q, k, v,
                                        1.0 / std::sqrt(double(d)), c.causal, {});
  std::vector<float> merged(c.n_q * dm);
  for (std::size_t h = 0; h < c.heads; ++h)
    for (std::size_t i = 0; i < c.n_q; ++i)
      for (std::size_t j = 0; j < d; ++j)
        merged[i * dm + h * d + j] = float(att.output[(h * c.n_q + i) * d + j]);
  const auto want = c.with_out_projection ? reference::project(merged, c.n_q, dm, wo, dm, bo)
                                          : merged;
  INFO(support::name(kernel), " nQ=", c.n_q, " nK=", n_k, " dModel=", dm, " heads=", c.heads);
  CHECK(support::max_abs_diff(weights, att.weights) <= 1e-5);
  CHECK(support::normalised_error(output, std::vector<double>(want.begin(), want.end())) <= 1e-4);
}

}  // namespace

TEST_CASE("multi-head attention matches project → attend → merge → project in float64") {
  const Case cases[] = {
      {1, 1, 1, 1, false, true, false, false},
      {6, 6, 8, 2, false, true, true, false},
      {11, 11, 12, 3, false, true, true, true},
      {5, 9, 16, 4, true, true, true, false},   // cross-attention, nQ ≠ nK
      {7, 3, 10, 5, true, false, false, false},  // no W_O: concatenated heads
      {33, 33, 64, 8, false, true, true, true},
  };
  for (attnlens::Kernel kernel : support::kernels()) {
    std::uint32_t seed = 100;
    for (const Case& c : cases) check(c, kernel, seed += 20);
  }
}
