// Dense building blocks shared by attention, multi-head projections and model forward passes.
#pragma once
#include <cstddef>
#include <vector>

#include "attnlens/kernel.hpp"

namespace attnlens {

// C[m,n] = A[m,k] · B[k,n] (+ bias[n] broadcast over rows when bias != nullptr).
// Row-major, contiguous. No checks: callers validate shapes.
void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
            float* c, const float* bias = nullptr, Kernel kernel = Kernel::simd);

// A constant B [k, n] (model weights: row-major, read in place, must outlive this) repacked on
// first use for each kernel into whole column panels, so that every matmul() walks it
// contiguously instead of striding a row length through it (rows a power-of-two-ish number of
// bytes apart share L1 sets). Costs one copy of B per kernel used. Not thread-safe on first use.
class PackedMatrix {
 public:
  PackedMatrix() = default;
  PackedMatrix(std::size_t k, std::size_t n, const float* b) : k_(k), n_(n), b_(b) {}
  std::size_t rows() const { return k_; }
  std::size_t cols() const { return n_; }
  // The panels for `kernel` (see kernels/gemm.hpp, pack_weights).
  const float* packed(Kernel kernel) const;

 private:
  std::size_t k_ = 0, n_ = 0;
  const float* b_ = nullptr;
  mutable std::vector<float> packed_[2];  // by kernel: scalar, simd
};

// C[m, n] = A[m, k] · B + bias, B packed (k = b.rows(), n = b.cols()).
void matmul(std::size_t m, const float* a, const PackedMatrix& b, float* c,
            const float* bias = nullptr, Kernel kernel = Kernel::simd);

}  // namespace attnlens
