// Benchmarking aids, not part of the attention API: the multiply-add throughput this machine
// sustains with 4-lane float vectors (WebAssembly SIMD128 in the wasm builds, SSE/FMA natively),
// as a ceiling to report the kernels' GFLOP/s against, and the scratch memory of the last call.
// One call is one sample: a steady-state ceiling needs warm-up and many calls (web/engine/
// ceiling.js does that for JavaScript users).
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnlens {

// Which instruction the probe's chains use.
enum class ProbeOp {
  mul_add,  // a multiply then an add (what SIMD128 kernels do)
  fma,      // a fused multiply-add (relaxed SIMD's f32x4.relaxed_madd; FMA3 natively)
};

// True when this binary has a fused multiply-add f32x4 instruction for ProbeOp::fma (the relaxed
// wasm build; natively an FMA-capable -march).
bool probe_has_fma();

// Runs `iterations` steps of `chains` (8, 12, 16 or 24; else std::invalid_argument) independent
// 4-lane chains x ← x·a + b, i.e. chains·4·2 flops per step, and returns a checksum that depends
// on every chain so that nothing is optimised away. How many chains a core needs to be
// throughput-bound depends on its latencies and pipes (and on the compiler's registers), so a
// ceiling takes the best over several counts. ProbeOp::fma without probe_has_fma() runs the
// mul_add chains.
float ceiling_probe(std::uint32_t iterations, ProbeOp op = ProbeOp::mul_add, int chains = 12);

// Flops done by ceiling_probe(iterations, op, chains) for either op.
inline double ceiling_probe_flops(std::uint32_t iterations, int chains = 12) {
  return 8.0 * chains * iterations;
}

// The attention kernels' register tiles. The relaxed-SIMD wasm build has two shapes (4 × 2 and
// 6 × 2, cpp/src/kernels/blocked.hpp) with the same blocks and the same order of every sum, so
// either gives bit-identical results; which one an engine compiles to faster code differs (V8 11.3
// spills the wide one, V8 15 does not), so web/engine/tiles.js times attention calls with each and
// picks. has_wide_tiles() is false (and set_wide_tiles() does nothing) in every other build.
bool has_wide_tiles();
void set_wide_tiles(bool wide);
bool wide_tiles();

// Bytes of engine scratch the last attention() or multi_head_attention() call on this thread
// asked for (its working memory beyond the caller's arguments and results). The scratch itself
// is kept and reused by later calls.
std::size_t last_call_scratch_bytes();

}  // namespace attnlens
