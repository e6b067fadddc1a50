// One transformer for every architecture the loaders know (GPT-2, BERT, the Llama family,
// llama2.c checkpoints): a Spec says what each layer does, and one forward pass runs it.
//   pre-norm (GPT-2, Llama):  x += Attn(norm₁(x));  x += FFN(norm₂(x));  then the final norm
//   post-norm (BERT):         x = norm₁(x + Attn(x));  x = norm₂(x + FFN(x))
// Attn: q/k/v projections (biases optional), RoPE on q and k or learned positions added to the
// input, grouped-query heads (query head h reads key/value head h / (heads / kv_heads)), causal
// or bidirectional, an output projection. FFN: up → activation → down, or SwiGLU (SiLU(gate) ⊙
// up → down). Heads: a language-model head (tied to the token embedding or not) or BERT's masked
// LM head (dense → GELU → LayerNorm → embeddingᵀ + bias). Every weight product goes through
// attnlens::linear with the weight at the file's precision (F32, F16, BF16); norms and biases
// are float32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlens/kernel.hpp"
#include "attnlens/linear.hpp"
#include "attnlens/model/blocks.hpp"
#include "attnlens/span.hpp"

namespace attnlens::model {

enum class NormKind : std::uint8_t { layer, rms };
enum class Activation : std::uint8_t { gelu_tanh, gelu_erf, silu };
enum class HeadKind : std::uint8_t { causal_lm, masked_lm, none };

struct Spec {
  std::string architecture;  // e.g. "GPT2LMHeadModel", "llama2.c"
  std::string model_type;    // config.json's, e.g. "gpt2"
  std::size_t dim = 0, ffn = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::size_t vocab = 0;
  std::size_t context = 0;       // positions a sequence may have (≤ positions when learned)
  std::size_t positions = 0;     // rows of the learned position table (0 with RoPE)
  std::size_t type_vocab = 0;    // BERT's token types (0: none)
  NormKind norm = NormKind::rms;
  float eps = 1e-5f;
  bool rope = false;             // else learned absolute positions
  float rope_theta = 10000.0f;
  RopeLayout rope_layout = RopeLayout::half;
  Activation activation = Activation::silu;
  bool gated = true;             // SwiGLU-style gate
  bool causal = true;
  bool pre_norm = true;          // pre-norm has a final norm; post-norm does not
  bool embedding_norm = false;   // BERT: LayerNorm after the embeddings
  bool qkv_bias = false, out_bias = false, mlp_bias = false;
  HeadKind head = HeadKind::causal_lm;
  bool tied_head = true;         // the LM head is the token embedding

  std::size_t q_dim() const { return heads * head_dim; }
  std::size_t kv_dim() const { return kv_heads * head_dim; }
};

// Limits on what a loader accepts (the weights must also fit the memory given to it).
inline constexpr std::size_t kMaxDim = 1 << 14;
inline constexpr std::size_t kMaxLayers = 256;
inline constexpr std::size_t kMaxHeads = 1024;
inline constexpr std::size_t kMaxVocab = 1 << 20;
inline constexpr std::size_t kMaxContext = 1 << 17;
inline constexpr std::size_t kMaxFfn = 1 << 17;

// "" when the sizes make a model (all within limits, kv_heads dividing heads, head_dim even for
// RoPE, finite eps/theta > 0), else a message.
std::string check_spec(const Spec& s);

// What each weight does. Per-layer roles follow the global ones.
enum class Role : std::uint8_t {
  token_embedding, position_embedding, type_embedding, embedding_norm, embedding_norm_bias,
  final_norm, final_norm_bias, lm_head, mlm_dense, mlm_dense_bias, mlm_norm, mlm_norm_bias,
  mlm_bias,
  attn_norm, attn_norm_bias, q, q_bias, k, k_bias, v, v_bias, o, o_bias,
  ffn_norm, ffn_norm_bias, up, up_bias, gate, down, down_bias,
};
inline constexpr std::size_t kRoles = static_cast<std::size_t>(Role::down_bias) + 1;
inline constexpr std::size_t kFirstLayerRole = static_cast<std::size_t>(Role::attn_norm);
inline bool per_layer(Role r) { return static_cast<std::size_t>(r) >= kFirstLayerRole; }
const char* role_name(Role r);

// Whether the spec uses a role, and its shape: [out, in] for matrices, [out, 1] for vectors.
bool role_used(const Spec& s, Role r);
bool role_is_matrix(Role r);
void role_shape(const Spec& s, Role r, std::size_t& out, std::size_t& in);

// Bytes of the weights (matrices at `element_bytes` each, vectors float32), of the KV cache
// for `tokens` positions, and of run()'s working memory over `tokens` tokens (scratch plus the
// attention of every layer), for memory checks.
std::size_t weight_bytes(const Spec& s, std::size_t element_bytes);
std::size_t cache_bytes(const Spec& s, std::size_t tokens);
std::size_t run_bytes(const Spec& s, std::size_t tokens);

// A tensor as the file holds it: `rows` × `cols` elements of `type`, little-endian, at any
// alignment; `transposed` when the file stores the role's [out, in] matrix as [in, out]
// (GPT-2's Conv1D). A fused tensor (GPT-2's c_attn) gives the role the rows
// [row_offset, row_offset + out) of its [out_total, in] view.
struct SourceTensor {
  const std::uint8_t* data = nullptr;
  WeightType type = WeightType::f32;
  std::size_t out_total = 0, in = 0;  // the [out, in] view's sizes
  bool transposed = false;
  std::size_t row_offset = 0;
};

// The KV cache and outputs of one sequence being decoded (causal models).
struct TransformerState {
  std::size_t capacity = 0;  // positions the cache holds
  std::size_t position = 0;  // positions filled
  std::vector<float> key, value;  // [layers, kv_heads, capacity, head_dim], after RoPE
  std::vector<float> logits;      // [vocab] after the last token fed
  // attention[l]: layer l's weights of the last token fed, [heads, position] (after the call).
  std::vector<std::vector<float>> attention;
};

// What a whole-sequence pass returns (each only when its pointer is given).
struct ForwardOutputs {
  std::vector<std::vector<float>>* attention = nullptr;  // [layer][heads, n, n]
  std::vector<float>* hidden = nullptr;                  // [n, dim], after the last norm
  std::vector<float>* logits = nullptr;                  // causal LM: [vocab] of the last
                                                         // position; masked LM: [n, vocab]
};

class Transformer {
 public:
  // Sets the spec ("" or a message). Weights come by set(); nothing is allocated yet.
  std::string configure(const Spec& spec);
  // Copies one weight in (matrices keep their type, vectors become float32), checking that
  // every value is finite. "" or a message naming `name`. With `owned` (a buffer that holds
  // `source.data`, allocated with new[]) a tensor already laid out as the model keeps it is
  // taken over instead of copied, so that a load tensor by tensor needs no second copy.
  std::string set(Role role, std::size_t layer, const SourceTensor& source, const std::string& name,
                  std::unique_ptr<std::uint8_t[]>* owned = nullptr);
  bool has(Role role, std::size_t layer) const;
  // After all set(): "" or a message naming the first weight never set.
  std::string finish();

