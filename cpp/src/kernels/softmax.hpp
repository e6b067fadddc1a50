// Row softmax fused with scaling and masking: row[j] ← exp(scale·(s_j − max)) / Σ.
// Subtracting the row max keeps exp() ≤ 1 whatever the scores, so ±1e4 cannot overflow.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/vec.hpp"

namespace attnlens::kernels {

template <class Arch>
float max_of(const float* x, std::size_t n) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  float m = -std::numeric_limits<float>::infinity();
  std::size_t i = 0;
  if (n >= W) {
    auto acc = V::load(x);
    for (i = W; i + W <= n; i += W) acc = V::max(acc, V::load(x + i));
    m = V::reduce_max(acc);
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// x[j] ← exp(scale·(x[j] − shift)); returns the sum.
template <class Arch>
float exp_shifted(float* x, std::size_t n, float shift, float scale) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  std::size_t i = 0;
  float sum = 0.0f;
  if (n >= W) {
    const auto vs = V::broadcast(shift), vk = V::broadcast(scale);
    auto acc = V::zero();
    for (; i + W <= n; i += W) {
      const auto e = V::exp((V::load(x + i) - vs) * vk);
      V::store(x + i, e);
      acc = acc + e;
    }
    sum = V::reduce_add(acc);
  }
  for (; i < n; ++i) sum += (x[i] = std::exp((x[i] - shift) * scale));
  return sum;
}

template <class Arch>
void scale_in_place(float* x, std::size_t n, float factor) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  const auto vf = V::broadcast(factor);
  std::size_t i = 0;
  for (; i + W <= n; i += W) V::store(x + i, V::load(x + i) * vf);
  for (; i < n; ++i) x[i] *= factor;
}

// Softmax of row[0, visible) with keys where key_mask[j] == 0 dropped; row[visible, n) and
// dropped keys become exactly 0. With nothing visible the row is all zeros.
template <class Arch>
void masked_softmax_row(float* row, std::size_t n, std::size_t visible,
                        const std::uint8_t* key_mask, float scale) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  for (std::size_t j = visible; j < n; ++j) row[j] = 0.0f;
  if (key_mask)
    for (std::size_t j = 0; j < visible; ++j)
      if (!key_mask[j]) row[j] = -inf;  // exp(-inf) = 0
  const float mx = max_of<Arch>(row, visible);
  if (mx == -inf) {  // every key masked
    for (std::size_t j = 0; j < visible; ++j) row[j] = 0.0f;
    return;
  }
  if (mx == inf) {  // QKᵀ overflowed float: the infinite scores share the weight
    std::size_t count = 0;
    for (std::size_t j = 0; j < visible; ++j) count += row[j] == inf;
    for (std::size_t j = 0; j < visible; ++j) row[j] = row[j] == inf ? 1.0f / count : 0.0f;
    return;
  }
  const float sum = exp_shifted<Arch>(row, visible, mx, scale);
  scale_in_place<Arch>(row, visible, 1.0f / sum);
  if (key_mask)  // guarantee exact zeros whatever exp() does at -inf
    for (std::size_t j = 0; j < visible; ++j)
      if (!key_mask[j]) row[j] = 0.0f;
}

}  // namespace attnlens::kernels
