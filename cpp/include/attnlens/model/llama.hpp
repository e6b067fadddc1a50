// A decoder-only Llama-2-style transformer (llama2.c's model; stories260K/15M/42M/110M, and the
// Llama family in Hugging Face layout): pre-RMSNorm, rotary position embeddings, grouped-query
// attention (query head h reads key/value head h / (heads / kv_heads)), SwiGLU feed-forward, no
// biases, an LM head tied to the token embedding or not. Per layer, for tokens x:
//   a = x + Wo·Attention(RoPE(Wq·rms(x)), RoPE(Wk·rms(x)), Wv·rms(x))   (causal)
//   x' = a + W2·(SiLU(W1·rms(a)) ⊙ W3·rms(a))
// logits = Wcls·rms(x_last). Loaders (llama_loader.hpp) fill the weights; forward passes use the
// shared blocks (blocks.hpp), matmul (ops.hpp) and the core's attention (attention.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlens/kernel.hpp"
#include "attnlens/model/blocks.hpp"
#include "attnlens/span.hpp"

namespace attnlens::model {

struct LlamaConfig {
  std::size_t dim = 0, hidden_dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::size_t vocab_size = 0, seq_len = 0;
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeLayout rope = RopeLayout::interleaved;  // how q/k rows pair up (the layout of the file)
  bool shared_classifier = true;              // LM head = token embedding

  std::size_t kv_dim() const { return kv_heads * head_dim; }
};

// Limits on what a loader accepts (the weights must also fit the memory given to it).
inline constexpr std::size_t kLlamaMaxDim = 1 << 14;
inline constexpr std::size_t kLlamaMaxLayers = 256;
inline constexpr std::size_t kLlamaMaxHeads = 1024;
inline constexpr std::size_t kLlamaMaxVocab = 1 << 20;
inline constexpr std::size_t kLlamaMaxSeqLen = 1 << 17;
inline constexpr std::size_t kLlamaMaxHidden = 1 << 17;

// "" when the sizes make a model (all positive and below the limits, heads·head_dim = dim,
// kv_heads dividing heads, head_dim even, finite eps/theta > 0), else a message.
std::string check_llama_config(const LlamaConfig& c);

// Bytes of the weights, of the KV cache for `tokens` positions, and the peak working memory of
// run() over `tokens` tokens (scratch plus the attention of every layer), for memory checks.
std::size_t llama_weight_bytes(const LlamaConfig& c);
std::size_t llama_cache_bytes(const LlamaConfig& c, std::size_t tokens);
std::size_t llama_run_bytes(const LlamaConfig& c, std::size_t tokens);

// Which weight a loader hands over; matrices come as nn.Linear [out, in] row-major.
enum class LlamaWeight { embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, classifier };

// Tensor bytes as a file stores them (little-endian, any alignment).
enum class DType { f32, f16, bf16 };
std::size_t dtype_size(DType t);
float f16_to_f32(std::uint16_t bits);   // exact (every half is a float), subnormals included
float bf16_to_f32(std::uint16_t bits);  // exact: the upper half of a float
struct RawTensor {
  const std::uint8_t* data = nullptr;
  DType dtype = DType::f32;
  float at(std::size_t i) const;
};

// The KV cache and outputs of one sequence being decoded.
struct LlamaState {
  std::size_t capacity = 0;  // positions the cache holds
  std::size_t position = 0;  // positions filled
  std::vector<float> key, value;  // [layers, kv_heads, capacity, head_dim], after RoPE
  std::vector<float> logits;      // [vocab] after the last token fed
  // attention[l]: layer l's weights of the last token fed, [heads, position] (after the call).
  std::vector<std::vector<float>> attention;
};

class Llama {
 public:
  // Sets the configuration and allocates the weights (zeros); "" or a message (bad sizes, or
  // weights + full-context KV cache above `max_bytes`: refused before allocating).
  std::string allocate(const LlamaConfig& config, std::size_t max_bytes);
  // Copies one weight in, converted to float (`values` in [out, in] layout with the sizes the
  // config implies: weight_size() elements; layer ignored for embedding/rms_final/classifier).
  // Returns "" or a message naming `name` and a non-finite value.
  std::string set(LlamaWeight which, std::size_t layer, const RawTensor& values, const std::string& name);
  // After all set(): the tied classifier when shared. "" or a message (a weight never set).
  std::string finish();

  const LlamaConfig& config() const { return config_; }
  bool loaded() const { return ready_; }
  // Floats a set() call expects.
  std::size_t weight_size(LlamaWeight which) const;

  // The whole sequence `ids` (1 ≤ n ≤ seq_len, ids < vocab: callers check) at positions 0..n−1
  // with causal attention, from an empty state whose capacity ≥ n (reset() it). Fills the
  // cache, the logits after the last token, state.attention (the last token's rows, as step()
  // gives them) and, when `attention` is given, every layer's
  // weights [heads, n, n] (row i = where token i looks).
  void prefill(Span<const std::int32_t> ids, LlamaState& state,
               std::vector<std::vector<float>>* attention, Kernel kernel = Kernel::simd) const;
  // One more token at position state.position (< capacity: callers check) against the cache:
  // fills the logits and state.attention ([heads, position + 1] per layer).
  void step(std::int32_t id, LlamaState& state, Kernel kernel = Kernel::simd) const;
  // An empty state for `capacity` positions (≤ seq_len).
  void reset(LlamaState& state, std::size_t capacity) const;

 private:
  struct Layer {
    float *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3;  // matrices as [in, out]
  };
  float* slot(LlamaWeight which, std::size_t layer);

  LlamaConfig config_;
  std::unique_ptr<float[]> storage_;
  float *embedding_ = nullptr, *rms_final_ = nullptr, *classifier_ = nullptr;  // classifier [dim, vocab]
  std::vector<Layer> layers_;
  std::vector<std::uint8_t> set_;  // which weights were set
  bool ready_ = false;
};

}  // namespace attnlens::model
