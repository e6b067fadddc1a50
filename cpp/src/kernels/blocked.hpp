// Building blocks of the blocked attention kernels (cpp/src/attention.cpp puts them together).
//
// Scores are kept *transposed*: a tile S̃[j][i] holds key j's score against query i, with a block
// of Bq queries contiguous. Then
//   - S̃ = K·Qᵀ is a register-tiled product whose broadcasts come from packed K and whose vector
//     loads come from Qᵀ (queries contiguous);
//   - the softmax runs down the columns: each SIMD lane is one query, so the running max, the
//     running sum and the rescale factors are plain vertical operations, with no horizontal
//     reductions and no per-query branching;
//   - O += P·V broadcasts P̃[j][i] (consecutive queries at constant offsets) against rows of V.
// Every packed panel is padded with zeros to whole tiles, so the microkernels have no tails.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/vec.hpp"

// The microkernels stay out of line: in wasm, V8 allocates registers per function, and a small
// function whose only live values are the tile's accumulators keeps them all in registers, where
// one big inlined function spilled them on every iteration. noinline stops clang; binaryen
// (emscripten's link-time optimiser) inlines any function called from a single place unless its
// address is taken, which ATTNLENS_OUT_OF_LINE(f) does (a [[gnu::used]] pointer to f).
#if defined(__GNUC__)
#define ATTNLENS_NOINLINE __attribute__((noinline))
#else
#define ATTNLENS_NOINLINE
#endif
#ifdef ATTNLENS_RELAXED_SIMD
// The relaxed-SIMD build never goes through binaryen (CMakeLists.txt), so noinline suffices, and
// the pointers would only be exported symbols.
#define ATTNLENS_OUT_OF_LINE(...) ((void)0)
#else
#define ATTNLENS_OUT_OF_LINE(...) ((void)::attnlens::kernels::address_taken<&__VA_ARGS__>::value)
#endif

