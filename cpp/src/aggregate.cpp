#include "attnlens/aggregate.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "attnlens/ops.hpp"
#include "checks.hpp"
#include "dispatch.hpp"
#include "kernels/aggregate.hpp"

namespace attnlens {

namespace {

std::string shown(float x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(x));
  return text;
}

// "" or a message naming the first non-finite or negative value of `values`.
std::string weights_ok(const std::string& name, Span<const float> values) {
  for (std::size_t i = 0; i < values.size; ++i) {
    const float x = values[i];
    if (!std::isfinite(x) || x < 0)
      return name + "[" + std::to_string(i) + "] is " + shown(x) +
             ": attention weights must be finite and >= 0";
  }
  return {};
}

std::string residual_ok(float residual) {
  if (residual >= 0 && residual <= 1) return {};
  return "residual must be between 0 and 1 (got " + shown(residual) + ")";
}

void reduce(Kernel kernel, HeadAggregate mode, std::size_t heads, std::size_t count,
            const float* w, float* out) {
  const float factor = 1.0f / static_cast<float>(heads);
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    if (mode == HeadAggregate::max) kernels::reduce_heads<Arch, true>(heads, count, w, out, factor);
    else kernels::reduce_heads<Arch, false>(heads, count, w, out, factor);
  });
}

}  // namespace

std::string check_aggregate(const AggregateShape& s, Span<const float> weights, Span<float> out) {
  if (auto m = checks::positive("heads", s.heads); !m.empty()) return m;
  if (auto m = checks::positive("n_q", s.n_q); !m.empty()) return m;
  if (auto m = checks::positive("n_k", s.n_k); !m.empty()) return m;
  const std::size_t all = checks::product(s.heads, s.n_q, s.n_k);
  if (!all) return checks::too_large("aggregate shape");
  if (auto m = checks::length("weights", weights.size, all, "heads*n_q*n_k"); !m.empty()) return m;
  if (auto m = checks::length("out", out.size, s.n_q * s.n_k, "n_q*n_k"); !m.empty()) return m;
  if (auto m = checks::not_null("weights", weights); !m.empty()) return m;
  if (auto m = checks::not_null("out", out); !m.empty()) return m;
  return {};
}

void aggregate_heads(const AggregateShape& s, HeadAggregate mode, Span<const float> weights,
                     Span<float> out, Kernel kernel) {
  throw_if(check_aggregate(s, weights, out));
  reduce(kernel, mode, s.heads, s.n_q * s.n_k, weights.data, out.data);
}

std::string check_rollout_layer(const RolloutShape& s, Span<const float> layer, float residual,
                                Span<float> r, Span<float> scratch) {
  if (auto m = checks::positive("heads", s.heads); !m.empty()) return m;
  if (auto m = checks::positive("n", s.n); !m.empty()) return m;
  const std::size_t all = checks::product(s.heads, s.n, s.n), nn = checks::product(s.n, s.n, 2);
  if (!all || !nn) return checks::too_large("rollout shape");
  if (auto m = residual_ok(residual); !m.empty()) return m;
  if (auto m = checks::length("layer", layer.size, all, "heads*n*n"); !m.empty()) return m;
  if (auto m = checks::length("r", r.size, s.n * s.n, "n*n"); !m.empty()) return m;
  if (auto m = checks::length("scratch", scratch.size, nn, "2*n*n"); !m.empty()) return m;
  if (auto m = checks::not_null("layer", layer); !m.empty()) return m;
  if (auto m = checks::not_null("r", r); !m.empty()) return m;
  if (auto m = checks::not_null("scratch", scratch); !m.empty()) return m;
  return weights_ok("layer", layer);
}

// R = Â (first) or R ← Â·R, unchecked; scratch holds 2·n² floats.
static void rollout_step(const RolloutShape& s, const float* layer, float residual, float* r, bool first,
                  float* scratch, Kernel kernel) {
  const std::size_t n = s.n;
  float* mixed = first ? r : scratch;
  reduce(kernel, HeadAggregate::mean, s.heads, n * n, layer, mixed);
  // Â = rownorm(residual·I + (1 − residual)·Ā): O(n²) next to the O(n³) product.
  const float keep = 1.0f - residual;
  for (std::size_t i = 0; i < n; ++i) {
    float* row = mixed + i * n;
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += row[j];
    const double total = residual + keep * sum;
    if (total <= 0) continue;  // residual 0 and an all-zero row: stays zero
    const float f = static_cast<float>(keep / total);
    for (std::size_t j = 0; j < n; ++j) row[j] *= f;
    row[i] += static_cast<float>(residual / total);
  }
  if (first) return;
  float* product = scratch + n * n;
  matmul(n, n, n, mixed, r, product, nullptr, kernel);
  std::memcpy(r, product, n * n * sizeof(float));
}

void rollout_layer(const RolloutShape& s, Span<const float> layer, float residual, Span<float> r,
                   bool first, Span<float> scratch, Kernel kernel) {
  throw_if(check_rollout_layer(s, layer, residual, r, scratch));
  rollout_step(s, layer.data, residual, r.data, first, scratch.data, kernel);
}

std::string check_rollout(const RolloutShape& s, const std::vector<Span<const float>>& layers,
                          float residual, Span<float> out) {
  if (layers.empty()) return "layers is empty: give at least one layer";
  if (auto m = checks::positive("heads", s.heads); !m.empty()) return m;
  if (auto m = checks::positive("n", s.n); !m.empty()) return m;
  const std::size_t all = checks::product(s.heads, s.n, s.n);
  if (!all || !checks::product(s.n, s.n, 2)) return checks::too_large("rollout shape");
  const double n = static_cast<double>(s.n);
  const double flops = static_cast<double>(layers.size() - 1) * 2 * n * n * n;
  if (flops > rollout_max_flops)
    return "rollout of " + std::to_string(layers.size()) + " layers of n = " + std::to_string(s.n) +
           " tokens needs " + shown(static_cast<float>(flops)) +
           " flops, more than the limit of 2^38 (about 10 s): use fewer layers or tokens";
  if (auto m = residual_ok(residual); !m.empty()) return m;
  if (auto m = checks::length("out", out.size, s.n * s.n, "n*n"); !m.empty()) return m;
  if (auto m = checks::not_null("out", out); !m.empty()) return m;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string name = "layers[" + std::to_string(l) + "]";
    if (auto m = checks::length(name.c_str(), layers[l].size, all, "heads*n*n"); !m.empty()) return m;
    if (auto m = checks::not_null(name.c_str(), layers[l]); !m.empty()) return m;
    if (auto m = weights_ok(name, layers[l]); !m.empty()) return m;
  }
  return {};
}

void rollout(const RolloutShape& s, const std::vector<Span<const float>>& layers, float residual,
             Span<float> out, Kernel kernel) {
  throw_if(check_rollout(s, layers, residual, out));
  std::vector<float> scratch(layers.size() > 1 ? 2 * s.n * s.n : 0);
  for (std::size_t l = 0; l < layers.size(); ++l)
    rollout_step(s, layers[l].data, residual, out.data, l == 0, scratch.data(), kernel);
}

}  // namespace attnlens
