// Summaries of attention weights across heads and layers:
//   aggregate_heads: the element-wise mean or max over the heads of one layer, [h, nQ, nK] → [nQ, nK]
//   rollout:         attention rollout (Abnar & Zuidema, 2020), R = Â_L · … · Â_1 with
//                    Â_l = rownorm(residual·I + (1 − residual)·mean_h(A_l)), so that row i of R is
//                    how much of token i's last-layer representation comes from input token j.
// Rollout needs square layers (self-attention); each product after the first costs 2·n³ flops.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attnlens/error.hpp"
#include "attnlens/kernel.hpp"
#include "attnlens/span.hpp"

namespace attnlens {

enum class HeadAggregate { mean, max };

struct AggregateShape {
  std::size_t heads = 1;
  std::size_t n_q = 0;
  std::size_t n_k = 0;
};

// "" when valid, else a message naming the argument. `weights` [heads, nQ, nK], `out` [nQ, nK].
std::string check_aggregate(const AggregateShape& shape, Span<const float> weights, Span<float> out);
// out[i, j] = mean or max over h of weights[h, i, j]. Max rows do not sum to 1 in general.
void aggregate_heads(const AggregateShape& shape, HeadAggregate mode, Span<const float> weights,
                     Span<float> out, Kernel kernel = Kernel::simd);

struct RolloutShape {
  std::size_t heads = 1;
  std::size_t n = 0;
};

// The most work rollout() accepts: (layers − 1)·2·n³ flops ≤ 2^38 (≈ 2.7e11, about 10 s at the
// 27 GFLOP/s the engine reaches in one wasm thread). n = 4096 allows 3 layers, n = 2048 20.
inline constexpr double rollout_max_flops = 274877906944.0;

// One layer of the product: with `first`, R = Â (the layer's mixed head mean); else R ← Â·R.
// `layer` [heads, n, n] (values finite and ≥ 0), `r` [n, n], `scratch` 2·n² floats (always). Rows of the
// head mean that sum to 0 (every key masked) become the residual alone, i.e. the identity row;
// other rows are divided by their sum, as in the paper's code (a no-op when rows of A sum to 1).
// residual ∈ [0, 1]; with residual = 0 an all-zero row stays zero.
std::string check_rollout_layer(const RolloutShape& shape, Span<const float> layer,
                                float residual, Span<float> r, Span<float> scratch);
void rollout_layer(const RolloutShape& shape, Span<const float> layer, float residual,
                   Span<float> r, bool first, Span<float> scratch, Kernel kernel = Kernel::simd);

// The whole product over `layers` (first layer first), into `out` [n, n].
std::string check_rollout(const RolloutShape& shape, const std::vector<Span<const float>>& layers,
                          float residual, Span<float> out);
void rollout(const RolloutShape& shape, const std::vector<Span<const float>>& layers,
             float residual, Span<float> out, Kernel kernel = Kernel::simd);

}  // namespace attnlens
