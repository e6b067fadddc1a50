// C[m,n] = A[m,k] · B[k,n] (+ bias[n]), row-major with leading dimensions.
// Register tiling: an MR × (NB·width) block of C lives in MR·NB vector accumulators while the
// k loop broadcasts one A value per row and loads NB vectors of one B row, so B must be laid out
// with contiguous columns. Used by matmul() (projections, model layers); attention has its own
// blocked kernels (blocked.hpp).
#pragma once
#include <cstddef>
#include <vector>

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

// `group` column panels of B (cols columns each, a multiple of the vector width; rows [0, k))
// copied contiguous, panel after panel: out[g][p][c] = b[p][g·cols + c]. Rows of B a
// power-of-two-ish number of bytes apart (a 1024-wide weight matrix: 4 KiB) map to the same few
// L1 sets, so a tile walking down an unpacked panel misses on nearly every row once k is in the
// hundreds; packing whole 64-byte lines of each row reads every line once.
template <class Arch>
ATTNLENS_NOINLINE void pack_panels(std::size_t k, std::size_t cols, std::size_t group,
                                   const float* b, std::size_t ldb, float* out) {
  using V = vec<Arch>;
  for (std::size_t p = 0; p < k; ++p, b += ldb)
    for (std::size_t g = 0; g < group; ++g)
      for (std::size_t c = 0; c < cols; c += V::width)
        V::store(out + (g * k + p) * cols + c, V::load(b + g * cols + c));
}

// Per-thread scratch for one packed panel; grows to the largest panel seen, then is reused.
inline float* panel_scratch(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

// The register tile's shape: 4 × 2 vectors on SIMD128 (8 accumulators + 2 loads + 4 broadcasts
// + a product fit the 15 registers V8 gives); 12 accumulators (4 × 3) elsewhere (FMA, 16 or 32
// registers).
template <class Arch>
struct gemm_shape {
  static constexpr std::size_t W = vec<Arch>::width;
  static constexpr std::size_t MR = 4, NB = W == 4 ? 2 : 3, cols = NB * W;
};

// B [k, n] (row stride n) laid out for gemm_packed: each whole panel of `cols` columns as
// [k][cols], panel after panel (the panel of column j at j·k), then the last n mod cols columns
// as [k][n mod cols]. Same size as B.
template <class Arch>
void pack_weights(std::size_t k, std::size_t n, const float* b, float* out) {
  constexpr std::size_t cols = gemm_shape<Arch>::cols;
  std::size_t j = 0;
  for (; j + cols <= n; j += cols) pack_panels<Arch>(k, cols, 1, b + j, n, out + j * k);
  const std::size_t tail = n - j;
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t c = 0; c < tail; ++c) out[j * k + p * tail + c] = b[p * n + j + c];
}

// C = A · B (+ bias) with B from pack_weights: every panel is read contiguously.
template <class Arch>
void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                 const float* packed, float* c, std::size_t ldc, const float* bias = nullptr) {
  using S = gemm_shape<Arch>;
  constexpr std::size_t W = S::W, MR = S::MR, NB = S::NB, cols = S::cols;
  auto bias_at = [&](std::size_t col) { return bias ? bias + col : nullptr; };
  std::size_t j = 0;
  for (; j + cols <= n; j += cols)
    gemm_panel<Arch, MR, NB>(m, k, a, lda, packed + j * k, cols, c + j, ldc, bias_at(j));
  const std::size_t tail = n - j;
  const float* t = packed + j * k;
  std::size_t q = 0;
  for (; q + W <= tail; q += W)
    gemm_panel<Arch, MR, 1>(m, k, a, lda, t + q, tail, c + j + q, ldc, bias_at(j + q));
  for (; q < tail; ++q)
    gemm_panel<scalar_arch, MR, 1>(m, k, a, lda, t + q, tail, c + j + q, ldc, bias_at(j + q));
}

template <class Arch>
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float* c, std::size_t ldc,
          const float* bias = nullptr) {
  using S = gemm_shape<Arch>;
  constexpr std::size_t W = S::W, MR = S::MR, NB = S::NB, cols = S::cols;
  // Packing reads B once more; it pays when many row tiles walk it (measured on USE-lite in V8:
  // a loss at 12 rows, even at 36, a gain at 128). Panels are packed in groups covering 64 bytes
  // of a row (two of 8 floats on wasm). Constant weights are better packed once (PackedMatrix).
  constexpr std::size_t group = 64 / (cols * sizeof(float)) > 1 ? 64 / (cols * sizeof(float)) : 1;
  float* packed = m >= 16 * MR ? panel_scratch(k * cols * group) : nullptr;
  ATTNLENS_OUT_OF_LINE(pack_panels<Arch>);
  std::size_t j = 0;
  auto bias_at = [&](std::size_t col) { return bias ? bias + col : nullptr; };
  if (packed)
    for (; j + group * cols <= n; j += group * cols) {
      pack_panels<Arch>(k, cols, group, b + j, ldb, packed);
      for (std::size_t g = 0; g < group; ++g)
        gemm_panel<Arch, MR, NB>(m, k, a, lda, packed + g * k * cols, cols, c + j + g * cols, ldc,
                                 bias_at(j + g * cols));
    }
  for (; j + cols <= n; j += cols)
    gemm_panel<Arch, MR, NB>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
  for (; j + W <= n; j += W)
    gemm_panel<Arch, MR, 1>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
  // Scalar tail: the columns left over after whole vectors.
  for (; j < n; ++j)
    gemm_panel<scalar_arch, MR, 1>(m, k, a, lda, b + j, ldb, c + j, ldc, bias_at(j));
}

}  // namespace attnlens::kernels
