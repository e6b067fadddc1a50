// One SIMD vocabulary for every kernel: vec<Arch> wraps xsimd::batch<float, Arch>, and
// vec<scalar_arch> is the same interface over a single float. Kernels are written once against
// it; instantiating them with scalar_arch gives the scalar path, and their tails reuse it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#ifdef ATTNLENS_HAVE_SIMD
#include <xsimd/xsimd.hpp>
#endif
#if defined(ATTNLENS_HAVE_SIMD) && defined(__wasm_relaxed_simd__)
#include <wasm_simd128.h>
#define ATTNLENS_RELAXED_SIMD 1
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
  static type erfc(type a) { return std::erfc(a); }
  static float reduce_add(type a) { return a; }
  static float reduce_max(type a) { return a; }
  // rows[i] ← column i of the width × width matrix whose rows are rows[0..width).
  static void transpose(type*) {}
  // The float whose bits are those of k shifted left by 23 (see exp2_softmax).
  static type shift_into_exponent(type k) {
    std::uint32_t bits;
    std::memcpy(&bits, &k, sizeof bits);
    bits <<= 23;
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
  }
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
  static type erfc(type a) { return xsimd::erfc(a); }
  static float reduce_add(type a) { return xsimd::reduce_add(a); }
  static float reduce_max(type a) { return xsimd::reduce_max(a); }
  static void transpose(type* rows) { xsimd::transpose(rows, rows + width); }
  static type shift_into_exponent(type k) {
    return xsimd::bitwise_cast<float>(xsimd::bitwise_cast<std::int32_t>(k) << 23);
  }
};
#endif

#ifdef ATTNLENS_RELAXED_SIMD
// WebAssembly SIMD128 plus relaxed SIMD's f32x4.relaxed_madd (fused where the CPU has FMA, as
// x86-64 with FMA3 and arm64 do; V8 falls back to mul + add elsewhere). xsimd 13 has no relaxed
// path, so this arch tag reuses its wasm batches and swaps in the fused multiply-add; the
// kernels pick their tile shapes per tag (blocked.hpp, gemm.hpp).
struct wasm_relaxed {
  static constexpr const char* name() { return "wasm_relaxed"; }
};
template <>
struct vec<wasm_relaxed> : vec<xsimd::wasm> {
  using type = xsimd::batch<float, xsimd::wasm>;
  static type fma(type a, type b, type c) { return type(wasm_f32x4_relaxed_madd(a, b, c)); }
};
#endif

// The arch tag the SIMD kernels of this binary use: the relaxed tag in the relaxed-SIMD wasm
// build, xsimd's best architecture otherwise.
#if defined(ATTNLENS_RELAXED_SIMD)
using simd_arch = wasm_relaxed;
#elif defined(ATTNLENS_HAVE_SIMD)
using simd_arch = xsimd::default_arch;
#endif

// exp(-inf) is exactly 0 in both instantiations (xsimd selects 0 below its lowest argument), which
// the masked softmax relies on.
inline constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// 2^t for the softmax, where t = scale·log2(e)·(s − max) ≤ 0: about 17 vector operations
// against ~30 for a general exp, relative error ≤ 3e-7. t is clamped at −127, where the power of
// two built from the bits is exactly 0: so −inf (a masked score) and anything below 2^−126.5 give
// exactly 0. NaN stays NaN.
//   k = t + (1.5·2^23 + 127) rounds t to an integer n held in k's low mantissa bits (+127), so
//   k's bits shifted left by 23 are the float 2^n; f = t − n ∈ [−½, ½] goes to a degree-5
//   polynomial fitted to 2^f.
template <class Arch>
inline typename vec<Arch>::type exp2_softmax(typename vec<Arch>::type t) {
  using V = vec<Arch>;
  constexpr float magic = 12582912.0f + 127.0f;
  t = V::max(t, V::broadcast(-127.0f));
  const auto k = t + V::broadcast(magic);
  const auto f = t - (k - V::broadcast(magic));
  auto p = V::broadcast(0.001327645150013268f);
  p = V::fma(p, f, V::broadcast(0.009675541892647743f));
  p = V::fma(p, f, V::broadcast(0.05550713464617729f));
  p = V::fma(p, f, V::broadcast(0.24022120237350464f));
  p = V::fma(p, f, V::broadcast(0.6931469440460205f));
  p = V::fma(p, f, V::broadcast(1.0000001192092896f));
  return p * V::shift_into_exponent(k);
}

inline constexpr float log2e = 1.4426950408889634f;

// out[c·ldo + r] = src[r·lds + c] for r < rows, c < cols: rows of src become columns of out (the
// packed layouts of Qᵀ in attention and of A's row tiles in gemm_packed); whole W × W blocks are
// transposed in registers, the edges copied one float at a time.
template <class Arch>
inline void transpose_rows(const float* src, std::size_t rows, std::size_t cols, std::size_t lds,
                           float* out, std::size_t ldo) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  const std::size_t rw = W > 1 ? rows / W * W : 0, cw = W > 1 ? cols / W * W : 0;
  for (std::size_t r = 0; r < rw; r += W)
    for (std::size_t c = 0; c < cw; c += W) {
      typename V::type block[W];
      for (std::size_t i = 0; i < W; ++i) block[i] = V::load(src + (r + i) * lds + c);
      V::transpose(block);
      for (std::size_t i = 0; i < W; ++i) V::store(out + (c + i) * ldo + r, block[i]);
    }
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = c < cw ? rw : 0; r < rows; ++r) out[c * ldo + r] = src[r * lds + c];
}

}  // namespace attnlens::kernels