namespace attnlens::kernels {

template <auto F>
struct address_taken {
  [[gnu::used]] static inline const decltype(F) value = F;
};

// Tile shapes per vector width. The QKᵀ tile is MK keys × NQ vectors of queries; the P·V tile is
// MQ queries × NV vectors of value columns. On wasm (4 lanes) V8's x64 register allocator has 15
// vector registers to give, SIMD128 has no FMA (a multiply-add needs a temporary), and V8 may
// issue all of an iteration's loads first: 4 × 2 tiles need 8 accumulators + 2 loaded vectors +
// 4 broadcasts + 1 product = 15. Measured in V8: 4 × 2 runs at ~33 GFLOP/s here, 5 × 2, 6 × 2 and
// 3 × 3 spill and run at 23–27, and unrolling the inner loop by 2 spills too.
template <std::size_t W>
struct tile_shape;

template <>
struct tile_shape<1> {  // scalar build: same structure, one lane
  static constexpr std::size_t MK = 3, NQ = 3, MQ = 3, NV = 3, Bq = 24, Bk = 48;
};
template <>
struct tile_shape<4> {  // SIMD128 (and SSE natively)
  static constexpr std::size_t MK = 4, NQ = 2, MQ = 4, NV = 2, Bq = 40, Bk = 64;
};
template <>
struct tile_shape<8> {  // AVX2 + FMA: 12 accumulators + loads + broadcast within 16 ymm
  static constexpr std::size_t MK = 4, NQ = 3, MQ = 6, NV = 2, Bq = 48, Bk = 64;
};
template <>
struct tile_shape<16> {  // AVX-512: 32 zmm registers
  static constexpr std::size_t MK = 6, NQ = 2, MQ = 8, NV = 2, Bq = 64, Bk = 96;
};

// The shape an arch tag uses: by vector width, unless the tag has a shape of its own.
template <class Arch>
struct tiles_for : tile_shape<vec<Arch>::width> {};
// A second shape an arch may have (`wide`), with the same blocks (Bq, Bk) and the same order of
// every sum, so that either gives bit-identical results; which one runs is a speed choice made at
// run time (use_wide_tiles). Arches without one: none.
template <class Arch>
struct wide_tiles_for {
  static constexpr bool exists = false;
};
#ifdef ATTNLENS_RELAXED_SIMD
// Relaxed SIMD: a fused multiply-add needs no temporary, so the tile's registers are its
// accumulators plus the loaded vectors and broadcasts. Which tile is fastest depends on the
// engine's code generator, measured side by side (in-cache tiles, best of 21 calls, against the
// 12-chain fused ceiling probe in the same process):
//   Node 20 (V8 11.3) issues every load of an iteration before its multiply-adds, so 6 × 2
//   (12 accumulators + 2 loads + 6 broadcasts = 20 of its 15 registers) spills 5 accumulators:
//   Q·Kᵀ 6 × 2 25.7 GFLOP/s against 37.2 for 4 × 2 (probe 38.4), whole calls 0.69–0.77× the speed.
//   Chromium 156 compiles 6 × 2 without that penalty: Q·Kᵀ 44.4 against 38.4 for 4 × 2 (probe
//   40.0), P·V 43.4 against 38.0; whole calls h = 8, n = 512 / 1024 1.10–1.17× faster.
// Both shapes share Bq = 48 (whole 8-query Q·Kᵀ tiles and whole 4- and 6-query P·V tiles) and
// Bk = 96 (whole 4- and 6-key panels).
template <>
struct tiles_for<wasm_relaxed> {
  static constexpr std::size_t MK = 4, NQ = 2, MQ = 4, NV = 2, Bq = 48, Bk = 96;
};
template <>
struct wide_tiles_for<wasm_relaxed> {
  static constexpr bool exists = true;
  static constexpr std::size_t MK = 6, NQ = 2, MQ = 6, NV = 2, Bq = 48, Bk = 96;
};
static_assert(wide_tiles_for<wasm_relaxed>::Bq == tiles_for<wasm_relaxed>::Bq &&
                  wide_tiles_for<wasm_relaxed>::Bk == tiles_for<wasm_relaxed>::Bk &&
                  wide_tiles_for<wasm_relaxed>::NQ == tiles_for<wasm_relaxed>::NQ,
              "the two shapes share the blocks and the Q·Kᵀ column groups: the same bits");
#endif

// The run-time choice between an arch's two shapes (ignored by arches with one): set once, e.g.
// by web/engine/tiles.js after timing both; atomic because worker threads read it.
inline std::atomic<bool> use_wide_tiles{false};

template <class Arch, class Shape = tiles_for<Arch>>
struct blocking : Shape {
  using shape = Shape;
  static constexpr std::size_t W = vec<Arch>::width;
  static constexpr std::size_t query_cols = shape::NQ * W;  // queries per QKᵀ tile
  static constexpr std::size_t value_cols = shape::NV * W;  // value columns per P·V tile
  static_assert(shape::Bq % query_cols == 0 && shape::Bq % shape::MQ == 0 && shape::Bq % W == 0,
                "a query block is whole QKᵀ tiles, whole P·V tiles and whole vectors");
  static_assert(shape::Bk % shape::MK == 0, "a key block is whole QKᵀ tiles");
};

inline std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// K [n, d] → panels of MK keys, [n/MK][d][MK], the last one padded with zero keys. When a
// panel is one vector wide (MK = W), whole W × W blocks are transposed in registers.
template <class Arch, std::size_t MK>
ATTNLENS_NOINLINE void pack_keys(const float* k, std::size_t n, std::size_t d, float* out) {
  using V = vec<Arch>;
  constexpr std::size_t W = V::width;
  for (std::size_t t = 0; t < n; t += MK) {
    const std::size_t rows = std::min(MK, n - t);
    float* panel = out + t * d;
    std::size_t c = 0;
    if constexpr (MK == W && W > 1) {
      if (rows == MK)
        for (; c + W <= d; c += W) {
          typename V::type block[W];
          for (std::size_t r = 0; r < W; ++r) block[r] = V::load(k + (t + r) * d + c);
          V::transpose(block);
          for (std::size_t r = 0; r < W; ++r) V::store(panel + (c + r) * MK, block[r]);
        }
    }
    for (; c < d; ++c) {
      std::size_t r = 0;
      for (; r < rows; ++r) panel[c * MK + r] = k[(t + r) * d + c];
      for (; r < MK; ++r) panel[c * MK + r] = 0.0f;
    }
  }
}

// `count` rows of Q [count, d] → Qᵀ [d][Bq], the columns past count zero.
template <class Arch, std::size_t Bq>
ATTNLENS_NOINLINE void pack_queries_t(const float* q, std::size_t count, std::size_t d,
                                      float* out) {
  transpose_rows<Arch>(q, count, d, d, out, Bq);
  for (std::size_t c = 0; c < d; ++c) std::fill(out + c * Bq + count, out + (c + 1) * Bq, 0.0f);
}

// V [n, d] → [n, dp] with dp ≥ d whole tiles, the extra columns zero.
ATTNLENS_NOINLINE inline void pack_values(const float* v, std::size_t n, std::size_t d,
                                          std::size_t dp, float* out) {
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t c = 0;
    for (; c < d; ++c) out[j * dp + c] = v[j * d + c];
    for (; c < dp; ++c) out[j * dp + c] = 0.0f;
  }
}

