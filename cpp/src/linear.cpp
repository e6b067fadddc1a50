// The contract's first implementation: plain loops, one float sum per output in column order.
// To be replaced by xsimd kernels (gemv for small m, packed panels widened from 16 bits for
// larger m) and threads; tests hold either against float64 references.
#include "attnlens/linear.hpp"

#include <cstring>

namespace attnlens {

std::size_t weight_type_size(WeightType t) { return t == WeightType::f32 ? 4 : 2; }

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^−24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  std::uint32_t bits = exponent == 31 ? sign | 0x7F800000u | (mantissa << 13)
                                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {
float element(const WeightMatrix& w, std::size_t i) {
  switch (w.type) {
    case WeightType::f32: return static_cast<const float*>(w.data)[i];
    case WeightType::f16: return f16_to_f32(static_cast<const std::uint16_t*>(w.data)[i]);
    case WeightType::bf16: return bf16_to_f32(static_cast<const std::uint16_t*>(w.data)[i]);
  }
  return 0.0f;
}
}  // namespace

void weight_row(const WeightMatrix& w, std::size_t row, float* out) {
  for (std::size_t c = 0; c < w.in; ++c) out[c] = element(w, row * w.in + c);
}

void linear(std::size_t m, const float* x, const WeightMatrix& w, const float* bias, float* y,
            Kernel) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t o = 0; o < w.out; ++o) {
      float sum = 0.0f;
      for (std::size_t c = 0; c < w.in; ++c) sum += x[i * w.in + c] * element(w, o * w.in + c);
      y[i * w.out + o] = sum + (bias ? bias[o] : 0.0f);
    }
}

}  // namespace attnlens
