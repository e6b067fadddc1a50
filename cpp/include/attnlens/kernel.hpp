#pragma once

namespace attnlens {

// Which instantiation of the kernels runs. `simd` is the xsimd build for the best architecture
// this binary was compiled for (AVX2/FMA natively with -march=native, SIMD128 in wasm); when the
// binary has no SIMD it falls back to `scalar`, the same kernels with one lane.
enum class Kernel { simd, scalar };

// True when `Kernel::simd` really is vectorised in this binary.
bool simd_available();
// The xsimd architecture behind `Kernel::simd` ("fma3+avx2", "wasm", ... or "scalar").
const char* simd_arch_name();

}  // namespace attnlens
