// Scaled dot-product attention over h heads:
//   A = softmax(mask(scale · Q·Kᵀ)),  O = A·V
// with Q [h, nQ, dK], K [h, nK, dK], V [h, nK, dV], all row-major float32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnlens/error.hpp"
#include "attnlens/kernel.hpp"
#include "attnlens/span.hpp"

namespace attnlens {

struct AttentionShape {
  std::size_t heads = 1;
  std::size_t n_q = 0;  // queries
  std::size_t n_k = 0;  // keys (= values)
  std::size_t d_k = 0;  // query/key width
  std::size_t d_v = 0;  // value width
};

struct AttentionOptions {
  // Multiplies QKᵀ before the softmax. Default 1/√dK. Must be finite and > 0.
  std::optional<float> scale;
  // Query i sees key j only when j ≤ i (PyTorch's is_causal: top-left aligned when nQ ≠ nK).
  bool causal = false;
  // Optional per-key mask of nK bytes: 1 keep, 0 drop (padding). Shared by every head and query.
  Span<const std::uint8_t> key_mask;
};

struct AttentionInputs {
  Span<const float> q, k, v;
};

// Caller-owned result buffers, each written only when non-empty (at least one must be):
// `output` [h,nQ,dV], `weights` [h,nQ,nK] and the raw, unscaled, unmasked `scores` QKᵀ [h,nQ,nK].
// Without `output` the A·V product is skipped and `v` is not read (it may then be empty).
// Masked weights are exactly 0. A query whose keys are all masked gets all-zero weights and an
// all-zero output row (never NaN).
struct AttentionOutputs {
  Span<float> output, weights, scores;
};

// "" when the call is valid, else a message naming the offending argument.
std::string check_attention(const AttentionShape& shape, const AttentionInputs& in,
                            const AttentionOptions& options, const AttentionOutputs& out);

// Throws attnlens::Error when check_attention() reports a problem.
void attention(const AttentionShape& shape, const AttentionInputs& in,
               const AttentionOptions& options, const AttentionOutputs& out,
               Kernel kernel = Kernel::simd);

// Owning convenience form.
struct AttentionResult {
  std::vector<float> output, weights, scores;
};
AttentionResult attention(const AttentionShape& shape, const AttentionInputs& in,
                          const AttentionOptions& options = {}, bool return_scores = false,
                          Kernel kernel = Kernel::simd);

// The scale used when none is given.
float default_scale(std::size_t d_k);

}  // namespace attnlens
