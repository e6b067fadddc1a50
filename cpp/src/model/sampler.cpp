#include "attnlens/model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlens::model {

void softmax_probs(Span<const float> logits, float temperature, std::vector<float>& probs) {
  probs.resize(logits.size);
  if (logits.size == 0) return;
  // As run.c: divide by the temperature first, then a max-subtracted softmax.
  for (std::size_t i = 0; i < logits.size; ++i) probs[i] = logits[i] / temperature;
  float max = *std::max_element(probs.begin(), probs.end());
  if (!std::isfinite(max)) {
    // A temperature so small that logits / temperature overflows: subtract the largest logit
    // before dividing (the same distribution, mathematically), which tends to the argmax.
    const float top = *std::max_element(logits.data, logits.data + logits.size);
    for (std::size_t i = 0; i < logits.size; ++i) probs[i] = (logits[i] - top) / temperature;
    max = 0;
  }
  double sum = 0;
  for (float& p : probs) {
    p = std::exp(p - max);
    sum += p;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (float& p : probs) p *= inv;
}

std::int32_t argmax(Span<const float> values) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < values.size; ++i)
    if (values[i] > values[best]) best = i;
  return static_cast<std::int32_t>(best);
}

namespace {

// run.c sample_mult: the first index where the running sum exceeds the coin.
std::int32_t sample_mult(const std::vector<float>& probs, float coin) {
  float cdf = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    cdf += probs[i];
    if (coin < cdf) return static_cast<std::int32_t>(i);
  }
  return static_cast<std::int32_t>(probs.size() - 1);  // rounding
}

// run.c sample_topp, with a stable order for equal probabilities.
std::int32_t sample_top_p(const std::vector<float>& probs, float top_p, float coin) {
  const std::size_t n = probs.size();
  const float cutoff = n > 1 ? (1.0f - top_p) / static_cast<float>(n - 1) : 0.0f;
  std::vector<std::int32_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (probs[i] >= cutoff) order.push_back(static_cast<std::int32_t>(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return probs[static_cast<std::size_t>(a)] > probs[static_cast<std::size_t>(b)]; });
  if (order.empty()) return sample_mult(probs, coin);
  float cumulative = 0;
  std::size_t last = order.size() - 1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    cumulative += probs[static_cast<std::size_t>(order[i])];
    if (cumulative > top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0;
  for (std::size_t i = 0; i <= last; ++i) {
    cdf += probs[static_cast<std::size_t>(order[i])];
    if (r < cdf) return order[i];
  }
  return order[last];
}

}  // namespace

std::int32_t sample(Span<const float> logits, const SampleOptions& options, Rng& rng,
                    std::vector<float>& probs) {
  if (options.temperature == 0.0f) {
    softmax_probs(logits, 1.0f, probs);
    return argmax(logits);
  }
  softmax_probs(logits, options.temperature, probs);
  const float coin = rng.next_f32();
  if (options.top_p <= 0.0f || options.top_p >= 1.0f) return sample_mult(probs, coin);
  return sample_top_p(probs, options.top_p, coin);
}

std::vector<std::int32_t> top_k(Span<const float> probs, std::size_t k) {
  std::vector<std::int32_t> ids(probs.size);
  std::iota(ids.begin(), ids.end(), 0);
  k = std::min(k, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](std::int32_t a, std::int32_t b) {
                      const float pa = probs[static_cast<std::size_t>(a)], pb = probs[static_cast<std::size_t>(b)];
                      return pa > pb || (pa == pb && a < b);
                    });
  ids.resize(k);
  return ids;
}

}  // namespace attnlens::model
