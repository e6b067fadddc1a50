// C[m,n] = A[m,k] · B[k,n] (+ bias[n]), row-major with leading dimensions.
// Register tiling: an MR × (NB·width) block of C lives in MR·NB vector accumulators while the
// k loop broadcasts one A value per row and loads NB vectors of one B row, so B must be laid out
// with contiguous columns. Used by matmul() (projections, model layers); attention has its own
// blocked kernels (blocked.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/blocked.hpp"  // ATTNLENS_NOINLINE, ATTNLENS_OUT_OF_LINE
#include "kernels/vec.hpp"

namespace attnlens::kernels {

// A tile's accumulators start as the bias (or zero) in every row, and end in C (row stride ldc).
template <class Arch, std::size_t MR, std::size_t NB>
inline void tile_start(typename vec<Arch>::type (&acc)[MR][NB], const float* bias) {
  using V = vec<Arch>;
  for (std::size_t j = 0; j < NB; ++j) {
    const typename V::type init = bias ? V::load(bias + j * V::width) : V::zero();
    for (std::size_t r = 0; r < MR; ++r) acc[r][j] = init;
  }
}
template <class Arch, std::size_t MR, std::size_t NB>
inline void tile_store(const typename vec<Arch>::type (&acc)[MR][NB], float* c, std::size_t ldc) {
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t j = 0; j < NB; ++j) vec<Arch>::store(c + r * ldc + j * vec<Arch>::width, acc[r][j]);
}

// Out of line on purpose (see ATTNLENS_OUT_OF_LINE in blocked.hpp): V8 keeps a small
// function's accumulators in registers.
template <class Arch, std::size_t MR, std::size_t NB>
ATTNLENS_NOINLINE void gemm_tile(std::size_t k, const float* a, std::size_t lda, const float* b,
                      std::size_t ldb, float* c, std::size_t ldc, const float* bias) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  T acc[MR][NB];
  tile_start<Arch>(acc, bias);
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
  tile_store<Arch>(acc, c, ldc);
}

#ifdef ATTNLENS_RELAXED_SIMD
// Lane `lane` (0–3) of v in every lane: one shuffle. `lane` must fold to a constant, as it does
// in the fully unrolled row loop of gemm_tile_packed.
inline vec<wasm_relaxed>::type lane_splat(vec<wasm_relaxed>::type v, std::size_t lane) {
  switch (lane) {
    case 0: return wasm_i32x4_shuffle(v, v, 0, 0, 0, 0);
    case 1: return wasm_i32x4_shuffle(v, v, 1, 1, 1, 1);
    case 2: return wasm_i32x4_shuffle(v, v, 2, 2, 2, 2);
    default: return wasm_i32x4_shuffle(v, v, 3, 3, 3, 3);
  }
}
#endif

template <class Arch>
struct gemm_shape;

// The same tile over A rows packed by pack_rows (a[p·MR + r] = row r, column p) and a packed
// panel (row stride NB·W): one pointer for each, stepped by a constant, and every A value at a
// constant offset from it. gemm_tile's MR row pointers and run-time stride cost V8 a scalar add
// per row and step beside the step's MR·NB multiply-adds. With lane_splats (relaxed SIMD), rows
// 0–3 come from one vector load and shuffles: V8 issues all of a step's loads before its
// multiply-adds, so each broadcast load holds a register until then, while a shuffle is placed
// next to its use; that is what lets 5 × 2 (10 accumulators, one more than FMA latency ×
// throughput needs) fit V8's 15 registers. The sums are the same, in the same order.
template <class Arch, std::size_t MR, std::size_t NB>
ATTNLENS_NOINLINE void gemm_tile_packed(std::size_t k, const float* a, const float* b, float* c,
                                        std::size_t ldc, const float* bias) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  T acc[MR][NB];
  tile_start<Arch>(acc, bias);
  for (const float* const end = a + k * MR; a != end; a += MR, b += NB * W) {
    T bv[NB];
    for (std::size_t j = 0; j < NB; ++j) bv[j] = V::load(b + j * W);
    [[maybe_unused]] T lanes;
    if constexpr (gemm_shape<Arch>::lane_splats) lanes = V::load(a);
    for (std::size_t r = 0; r < MR; ++r) {
      T av;
      if constexpr (gemm_shape<Arch>::lane_splats) av = r < W ? T(lane_splat(lanes, r)) : V::broadcast(a[r]);
      else av = V::broadcast(a[r]);
      for (std::size_t j = 0; j < NB; ++j) acc[r][j] = V::fma(av, bv[j], acc[r][j]);
    }
  }
  tile_store<Arch>(acc, c, ldc);
}

