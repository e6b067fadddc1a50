// Kernels for y = x · Wᵀ with W as a checkpoint stores it ([out, in] rows of float32, float16 or
// bfloat16): 16-bit weights are widened to float32 in registers as they load.
//   - gemv_rows (one input row, decoding): streams W once, front to back, one row at a time.
//   - pack_weight_panel (larger m, prefill): one gemm panel of Wᵀ widened to float32, for the
//     register tiles of gemm.hpp.
// Widening, 2·W 16-bit values at a time: one vector load of W 32-bit lanes, each holding an even
// element (low half) and an odd one (high half), split by shifts and masks into a vector of the
// even elements and one of the odd. The matrix-vector kernel multiplies them by x's even and odd
// elements (x permuted once per call, permute_x); packing interleaves them back (zip).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/blocked.hpp"  // ATTNLENS_NOINLINE, ATTNLENS_OUT_OF_LINE
#include "kernels/gemm.hpp"
#include "kernels/vec.hpp"

namespace attnlens::kernels {

// float16 → float32 for finite values, subnormals included: the magnitude's 15 bits moved to a
// float's exponent and mantissa (exponent bias 15 → 127 − 112) and scaled by 2^112, which also
// turns a float16 subnormal (exponent 0) into the right float32 normal; the sign rides along.
// Infinities and NaN come out as large finite numbers: the loaders reject non-finite weights.
inline float f16_finite_to_f32(std::uint16_t h) {
  const std::uint32_t bits = (std::uint32_t{h} & 0x7FFFu) << 13 | (std::uint32_t{h} & 0x8000u) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f * 0x1p112f;
}
inline float bf16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// How each weight type loads: `pair` gives the two vectors of 2·W consecutive weights (f32: in
// order, first half then second; 16-bit: even elements, odd elements), `one` a single weight.
struct f32_weights {
  using elem = float;
  static constexpr bool interleaved = false;
  static float one(elem w) { return w; }
  template <class Arch>
  static void pair(const elem* p, typename vec<Arch>::type& a, typename vec<Arch>::type& b) {
    a = vec<Arch>::load(p);
    b = vec<Arch>::load(p + vec<Arch>::width);
  }
};

template <class Arch>
struct lanes16;  // the shifts and masks of one 16-bit format, per architecture

struct f16_weights {
  using elem = std::uint16_t;
  static constexpr bool interleaved = true;
  static float one(elem w) { return f16_finite_to_f32(w); }
  template <class Arch>
  static void pair(const elem* p, typename vec<Arch>::type& even, typename vec<Arch>::type& odd) {
    lanes16<Arch>::f16(p, even, odd);
  }
};

struct bf16_weights {
  using elem = std::uint16_t;
  static constexpr bool interleaved = true;
  static float one(elem w) { return bf16_bits_to_f32(w); }
  template <class Arch>
  static void pair(const elem* p, typename vec<Arch>::type& even, typename vec<Arch>::type& odd) {
    lanes16<Arch>::bf16(p, even, odd);
  }
};

template <>
struct lanes16<scalar_arch> {
  static void f16(const std::uint16_t* p, float& even, float& odd) {
    even = f16_finite_to_f32(p[0]), odd = f16_finite_to_f32(p[1]);
  }
  static void bf16(const std::uint16_t* p, float& even, float& odd) {
    even = bf16_bits_to_f32(p[0]), odd = bf16_bits_to_f32(p[1]);
  }
  static void zip(float even, float odd, float* out) { out[0] = even, out[1] = odd; }
};

#ifdef ATTNLENS_HAVE_SIMD
// Float16, in 5 integer operations for 2·W values: an arithmetic shift right by 3 moves a half's
// sign to bit 31 and its exponent and mantissa to bits 27…13 (float32's exponent and mantissa,
// exponent bias off by 112), with copies of the sign in bits 30…28 that the mask clears; the
// even half is first shifted up into the high half. Then × 2^112 (f16_finite_to_f32).
template <class Arch>
struct lanes16 {
  using F = typename vec<Arch>::type;
  using I = xsimd::batch<std::int32_t, typename F::arch_type>;
  static I load(const std::uint16_t* p) {
    return I::load_unaligned(reinterpret_cast<const std::int32_t*>(p));
  }
  static void f16(const std::uint16_t* p, F& even, F& odd) {
    const I v = load(p), keep(static_cast<std::int32_t>(0x8FFFE000u));
    const F scale(0x1p112f);
    even = xsimd::bitwise_cast<float>(((v << 16) >> 3) & keep) * scale;
    odd = xsimd::bitwise_cast<float>((v >> 3) & keep) * scale;
  }
  static void bf16(const std::uint16_t* p, F& even, F& odd) {
    const I v = load(p);
    even = xsimd::bitwise_cast<float>(v << 16);
    odd = xsimd::bitwise_cast<float>(v & I(static_cast<std::int32_t>(0xFFFF0000u)));
  }
  static void zip(F even, F odd, float* out) {
    vec<Arch>::store(out, xsimd::zip_lo(even, odd));
    vec<Arch>::store(out + vec<Arch>::width, xsimd::zip_hi(even, odd));
  }
};
#endif

// x's rows (m × in, row stride ldx) as gemv_rows reads them for interleaved weights: in each
// whole block of 2·W columns the even columns, then the odd ones; the columns after the last
// whole block as they are. out: m × in, row stride in.
template <class Arch>
void permute_x(std::size_t m, std::size_t in, const float* x, std::size_t ldx, float* out) {
  constexpr std::size_t W = vec<Arch>::width, B = 2 * W;
  for (std::size_t i = 0; i < m; ++i, x += ldx, out += in) {
    std::size_t c = 0;
    for (; c + B <= in; c += B)
      for (std::size_t l = 0; l < W; ++l) out[c + l] = x[c + 2 * l], out[c + W + l] = x[c + 2 * l + 1];
    for (; c < in; ++c) out[c] = x[c];
  }
}

// y[r] = Σ_c x[c] · w[r·in + c] (+ bias[r]) for the weight rows [begin, end), one row after the
// other, each read front to back. One row at a time, because the product is bound by reading W:
// in V8 (Node 20, relaxed SIMD) a single sequential stream read 23 GB/s of float32 weights where
// four rows read side by side (the previous tile) read 10 (f16: 18 against 7; a micro-benchmark,
// one thread). The loop over rows is inside, so a narrow row (SmolLM's 576 columns) pays no call
// per row. Two pairs of accumulators (two independent chains per half), summed at the row's end,
// then the columns after the last whole block one by one and the bias: every row is computed by
// the same instructions, so how rows are split among threads never changes a bit.
template <class Arch, class Weights>
ATTNLENS_NOINLINE void gemv_rows(std::size_t begin, std::size_t end, std::size_t in, const float* x,
                                 const typename Weights::elem* w, float* y, const float* bias) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width, B = 2 * W;
  const std::size_t blocks = in / B;
  for (std::size_t r = begin; r < end; ++r) {
    T acc[2][2] = {{V::zero(), V::zero()}, {V::zero(), V::zero()}};
    // Pointers stepped by hand (emscripten builds without loop strength reduction: gemm_tile).
    const typename Weights::elem* row = w + r * in;
    const typename Weights::elem* wp = row;
    const float* xp = x;
    std::size_t b = 0;
    for (; b + 2 <= blocks; b += 2, wp += 2 * B, xp += 2 * B)
      for (std::size_t p = 0; p < 2; ++p) {
        T wa, wb;
        Weights::template pair<Arch>(wp + p * B, wa, wb);
        acc[p][0] = V::fma(V::load(xp + p * B), wa, acc[p][0]);
        acc[p][1] = V::fma(V::load(xp + p * B + W), wb, acc[p][1]);
      }
    if (b < blocks) {  // a last whole block (an odd count): into the first pair
      T wa, wb;
      Weights::template pair<Arch>(wp, wa, wb);
      acc[0][0] = V::fma(V::load(xp), wa, acc[0][0]);
      acc[0][1] = V::fma(V::load(xp + W), wb, acc[0][1]);
    }
    float sum = V::reduce_add((acc[0][0] + acc[1][0]) + (acc[0][1] + acc[1][1]));
    for (std::size_t k = blocks * B; k < in; ++k) sum += x[k] * Weights::one(row[k]);
    y[r] = bias ? sum + bias[r] : sum;
  }
}