// S̃[MK][Bq-stride] (one tile: MK keys × NQ·W queries) = Kpanel · Qᵀ over d. When colmax is
// given, colmax[i] ← max(colmax[i], the tile's column i): the softmax's max pass for free.
template <class Arch, std::size_t MK, std::size_t NQ, std::size_t Bq>
ATTNLENS_NOINLINE void qk_tile(std::size_t d, const float* kp, const float* qt, float* st,
                               float* colmax) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  T acc[MK][NQ];
  for (std::size_t r = 0; r < MK; ++r)
    for (std::size_t v = 0; v < NQ; ++v) acc[r][v] = V::zero();
  for (std::size_t c = 0; c < d; ++c, kp += MK, qt += Bq) {
    T b[NQ];
    for (std::size_t v = 0; v < NQ; ++v) b[v] = V::load(qt + v * W);
    for (std::size_t r = 0; r < MK; ++r) {
      const T a = V::broadcast(kp[r]);
      for (std::size_t v = 0; v < NQ; ++v) acc[r][v] = V::fma(a, b[v], acc[r][v]);
    }
  }
  for (std::size_t r = 0; r < MK; ++r)
    for (std::size_t v = 0; v < NQ; ++v) V::store(st + r * Bq + v * W, acc[r][v]);
  if (colmax)
    for (std::size_t v = 0; v < NQ; ++v) {
      T mx = V::load(colmax + v * W);
      for (std::size_t r = 0; r < MK; ++r) mx = V::max(mx, acc[r][v]);
      V::store(colmax + v * W, mx);
    }
}

// S̃ rows [0, keys) of a block (keys rounded up to whole MK panels; the rows past `keys` are
// computed and ignored) for the first `queries` columns (a multiple of query_cols). With colmax,
// also its running column max over the block's real keys.
template <class Arch, class Shape = tiles_for<Arch>>
ATTNLENS_NOINLINE void qk_block(std::size_t keys, std::size_t queries, std::size_t d,
                                const float* kp, const float* qt, float* st, float* colmax) {
  using B = blocking<Arch, Shape>;
  ATTNLENS_OUT_OF_LINE(qk_tile<Arch, B::MK, B::NQ, B::Bq>);
  std::size_t j = 0;
  for (; j + B::MK <= keys; j += B::MK)
    for (std::size_t i = 0; i < queries; i += B::query_cols)
      qk_tile<Arch, B::MK, B::NQ, B::Bq>(d, kp + j * d, qt + i, st + j * B::Bq + i,
                                         colmax ? colmax + i : nullptr);
  if (j < keys) {  // a panel padded with zero keys: its max is taken below over real rows only
    for (std::size_t i = 0; i < queries; i += B::query_cols)
      qk_tile<Arch, B::MK, B::NQ, B::Bq>(d, kp + j * d, qt + i, st + j * B::Bq + i, nullptr);
    if (colmax) {
      using V = vec<Arch>;
      for (std::size_t i = 0; i < queries; i += V::width) {
        auto mx = V::load(colmax + i);
        for (std::size_t r = j; r < keys; ++r) mx = V::max(mx, V::load(st + r * B::Bq + i));
        V::store(colmax + i, mx);
      }
    }
  }
}