// MR rows of A (row stride lda, k columns) interleaved for gemm_tile_packed: out[p·MR + r] =
// a[r·lda + p].
template <class Arch, std::size_t MR>
ATTNLENS_NOINLINE void pack_rows(std::size_t k, const float* a, std::size_t lda, float* out) {
  transpose_rows<Arch>(a, MR, k, lda, out, MR);
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

// Per-thread scratch, one buffer per `Use` tag; grows to the largest size asked, then is reused.
template <class Use>
inline float* thread_scratch(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}
struct b_panels;  // gemm: a group of packed column panels of B
struct a_rows;    // gemm_packed: A's row tiles packed by pack_rows

// The register tile's shape: 4 × 2 vectors on SIMD128 (8 accumulators + 2 loads + 4 broadcasts
// + a product fit the 15 registers V8 gives); 12 accumulators (4 × 3) elsewhere (FMA, 16 or 32
// registers). gemm_packed's row tiles have packed_MR rows (4-row tiles and single rows take what
// is left), rows 0–3 of each step from one vector load where lane_splats (gemm_tile_packed). On
// relaxed SIMD, 5 × 2 with lane splats ran 1.10–1.13× the 4 × 2 tile's GFLOP/s in V8 alone
// (m = 36–128, k = 256–1536; 1.02–1.04× on whole USE-lite passes, where the weights' memory
// traffic counts too); on SIMD128 (mul + add needs a temporary), and with broadcasts, it spilled.
template <class Arch>
struct gemm_shape {
  static constexpr std::size_t W = vec<Arch>::width;
  static constexpr std::size_t MR = 4, NB = W == 4 ? 2 : 3, cols = NB * W;
  static constexpr std::size_t packed_MR = MR;
  static constexpr bool lane_splats = false;
};
#ifdef ATTNLENS_RELAXED_SIMD
template <>
struct gemm_shape<wasm_relaxed> {
  static constexpr std::size_t W = 4, MR = 4, NB = 2, cols = 8, packed_MR = 5;
  static constexpr bool lane_splats = true;
};
#endif

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

// One load per 64-byte line of [p, p + floats), summed so that the loads stay: issued between
// the row tiles of one panel, they bring the next panel in while the tiles compute.
ATTNLENS_NOINLINE inline float touch_lines(const float* p, std::size_t floats) {
  float sum = 0;
  for (std::size_t i = 0; i < floats; i += 16) sum += p[i];
  return sum;
}
inline thread_local volatile float touch_sink;

// How gemm_packed covers m rows: `big` tiles of MR rows, then `small` tiles of 4, then single
// rows. With MR = 5, as many 5-row tiles as leave a multiple of 4 rows (every m ≥ 12 is 5a + 4b).
struct row_tiles {
  std::size_t big = 0, small = 0;
};
template <std::size_t MR>
constexpr row_tiles plan_rows(std::size_t m) {
  if constexpr (MR == 4) {
    return {m / 4, 0};
  } else {
    for (std::size_t big = m / MR + 1; big-- > 0;)
      if ((m - big * MR) % 4 == 0) return {big, (m - big * MR) / 4};
    return {m / MR, m % MR / 4};
  }
}

// A's rows as gemm_packed's panels walk them: plan.big tiles of packed_MR rows and plan.small
// tiles of 4, packed by pack_rows into `rows` (tiled rows × k), then single rows read in place.
struct packed_a_rows {
  row_tiles plan;
  std::size_t tiled = 0;  // rows in tiles, packed
  const float* rows = nullptr;
};

// Packs A for panels of gemm_shape<Arch>::cols columns (no tiles when n < cols: only the tail
// columns run, on unpacked rows) into this thread's scratch.
template <class Arch>
packed_a_rows pack_a_rows(std::size_t m, std::size_t n, std::size_t k, const float* a,
                          std::size_t lda) {
  using S = gemm_shape<Arch>;
  constexpr std::size_t MR = S::packed_MR;
  packed_a_rows p;
  p.plan = n >= S::cols ? plan_rows<MR>(m) : row_tiles{};
  p.tiled = p.plan.big * MR + p.plan.small * 4;
  float* rows = p.tiled ? thread_scratch<a_rows>(p.tiled * k) : nullptr;
  ATTNLENS_OUT_OF_LINE(pack_rows<Arch, MR>);
  ATTNLENS_OUT_OF_LINE(pack_rows<Arch, 4>);
  for (std::size_t i = 0; i < p.plan.big * MR; i += MR) pack_rows<Arch, MR>(k, a + i * lda, lda, rows + i * k);
  for (std::size_t i = p.plan.big * MR; i < p.tiled; i += 4) pack_rows<Arch, 4>(k, a + i * lda, lda, rows + i * k);
  p.rows = rows;
  return p;
}

// C[:, 0, cols) = A · panel (+ bias) for one packed panel (k × cols, row stride cols), every row
// tile of `pa` then the single rows. With `next` (the panel after this one), one load per line
// of it is spread between the tiles, so that it arrives while they compute; returns their sum.
template <class Arch>
float gemm_packed_panel(std::size_t m, std::size_t k, const packed_a_rows& pa, const float* a,
                        std::size_t lda, const float* panel, const float* next, float* c,
                        std::size_t ldc, const float* bias) {
  using S = gemm_shape<Arch>;
  constexpr std::size_t MR = S::packed_MR, NB = S::NB, cols = S::cols;
  ATTNLENS_OUT_OF_LINE(gemm_tile_packed<Arch, MR, NB>);
  ATTNLENS_OUT_OF_LINE(gemm_tile_packed<Arch, 4, NB>);
  ATTNLENS_OUT_OF_LINE(gemm_tile<Arch, 1, NB>);
  const std::size_t count = pa.plan.big + pa.plan.small + (m - pa.tiled);  // tiles per panel
  const std::size_t slice = count > 1 ? (k * cols + count - 2) / (count - 1) : 0;
  float touched = 0;
  std::size_t i = 0, t = 0;
  auto touch = [&]() {
    if (next && t > 0 && slice) {
      const std::size_t from = (t - 1) * slice;
      if (from < k * cols) touched += touch_lines(next + from, std::min(slice, k * cols - from));
    }
    ++t;
  };
  for (; i < pa.plan.big * MR; i += MR) {
    touch();
    gemm_tile_packed<Arch, MR, NB>(k, pa.rows + i * k, panel, c + i * ldc, ldc, bias);
  }
  for (; i < pa.tiled; i += 4) {
    touch();
    gemm_tile_packed<Arch, 4, NB>(k, pa.rows + i * k, panel, c + i * ldc, ldc, bias);
  }
  for (; i < m; ++i) {
    touch();
    gemm_tile<Arch, 1, NB>(k, a + i * lda, lda, panel, cols, c + i * ldc, ldc, bias);
  }
  return touched;
}

// The last `tail` (< cols) columns, packed as [k][tail]: whole vectors, then single columns.
template <class Arch>
void gemm_packed_tail(std::size_t m, std::size_t tail, std::size_t k, const float* a,
                      std::size_t lda, const float* t, float* c, std::size_t ldc,
                      const float* bias) {
  using S = gemm_shape<Arch>;
  constexpr std::size_t W = S::W;
  auto bias_at = [&](std::size_t col) { return bias ? bias + col : nullptr; };
  std::size_t q = 0;
  for (; q + W <= tail; q += W)
    gemm_panel<Arch, S::MR, 1>(m, k, a, lda, t + q, tail, c + q, ldc, bias_at(q));
  for (; q < tail; ++q)
    gemm_panel<scalar_arch, S::MR, 1>(m, k, a, lda, t + q, tail, c + q, ldc, bias_at(q));
}

// C = A · B (+ bias) with B from pack_weights: every panel is read contiguously, and A's row
// tiles are packed once (pack_rows) for all the panels that walk them.
template <class Arch>
void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                 const float* packed, float* c, std::size_t ldc, const float* bias = nullptr) {
  constexpr std::size_t cols = gemm_shape<Arch>::cols;
  auto bias_at = [&](std::size_t col) { return bias ? bias + col : nullptr; };
  const packed_a_rows pa = pack_a_rows<Arch>(m, n, k, a, lda);
  float touched = 0;
  std::size_t j = 0;
  for (; j + cols <= n; j += cols) {
    const float* panel = packed + j * k;
    const float* next = j + 2 * cols <= n ? panel + k * cols : nullptr;
    touched += gemm_packed_panel<Arch>(m, k, pa, a, lda, panel, next, c + j, ldc, bias_at(j));
  }
  touch_sink = touched;
  gemm_packed_tail<Arch>(m, n - j, k, a, lda, packed + j * k, c + j, ldc, bias_at(j));
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
  float* packed = m >= 16 * MR ? thread_scratch<b_panels>(k * cols * group) : nullptr;
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
