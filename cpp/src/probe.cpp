#include "attnlens/probe.hpp"

#include <stdexcept>

#include "kernels/blocked.hpp"

#include "workspace.hpp"

#if defined(__wasm_relaxed_simd__)
#include <wasm_simd128.h>
#define ATTNLENS_PROBE_FMA 1
#elif defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define ATTNLENS_PROBE_FMA 1
#endif

namespace attnlens {

namespace {
// GCC/Clang vector extension: 4 floats, lowered to f32x4 in wasm (SSE natively). Plain `*` and
// `+` in separate statements: never contracted into an FMA.
typedef float f32x4 __attribute__((vector_size(16)));

#ifdef ATTNLENS_PROBE_FMA
inline f32x4 fused(f32x4 x, f32x4 a, f32x4 b) {
#if defined(__wasm_relaxed_simd__)
  return reinterpret_cast<f32x4>(wasm_f32x4_relaxed_madd(reinterpret_cast<v128_t>(x),
                                                         reinterpret_cast<v128_t>(a),
                                                         reinterpret_cast<v128_t>(b)));
#else
  return reinterpret_cast<f32x4>(_mm_fmadd_ps(reinterpret_cast<__m128>(x),
                                              reinterpret_cast<__m128>(a),
                                              reinterpret_cast<__m128>(b)));
#endif
}
#endif

template <bool Fused, int Chains>
float run_chains(std::uint32_t iterations) {
  // a < 1 and b small keep every chain bounded (x → b / (1 − a)), so no inf/denormal slowdowns.
  volatile float a_in = 0.999f, b_in = 1e-3f;
  const f32x4 a = {a_in, a_in, a_in, a_in}, b = {b_in, b_in, b_in, b_in};
  f32x4 x[Chains];
  for (int c = 0; c < Chains; ++c) {
    const float s = 0.01f * static_cast<float>(c);
    x[c] = f32x4{s, s + 1, s + 2, s + 3};
  }
  for (std::uint32_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < Chains; ++c) {
#ifdef ATTNLENS_PROBE_FMA
      if constexpr (Fused) {
        x[c] = fused(x[c], a, b);
        continue;
      }
#endif
      const f32x4 t = x[c] * a;
      x[c] = t + b;
    }
  }
  f32x4 sum = x[0];
  for (int c = 1; c < Chains; ++c) sum = sum + x[c];
  return sum[0] + sum[1] + sum[2] + sum[3];
}

template <bool Fused>
float run_chains(std::uint32_t iterations, int chains) {
  switch (chains) {
    case 8: return run_chains<Fused, 8>(iterations);
    case 12: return run_chains<Fused, 12>(iterations);
    case 16: return run_chains<Fused, 16>(iterations);
    case 24: return run_chains<Fused, 24>(iterations);
    default: throw std::invalid_argument("ceiling_probe: chains must be 8, 12, 16 or 24");
  }
}
}  // namespace

bool probe_has_fma() {
#ifdef ATTNLENS_PROBE_FMA
  return true;
#else
  return false;
#endif
}

float ceiling_probe(std::uint32_t iterations, ProbeOp op, int chains) {
  return op == ProbeOp::fma ? run_chains<true>(iterations, chains) : run_chains<false>(iterations, chains);
}

namespace {
#ifdef ATTNLENS_HAVE_SIMD
using TileArch = kernels::simd_arch;
#else
using TileArch = kernels::scalar_arch;
#endif
using WideTiles = kernels::wide_tiles_for<TileArch>;
}  // namespace

bool has_wide_tiles() { return WideTiles::exists; }

void set_wide_tiles(bool wide) { kernels::use_wide_tiles.store(wide && WideTiles::exists); }

bool wide_tiles() { return kernels::use_wide_tiles.load(); }

std::size_t last_call_scratch_bytes() { return Workspace::local().call_bytes(); }

}  // namespace attnlens
