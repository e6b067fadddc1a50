// Dense building blocks shared by attention, multi-head projections and model forward passes.
#pragma once
#include <cstddef>

#include "attnlens/kernel.hpp"

namespace attnlens {

// C[m,n] = A[m,k] · B[k,n] (+ bias[n] broadcast over rows when bias != nullptr).
// Row-major, contiguous. No checks: callers validate shapes.
void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
            float* c, const float* bias = nullptr, Kernel kernel = Kernel::simd);

}  // namespace attnlens