enum class Accumulate { zero, load, rescale };

// O[MQ][value_cols] (row stride ldo) ⟵ {0 | O | α_r·O} + Σ_j P̃[j][r] · V[j][:], j < keys.
template <class Arch, std::size_t MQ, std::size_t NV, std::size_t Bq>
ATTNLENS_NOINLINE void pv_tile(std::size_t keys, const float* pt, const float* v, std::size_t ldv,
                               float* o, std::size_t ldo, const float* alpha, Accumulate mode) {
  using V = vec<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  T acc[MQ][NV];
  for (std::size_t r = 0; r < MQ; ++r) {
    if (mode == Accumulate::zero) {
      for (std::size_t c = 0; c < NV; ++c) acc[r][c] = V::zero();
    } else {
      for (std::size_t c = 0; c < NV; ++c) acc[r][c] = V::load(o + r * ldo + c * W);
      if (mode == Accumulate::rescale) {
        const T a = V::broadcast(alpha[r]);
        for (std::size_t c = 0; c < NV; ++c) acc[r][c] = acc[r][c] * a;
      }
    }
  }
  for (std::size_t j = 0; j < keys; ++j, pt += Bq, v += ldv) {
    T b[NV];
    for (std::size_t c = 0; c < NV; ++c) b[c] = V::load(v + c * W);
    for (std::size_t r = 0; r < MQ; ++r) {
      const T a = V::broadcast(pt[r]);
      for (std::size_t c = 0; c < NV; ++c) acc[r][c] = V::fma(a, b[c], acc[r][c]);
    }
  }
  for (std::size_t r = 0; r < MQ; ++r)
    for (std::size_t c = 0; c < NV; ++c) V::store(o + r * ldo + c * W, acc[r][c]);
}

// O[queries][dp] ⟵ mode(O) + P̃[keys][Bq]ᵀ · V[keys][dp] (dp whole value tiles, V row stride
// dp; queries a multiple of MQ).
template <class Arch, class Shape = tiles_for<Arch>>
ATTNLENS_NOINLINE void pv_block(std::size_t keys, std::size_t queries, std::size_t dp,
                                const float* pt, const float* v, float* o, const float* alpha,
                                Accumulate mode) {
  using B = blocking<Arch, Shape>;
  ATTNLENS_OUT_OF_LINE(pv_tile<Arch, B::MQ, B::NV, B::Bq>);
  for (std::size_t i = 0; i < queries; i += B::MQ)
    for (std::size_t c = 0; c < dp; c += B::value_cols)
      pv_tile<Arch, B::MQ, B::NV, B::Bq>(keys, pt + i, v + c, dp, o + i * dp + c, dp, alpha + i,
                                         mode);
}

// The register tiles one call runs: the arch's own, or its wide ones when the arch has them and
// they were chosen (use_wide_tiles, read once per call). Only the key panels (MK), the P·V row
// groups (MQ) and the tile loops differ; blocks, score layout and every sum's order are the same.
template <class Arch>
class call_tiles {
  using Narrow = tiles_for<Arch>;
  using Wide = wide_tiles_for<Arch>;

  template <class F>
  decltype(auto) with(F&& f) const {
    if constexpr (Wide::exists)
      if (wide_) return f(Wide{});
    return f(Narrow{});
  }

 public:
  call_tiles() : wide_(Wide::exists && use_wide_tiles.load(std::memory_order_relaxed)) {}

