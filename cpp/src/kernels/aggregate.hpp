// Element-wise reductions over heads: out[c] = Σ_h or max_h of w[h·count + c], for c < count.
// Whole vectors first, then a scalar tail (the same code instantiated with scalar_arch).
#pragma once
#include <cstddef>

#include "kernels/vec.hpp"

namespace attnlens::kernels {

template <class Arch, bool Max>
inline std::size_t reduce_heads_part(std::size_t heads, std::size_t count, const float* w,
                                     float* out, std::size_t from, float factor) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  std::size_t c = from;
  const auto f = V::broadcast(factor);
  for (; c + W <= count; c += W) {
    auto acc = V::load(w + c);
    for (std::size_t h = 1; h < heads; ++h) {
      const auto x = V::load(w + h * count + c);
      if constexpr (Max) acc = V::max(acc, x);
      else acc = acc + x;
    }
    if constexpr (!Max) acc = acc * f;
    V::store(out + c, acc);
  }
  return c;
}

// factor multiplies the sum (1/heads for a mean); unused for the max.
template <class Arch, bool Max>
void reduce_heads(std::size_t heads, std::size_t count, const float* w, float* out, float factor) {
  const std::size_t done = reduce_heads_part<Arch, Max>(heads, count, w, out, 0, factor);
  reduce_heads_part<scalar_arch, Max>(heads, count, w, out, done, factor);
}

}  // namespace attnlens::kernels
