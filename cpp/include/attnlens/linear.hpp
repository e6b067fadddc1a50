// Products with model weights as a checkpoint stores them: nn.Linear's [out, in] row-major, in
// float32, float16 or bfloat16, read in place (16-bit weights stay 16-bit in memory and are
// widened to float32 inside the kernels). The one entry for every weight product of a model's
// forward pass: prefill (m = tokens) and decoding (m = 1).
#pragma once
#include <cstddef>
#include <cstdint>

#include "attnlens/kernel.hpp"

namespace attnlens {

enum class WeightType : std::uint8_t { f32, f16, bf16 };

std::size_t weight_type_size(WeightType t);  // 4 or 2 bytes
float f16_to_f32(std::uint16_t bits);        // exact, subnormals included
float bf16_to_f32(std::uint16_t bits);       // exact: the upper half of a float

// A matrix of `out` rows × `in` columns, row-major, each element of `type` (little-endian);
// `data` is aligned to the element size and outlives every call that reads it.
struct WeightMatrix {
  const void* data = nullptr;
  WeightType type = WeightType::f32;
  std::size_t out = 0, in = 0;
};

// y[m, out] = x[m, in] · Wᵀ (+ bias[out] when bias != nullptr), rows contiguous. Threads (where
// the build has them, attnlens::set_threads) split the work; every element is computed by the
// same instructions whatever the thread count, so results are bit-identical to one thread.
// No checks: callers validate shapes. x and y must not overlap.
void linear(std::size_t m, const float* x, const WeightMatrix& w, const float* bias, float* y,
            Kernel kernel = Kernel::simd);

// Row `row` of W widened to float32 (an embedding lookup): out[in].
void weight_row(const WeightMatrix& w, std::size_t row, float* out);

}  // namespace attnlens