  std::size_t mk() const { return with([](auto t) { return decltype(t)::MK; }); }
  std::size_t mq() const { return with([](auto t) { return decltype(t)::MQ; }); }

  void pack_keys(const float* k, std::size_t n, std::size_t d, float* out) const {
    with([&](auto t) {
      constexpr std::size_t MK = decltype(t)::MK;
      ATTNLENS_OUT_OF_LINE(kernels::pack_keys<Arch, MK>);
      kernels::pack_keys<Arch, MK>(k, n, d, out);
    });
  }
  void qk_block(std::size_t keys, std::size_t queries, std::size_t d, const float* kp,
                const float* qt, float* st, float* colmax) const {
    with([&](auto t) {
      using S = decltype(t);
      ATTNLENS_OUT_OF_LINE(kernels::qk_block<Arch, S>);
      kernels::qk_block<Arch, S>(keys, queries, d, kp, qt, st, colmax);
    });
  }
  void pv_block(std::size_t keys, std::size_t queries, std::size_t dp, const float* pt,
                const float* v, float* o, const float* alpha, Accumulate mode) const {
    with([&](auto t) {
      using S = decltype(t);
      ATTNLENS_OUT_OF_LINE(kernels::pv_block<Arch, S>);
      kernels::pv_block<Arch, S>(keys, queries, dp, pt, v, o, alpha, mode);
    });
  }

 private:
  bool wide_;
};

// Masks one block of S̃ in place with −inf: keys whose key_bias is −inf (padding mask, bias is 0
// or −inf per key) and, when causal, keys after the query (key first_key + j vs query
// first_query + i). Only called on blocks that have something to mask.
template <class Arch>
ATTNLENS_NOINLINE void mask_block(float* st, std::size_t keys, const float* key_bias,
                                  bool causal, std::size_t first_key, std::size_t first_query) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  constexpr std::size_t W = V::width;
  for (std::size_t j = 0; j < keys; ++j) {
    float* row = st + j * B::Bq;
    if (key_bias && key_bias[j] != 0.0f) {
      const auto ninf = V::broadcast(neg_inf);
      for (std::size_t i = 0; i < B::Bq; i += W) V::store(row + i, ninf);
      continue;
    }
    if (causal && first_key + j > first_query) {  // queries i < first_key + j − first_query
      const std::size_t hidden = std::min(B::Bq, first_key + j - first_query);
      for (std::size_t i = 0; i < hidden; ++i) row[i] = neg_inf;
    }
  }
}

// The column-wise passes below treat the first `queries` columns (a multiple of the width).
// Column-wise running max over a block: m[i] ← max(m[i], max_j S̃[j][i]).
template <class Arch>
ATTNLENS_NOINLINE void block_max(const float* st, std::size_t keys, std::size_t queries,
                                 float* m) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  constexpr std::size_t W = V::width;
  for (std::size_t i = 0; i < queries; i += W) {
    auto mx = V::load(m + i);
    for (std::size_t j = 0; j < keys; ++j) mx = V::max(mx, V::load(st + j * B::Bq + i));
    V::store(m + i, mx);
  }
}

// scale·log2(e), the factor from score differences to exp2_softmax's argument; capped at the
// largest float so that a huge scale cannot turn 0·scale into NaN.
inline float exp2_factor(float scale) {
  const float f = scale * log2e;
  return f < std::numeric_limits<float>::max() ? f : std::numeric_limits<float>::max();
}

// The shift used in exp(scale·(s − shift)): the running max, or a finite stand-in when nothing is
// visible yet (m = −inf), so that −inf − shift stays −inf and never becomes NaN.
template <class Arch>
inline typename vec<Arch>::type safe_shift(typename vec<Arch>::type m) {
  using V = vec<Arch>;
  return V::max(m, V::broadcast(-std::numeric_limits<float>::max()));
}

