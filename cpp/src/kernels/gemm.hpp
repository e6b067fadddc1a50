// C[m,n] = A[m,k] · B[k,n] (+ bias[n]), row-major with leading dimensions.
// Register tiling: an MR × (NB·width) block of C lives in MR·NB vector accumulators while the
// k loop broadcasts one A value per row and loads NB vectors of one B row, so B must be laid out
// with contiguous columns. Used by matmul() (projections, model layers); attention has its own
// blocked kernels (blocked.hpp).
#pragma once
#include <cstddef>

#include "kernels/blocked.hpp"  // ATTNLENS_NOINLINE, ATTNLENS_OUT_OF_LINE
#include "kernels/vec.hpp"

namespace attnlens::kernels {

// Out of line on purpose (see ATTNLENS_OUT_OF_LINE in blocked.hpp): V8 keeps a small
// function's accumulators in registers.
template <class Arch, std::size_t MR, std::size_t NB>
ATTNLENS_NOINLINE void gemm_tile(std::size_t k, const float* a, std::size_t lda, const float* b,
                      std::size_t ldb, float* c, std::size_t ldc, const float* bias) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  T acc[MR][NB];
  for (std::size_t j = 0; j < NB; ++j) {
    const T init = bias ? V::load(bias + j * W) : V::zero();
    for (std::size_t r = 0; r < MR; ++r) acc[r][j] = init;
  }
  // Pointers stepped by hand: emscripten builds with loop strength reduction off, so index
  // arithmetic like a[r·lda + p] would be recomputed (a multiply and adds) on every step.
  const float* ar[MR];
  for (std::size_t r = 0; r < MR; ++r) ar[r] = a + r * lda;
  for (std::size_t p = 0; p < k; ++p, b += ldb) {
    T bv[NB];
    for (std::size_t j = 0; j < NB; ++j) bv[j] = V::load(b + j * W);
    for (std::size_t r = 0; r < MR; ++r) {
      const T av = V::broadcast(*ar[r]++);
      for (std::size_t j = 0; j < NB; ++j) acc[r][j] = V::fma(av, bv[j], acc[r][j]);
    }
  }
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t j = 0; j < NB; ++j) V::store(c + r * ldc + j * W, acc[r][j]);
}

// All rows of one column panel: full MR-row tiles, then single rows.
template <class Arch, std::size_t MR, std::size_t NB>
inline void gemm_panel(std::size_t m, std::size_t k, const float* a, std::size_t lda,
                       const float* b, std::size_t ldb, float* c, std::size_t ldc,
                       const float* bias) {
  ATTNLENS_OUT_OF_LINE(gemm_tile<Arch, MR, NB>);
  ATTNLENS_OUT_OF_LINE(gemm_tile<Arch, 1, NB>);
  std::size_t i = 0;
  for (; i + MR <= m; i += MR)
    gemm_tile<Arch, MR, NB>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, bias);
  for (; i < m; ++i) gemm_tile<Arch, 1, NB>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, bias);
}

template <class Arch>
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float* c, std::size_t ldc,
          const float* bias = nullptr) {
  constexpr std::size_t W = vec<Arch>::width;
  // 4 × 2 vectors on SIMD128: 8 accumulators + 2 loads + 4 broadcasts + a product fit the 15
  // registers V8 gives; 12 accumulators (4 × 3) elsewhere (FMA, 16 or 32 registers).
  constexpr std::size_t MR = 4, NB = W == 4 ? 2 : 3;
  std::size_t j = 0;
  auto bias_at = [&](std::size_t col) { return bias ? bias + col : nullptr; };
  for (; j + NB * W <= n; j += NB * W)
    gemm_panel<Arch, MR, NB>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
  for (; j + W <= n; j += W)
    gemm_panel<Arch, MR, 1>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
  // Scalar tail: the columns left over after whole vectors.
  for (; j < n; ++j)
    gemm_panel<scalar_arch, MR, 1>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
}

}  // namespace attnlens::kernels
