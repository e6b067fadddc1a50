// The activations of attnlens/activation.hpp over one vector of W elements (vec<Arch>): written
// once, instantiated for the SIMD architecture and for scalar_arch (the tails and the scalar path).
#pragma once
#include "kernels/vec.hpp"

namespace attnlens::kernels {

enum class act { gelu_tanh, gelu_erf, silu };

// x / (1 + exp(−t)): x·σ(t). exp overflows to +inf for t < −88, and x/inf is ±0, σ's limit.
template <class Arch>
inline typename vec<Arch>::type times_sigmoid(typename vec<Arch>::type x, typename vec<Arch>::type t) {
  using V = vec<Arch>;
  return x / (V::broadcast(1.0f) + V::exp(-t));
}

template <class Arch, act A>
inline typename vec<Arch>::type activate(typename vec<Arch>::type x) {
  using V = vec<Arch>;
  if constexpr (A == act::gelu_tanh) {
    // 0.5·(1 + tanh(u)) = σ(2u), u = √(2/π)·(x + 0.044715·x³).
    const auto u2 = V::broadcast(2 * 0.7978845608028654f) * V::fma(V::broadcast(0.044715f) * x, x * x, x);
    return times_sigmoid<Arch>(x, u2);
  } else if constexpr (A == act::gelu_erf) {
    // 1 + erf(z) as erfc(−z): no cancellation where erf(z) is near −1 (x ≲ −3).
    return V::broadcast(0.5f) * x * V::erfc(x * V::broadcast(-0.7071067811865476f));
  } else {
    return times_sigmoid<Arch>(x, x);
  }
}

}  // namespace attnlens::kernels