// P̃[j][i] ← exp(scale·(S̃[j][i] − shift_i)) in place; sum[i] += Σ_j P̃[j][i].
template <class Arch>
ATTNLENS_NOINLINE void exp_block(float* st, std::size_t keys, std::size_t queries,
                                 const float* m, float scale, float* sum) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  constexpr std::size_t W = V::width;
  const auto vk = V::broadcast(exp2_factor(scale));
  for (std::size_t i = 0; i < queries; i += W) {
    const auto shift = safe_shift<Arch>(V::load(m + i));
    auto acc = V::load(sum + i);
    float* p = st + i;
    for (std::size_t j = 0; j < keys; ++j, p += B::Bq) {
      const auto e = exp2_softmax<Arch>((V::load(p) - shift) * vk);
      V::store(p, e);
      acc = acc + e;
    }
    V::store(sum + i, acc);
  }
}

// One online-softmax step over a block. m_new holds max(m, the block's column max) (qk_block's
// colmax, or block_max after masking). α = exp(scale·(m − m_new)) rescales the output
// accumulated so far, P̃ = exp(scale·(S̃ − m_new)) in place, l ← α·l + Σ P̃, m ← m_new.
template <class Arch>
ATTNLENS_NOINLINE void online_softmax_block(float* st, std::size_t keys, std::size_t queries,
                                            float scale, float* m, const float* m_new, float* l,
                                            float* alpha) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  constexpr std::size_t W = V::width;
  const auto vk = V::broadcast(exp2_factor(scale));
  for (std::size_t i = 0; i < queries; i += W) {
    const auto m_old = V::load(m + i);
    const auto mx = V::load(m_new + i);
    const auto shift = safe_shift<Arch>(mx);
    const auto a = exp2_softmax<Arch>((m_old - shift) * vk);  // 0 on the first visible block
    auto acc = V::zero();
    float* p = st + i;
    for (std::size_t j = 0; j < keys; ++j, p += B::Bq) {
      const auto e = exp2_softmax<Arch>((V::load(p) - shift) * vk);
      V::store(p, e);
      acc = acc + e;
    }
    V::store(m + i, mx);
    V::store(alpha + i, a);
    V::store(l + i, V::fma(V::load(l + i), a, acc));
  }
}

// P̃[j][i] ← P̃[j][i]·f[i]: normalises a block of columns.
template <class Arch>
ATTNLENS_NOINLINE void scale_columns(float* st, std::size_t keys, std::size_t queries,
                                     const float* f) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  constexpr std::size_t W = V::width;
  for (std::size_t i = 0; i < queries; i += W) {
    const auto fv = V::load(f + i);
    float* p = st + i;
    for (std::size_t j = 0; j < keys; ++j, p += B::Bq) V::store(p, V::load(p) * fv);
  }
}

// out[i·ldo + j] = S̃[j][i] for i < queries, j < keys: a block of S̃ written back in row order,
// W × W sub-blocks transposed in registers.
template <class Arch>
ATTNLENS_NOINLINE void store_transposed(const float* st, std::size_t keys, std::size_t queries,
                                        float* out, std::size_t ldo) {
  using V = vec<Arch>;
  using B = blocking<Arch>;
  using T = typename V::type;
  constexpr std::size_t W = V::width;
  std::size_t i = 0;
  for (; i + W <= queries; i += W) {
    std::size_t j = 0;
    for (; j + W <= keys; j += W) {
      T rows[W];
      for (std::size_t r = 0; r < W; ++r) rows[r] = V::load(st + (j + r) * B::Bq + i);
      V::transpose(rows);
      for (std::size_t r = 0; r < W; ++r) V::store(out + (i + r) * ldo + j, rows[r]);
    }
    for (; j < keys; ++j)
      for (std::size_t r = 0; r < W; ++r) out[(i + r) * ldo + j] = st[j * B::Bq + i + r];
  }
  for (; i < queries; ++i)
    for (std::size_t j = 0; j < keys; ++j) out[i * ldo + j] = st[j * B::Bq + i];
}

}  // namespace attnlens::kernels
