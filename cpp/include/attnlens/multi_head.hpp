// Multi-head attention with learned projections, in the row convention of the seed formula:
//   Q = Xq·W_Q + b_Q,  K = Xkv·W_K + b_K,  V = Xkv·W_V + b_V      (W_* are [dModel, dModel])
//   head h uses columns [h·dHead, (h+1)·dHead) of Q, K, V, with dHead = dModel / heads
//   O = concat_h(softmax(scale·Q_h·K_hᵀ)·V_h) · W_O + b_O
// Self-attention when Xkv is empty (Xkv = Xq). W_O may be empty: O is then the concatenated heads.
#pragma once
#include <cstddef>
#include <string>

#include "attnlens/attention.hpp"

namespace attnlens {

struct MultiHeadShape {
  std::size_t n_q = 0;      // rows of Xq
  std::size_t n_k = 0;      // rows of Xkv (ignored for self-attention: = n_q)
  std::size_t d_model = 0;  // width of Xq, Xkv and of every projection
  std::size_t heads = 1;    // must divide d_model
};

struct MultiHeadInputs {
  Span<const float> x_q;   // [nQ, dModel]
  Span<const float> x_kv;  // [nK, dModel]; empty for self-attention
  Span<const float> w_q, w_k, w_v;  // [dModel, dModel] each
  Span<const float> w_o;            // [dModel, dModel] or empty
  Span<const float> b_q, b_k, b_v, b_o;  // [dModel] each, or empty (no bias)
};

// Each written when non-empty (at least one must be): `output` [nQ, dModel] and `weights`
// [heads, nQ, nK]. Without `output` (weights only) W_V, b_V, W_O and b_O are not used, and W_V
// may be empty.
struct MultiHeadOutputs {
  Span<float> output, weights;
};

// Options as for attention(); the default scale is 1/√dHead.
std::string check_multi_head(const MultiHeadShape& shape, const MultiHeadInputs& in,
                             const AttentionOptions& options, const MultiHeadOutputs& out);

void multi_head_attention(const MultiHeadShape& shape, const MultiHeadInputs& in,
                          const AttentionOptions& options, const MultiHeadOutputs& out,
                          Kernel kernel = Kernel::simd);

}  // namespace attnlens
