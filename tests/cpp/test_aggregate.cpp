#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "attnlens/aggregate.hpp"
#include "support.hpp"

namespace {

// Float64 references, textbook loops.
std::vector<double> head_mean(const std::vector<float>& w, std::size_t heads, std::size_t count) {
  std::vector<double> out(count, 0.0);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t c = 0; c < count; ++c) out[c] += w[h * count + c];
  for (auto& x : out) x /= double(heads);
  return out;
}

std::vector<double> head_max(const std::vector<float>& w, std::size_t heads, std::size_t count) {
  std::vector<double> out(w.begin(), w.begin() + count);
  for (std::size_t h = 1; h < heads; ++h)
    for (std::size_t c = 0; c < count; ++c) out[c] = std::max(out[c], double(w[h * count + c]));
  return out;
}

std::vector<double> rollout(const std::vector<std::vector<float>>& layers, std::size_t heads,
                            std::size_t n, double residual) {
  std::vector<double> r;
  for (const auto& layer : layers) {
    auto a = head_mean(layer, heads, n * n);
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        a[i * n + j] = (1 - residual) * a[i * n + j] + (i == j ? residual : 0.0);
        sum += a[i * n + j];
      }
      if (sum > 0)
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] /= sum;
    }
    if (r.empty()) {
      r = a;
      continue;
    }
    std::vector<double> next(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < n; ++j) next[i * n + j] += a[i * n + k] * r[k * n + j];
    r = next;
  }
  return r;
}

// Rows of non-negative numbers that sum to 1 (like softmax output), with some all-zero rows.
std::vector<float> weights(std::size_t heads, std::size_t n_q, std::size_t n_k, std::uint32_t seed,
                           bool zero_rows = false) {
  auto w = support::uniform(heads * n_q * n_k, seed, 0.0f, 1.0f);
  for (std::size_t r = 0; r < heads * n_q; ++r) {
    float sum = 0;
    for (std::size_t j = 0; j < n_k; ++j) sum += w[r * n_k + j];
    for (std::size_t j = 0; j < n_k; ++j)
      w[r * n_k + j] = zero_rows && r % 5 == 3 ? 0.0f : w[r * n_k + j] / sum;
  }
  return w;
}

}  // namespace

TEST_CASE("aggregate_heads: mean and max over heads match float64, every shape and kernel") {
  struct Shape { std::size_t heads, n_q, n_k; };
  for (const auto kernel : support::kernels())
    for (const Shape s : {Shape{1, 1, 1}, Shape{2, 3, 5}, Shape{4, 7, 7}, Shape{12, 17, 33},
                          Shape{3, 64, 65}}) {
      CAPTURE(support::name(kernel));
      CAPTURE(s.heads);
      CAPTURE(s.n_q);
      CAPTURE(s.n_k);
      const auto w = weights(s.heads, s.n_q, s.n_k, 7 + s.n_k);
      std::vector<float> out(s.n_q * s.n_k, -1.0f);
      attnlens::aggregate_heads({s.heads, s.n_q, s.n_k}, attnlens::HeadAggregate::mean, w, out, kernel);
      CHECK(support::normalised_error(out, head_mean(w, s.heads, out.size())) < 1e-6);
      attnlens::aggregate_heads({s.heads, s.n_q, s.n_k}, attnlens::HeadAggregate::max, w, out, kernel);
      CHECK(support::max_abs_diff(out, head_max(w, s.heads, out.size())) == 0.0);
    }
}

TEST_CASE("rollout: product of residual-mixed head means matches float64") {
  for (const auto kernel : support::kernels())
    for (const std::size_t n : {1u, 2u, 9u, 40u, 67u})
      for (const double residual : {0.5, 0.0, 0.2, 1.0}) {
        CAPTURE(support::name(kernel));
        CAPTURE(n);
        CAPTURE(residual);
        const std::size_t heads = 3;
        std::vector<std::vector<float>> layers;
        std::vector<attnlens::Span<const float>> spans;
        for (std::uint32_t l = 0; l < 4; ++l) layers.push_back(weights(heads, n, n, 100 + l, l == 1));
        for (const auto& layer : layers) spans.emplace_back(layer.data(), layer.size());
        std::vector<float> out(n * n);
        attnlens::rollout({heads, n}, spans, float(residual), out, kernel);
        const auto want = rollout(layers, heads, n, residual);
        CHECK(support::normalised_error(out, want) < 2e-5);
        if (residual > 0)  // every row of a product of row-stochastic matrices sums to 1
          for (std::size_t i = 0; i < n; ++i) {
            double sum = 0;
            for (std::size_t j = 0; j < n; ++j) sum += out[i * n + j];
            CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
          }
      }
}

TEST_CASE("rollout: one layer is the mixed mean; residual 1 is the identity") {
  const std::size_t n = 5, heads = 2;
  const auto layer = weights(heads, n, n, 3);
  std::vector<float> out(n * n);
  attnlens::rollout({heads, n}, {attnlens::Span<const float>(layer.data(), layer.size())}, 1.0f, out);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) CHECK(out[i * n + j] == (i == j ? 1.0f : 0.0f));
}

TEST_CASE("aggregate and rollout errors name the argument") {
  std::vector<float> w(2 * 3 * 4), out(12), square(2 * 9), r(9), scratch(18);
  using attnlens::Span;
  const Span<const float> ws(w.data(), w.size());
  CHECK(support::contains(attnlens::check_aggregate({2, 3, 4}, Span<const float>(w.data(), 5), out), "weights must have 24"));
  CHECK(support::contains(attnlens::check_aggregate({2, 3, 4}, ws, Span<float>(out.data(), 11)), "out must have 12"));
  CHECK(support::contains(attnlens::check_aggregate({0, 3, 4}, ws, out), "heads must be a positive"));
  CHECK(attnlens::check_aggregate({2, 3, 4}, ws, out).empty());
  const Span<const float> sq(square.data(), square.size());
  CHECK(support::contains(attnlens::check_rollout_layer({2, 3}, sq, 1.5f, r, scratch), "residual must be between 0 and 1"));
  CHECK(support::contains(attnlens::check_rollout_layer({2, 3}, sq, 0.5f, r, Span<float>(scratch.data(), 9)), "scratch must have 18"));
  square[4] = -0.25f;
  CHECK(support::contains(attnlens::check_rollout_layer({2, 3}, sq, 0.5f, r, scratch), "layer[4] is -0.25"));
  square[4] = std::nanf("");
  CHECK(support::contains(attnlens::check_rollout({2, 3}, {sq}, 0.5f, r), "layers[0][4] is nan"));
  CHECK(support::contains(attnlens::check_rollout({2, 3}, {}, 0.5f, r), "layers is empty"));
  std::vector<Span<const float>> many(4, Span<const float>(nullptr, 0));
  CHECK(support::contains(attnlens::check_rollout({1, 4096}, many, 0.5f, Span<float>(nullptr, 0)), "more than the limit"));
  CHECK_THROWS_AS(attnlens::rollout({2, 3}, {sq}, 0.5f, r), attnlens::Error);
}
