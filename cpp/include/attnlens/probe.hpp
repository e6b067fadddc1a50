// Benchmarking aids, not part of the attention API: the multiply-add throughput this machine
// sustains with 4-lane float vectors (WebAssembly SIMD128 in the wasm build), as a ceiling to
// report the kernels' GFLOP/s against, and the scratch memory of the last call.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnlens {

// Runs `iterations` steps of 12 independent 4-lane chains x ← x·a + b (a multiply then an add:
// SIMD128 has no fused multiply-add), i.e. 12·4·2 = 96 flops per step, and returns a checksum
// that depends on every chain so that nothing is optimised away.
float ceiling_probe(std::uint32_t iterations);

// Flops done by ceiling_probe(iterations).
inline double ceiling_probe_flops(std::uint32_t iterations) { return 96.0 * iterations; }

// Bytes of engine scratch the last attention() or multi_head_attention() call on this thread
// asked for (its working memory beyond the caller's arguments and results). The scratch itself
// is kept and reused by later calls.
std::size_t last_call_scratch_bytes();

}  // namespace attnlens