  const Spec& spec() const { return spec_; }
  bool loaded() const { return ready_; }
  std::size_t weight_bytes() const { return weight_bytes_; }  // held now

  // The whole sequence `ids` (1 ≤ n ≤ context, ids < vocab, type ids < type_vocab: callers
  // check) at positions 0..n−1. `type_ids` may be empty (all 0). With a state (causal models,
  // capacity ≥ n, reset() first): fills its cache, logits after the last token and attention
  // rows of the last token, as step() gives them.
  void forward(Span<const std::int32_t> ids, Span<const std::int32_t> type_ids, TransformerState* state,
               const ForwardOutputs& out, Kernel kernel = Kernel::simd) const;
  // forward() for a causal LM into a state, with every layer's weights when `attention` is given.
  void prefill(Span<const std::int32_t> ids, TransformerState& state,
               std::vector<std::vector<float>>* attention, Kernel kernel = Kernel::simd) const;
  // One more token at state.position (< capacity: callers check) against the cache: fills the
  // logits and state.attention ([heads, position + 1] per layer). Causal models only.
  void step(std::int32_t id, TransformerState& state, Kernel kernel = Kernel::simd) const;
  // An empty state for `capacity` positions (≤ context).
  void reset(TransformerState& state, std::size_t capacity) const;

 private:
  struct Tensor {
    std::unique_ptr<std::uint8_t[]> bytes;
    WeightType type = WeightType::f32;
    std::size_t out = 0, in = 0;
  };
  Tensor& slot(Role role, std::size_t layer);
  const Tensor& slot(Role role, std::size_t layer) const;
  WeightMatrix matrix(Role role, std::size_t layer = 0) const;
  const float* vec(Role role, std::size_t layer = 0) const;  // nullptr when unused
  void norm(const float* x, std::size_t rows, Role weight, std::size_t layer, float* out) const;
  void activate(float* h, const float* up, std::size_t count, Kernel kernel) const;
  void embed(std::int32_t id, std::int32_t type, std::size_t position, float* x) const;
  // The pieces of a layer and of the end, shared by forward() (n rows) and step() (one row).
  struct Scratch;
  void project(std::size_t n, const float* x, std::size_t layer, std::size_t first, Scratch& s, Kernel k) const;
  void attention_output(std::size_t n, float* x, std::size_t layer, Scratch& s, Kernel k) const;
  void feed_forward(std::size_t n, float* x, std::size_t layer, Scratch& s, Kernel k) const;
  void finish_logits(std::size_t n, float* x, const ForwardOutputs& out, std::vector<float>* last, Scratch& s,
                     Kernel k) const;

  Spec spec_;
  std::vector<Tensor> tensors_;  // kRoles global slots, then kRoles per layer
  std::size_t weight_bytes_ = 0;
  bool ready_ = false;
};

}  // namespace attnlens::model
