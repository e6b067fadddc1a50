// One SIMD vocabulary for every kernel: vec<Arch> wraps xsimd::batch<float, Arch>, and
// vec<scalar_arch> is the same interface over a single float. Kernels are written once against
// it; instantiating them with scalar_arch gives the scalar path, and their tails reuse it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

#ifdef ATTNLENS_HAVE_SIMD
#include <xsimd/xsimd.hpp>
#endif

namespace attnlens::kernels {

struct scalar_arch {
  static constexpr const char* name() { return "scalar"; }
};

template <class Arch>
struct vec;

template <>
struct vec<scalar_arch> {
  using type = float;
  static constexpr std::size_t width = 1;
  static type zero() { return 0.0f; }
  static type broadcast(float x) { return x; }
  static type load(const float* p) { return *p; }
  static void store(float* p, type v) { *p = v; }
  static type fma(type a, type b, type c) { return a * b + c; }
  static type max(type a, type b) { return std::max(a, b); }
  static type exp(type a) { return std::exp(a); }
  static float reduce_add(type a) { return a; }
  static float reduce_max(type a) { return a; }
};

#ifdef ATTNLENS_HAVE_SIMD
template <class Arch>
struct vec {
  using type = xsimd::batch<float, Arch>;
  static constexpr std::size_t width = type::size;
  static type zero() { return type(0.0f); }
  static type broadcast(float x) { return type(x); }
  static type load(const float* p) { return type::load_unaligned(p); }
  static void store(float* p, type v) { v.store_unaligned(p); }
  // SIMD128 has no fused multiply-add: xsimd lowers this to mul + add there.
  static type fma(type a, type b, type c) { return xsimd::fma(a, b, c); }
  static type max(type a, type b) { return xsimd::max(a, b); }
  static type exp(type a) { return xsimd::exp(a); }
  static float reduce_add(type a) { return xsimd::reduce_add(a); }
  static float reduce_max(type a) { return xsimd::reduce_max(a); }
};
#endif

}  // namespace attnlens::kernels
