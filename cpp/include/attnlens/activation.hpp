// Element-wise activations of a model's feed-forward layers, in place, vectorised and split among
// the pool's threads (attnlens::set_threads). Every element is computed by the same instructions
// whatever the thread count (the scalar tail is always the array's last count mod W elements),
// so results are bit-identical to one thread.
#pragma once
#include <cstddef>

#include "attnlens/kernel.hpp"

namespace attnlens {

// GELU, tanh approximation (GPT-2's gelu_new): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715x³))),
// computed as x / (1 + exp(−2u)), the same function.
void gelu_tanh(float* x, std::size_t count, Kernel kernel = Kernel::simd);
// GELU with erf (BERT's gelu): 0.5·x·(1 + erf(x/√2)), computed as 0.5·x·erfc(−x/√2).
void gelu_erf(float* x, std::size_t count, Kernel kernel = Kernel::simd);
// SiLU: x·σ(x) = x / (1 + exp(−x)).
void silu(float* x, std::size_t count, Kernel kernel = Kernel::simd);
// SwiGLU: gate[i] = SiLU(gate[i])·up[i].
void swiglu(float* gate, const float* up, std::size_t count, Kernel kernel = Kernel::simd);

}  // namespace attnlens