// `rows` weight rows (of `in` each) widened to float32, in order: out[r·in + c].
template <class Arch, class Weights>
ATTNLENS_NOINLINE void widen_rows(std::size_t rows, std::size_t in, const typename Weights::elem* w,
                                  float* out) {
  constexpr std::size_t W = vec<Arch>::width, B = 2 * W;
  for (std::size_t r = 0; r < rows; ++r, w += in, out += in) {
    std::size_t c = 0;
    for (; c + B <= in; c += B) {
      typename vec<Arch>::type even, odd;
      Weights::template pair<Arch>(w + c, even, odd);
      lanes16<Arch>::zip(even, odd, out + c);
    }
    for (; c < in; ++c) out[c] = Weights::one(w[c]);
  }
}
struct w_rows;   // widened weight rows before they are transposed into a panel
struct w_panel;  // one packed panel of Wᵀ

// Columns [j, j + cols) of Wᵀ (weight rows j…) as gemm_packed_panel reads them: [in][cols],
// float32. Float32 rows are transposed in place; 16-bit ones widened into scratch first.
template <class Arch, class Weights>
const float* pack_weight_panel(std::size_t j, std::size_t cols, std::size_t in,
                               const typename Weights::elem* w, float* panel) {
  const typename Weights::elem* rows = w + j * in;
  if constexpr (Weights::interleaved) {
    float* wide = thread_scratch<w_rows>(cols * in);
    widen_rows<Arch, Weights>(cols, in, rows, wide);
    transpose_rows<Arch>(wide, cols, in, in, panel, cols);
  } else {
    transpose_rows<Arch>(rows, cols, in, in, panel, cols);
  }
  return panel;
}

}  // namespace attnlens::kernels
