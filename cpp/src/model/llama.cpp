#include "attnlens/model/llama.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "attnlens/attention.hpp"
#include "attnlens/ops.hpp"

namespace attnlens::model {

namespace {

constexpr std::size_t kWeightKinds = 12;
constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

// a·b, or kSizeMax when it overflows (sizes are checked against limits before use).
std::size_t mul(std::size_t a, std::size_t b) { return a && b > kSizeMax / a ? kSizeMax : a * b; }
std::size_t add(std::size_t a, std::size_t b) { return a > kSizeMax - b ? kSizeMax : a + b; }

std::size_t per_layer_floats(const LlamaConfig& c) {
  const std::size_t d = c.dim, kv = c.kv_dim();
  return add(add(mul(2, d), mul(2, mul(d, d))), add(mul(2, mul(d, kv)), mul(3, mul(d, c.hidden_dim))));
}

std::size_t weight_floats(const LlamaConfig& c) {
  // embedding rows + classifier [dim, vocab] (a transposed copy when tied) + final norm.
  return add(add(mul(2, mul(c.vocab_size, c.dim)), c.dim), mul(c.layers, per_layer_floats(c)));
}

}  // namespace

std::string check_llama_config(const LlamaConfig& c) {
  auto bad = [](const char* name, std::size_t v, std::size_t max) {
    return "the model's " + std::string(name) + " is " + std::to_string(v) + "; it must be 1 to " +
           std::to_string(max);
  };
  if (c.dim < 1 || c.dim > kLlamaMaxDim) return bad("dim", c.dim, kLlamaMaxDim);
  if (c.hidden_dim < 1 || c.hidden_dim > kLlamaMaxHidden) return bad("hidden_dim", c.hidden_dim, kLlamaMaxHidden);
  if (c.layers < 1 || c.layers > kLlamaMaxLayers) return bad("n_layers", c.layers, kLlamaMaxLayers);
  if (c.heads < 1 || c.heads > kLlamaMaxHeads) return bad("n_heads", c.heads, kLlamaMaxHeads);
  if (c.kv_heads < 1 || c.kv_heads > c.heads) return bad("n_kv_heads", c.kv_heads, c.heads);
  if (c.vocab_size < 1 || c.vocab_size > kLlamaMaxVocab) return bad("vocab_size", c.vocab_size, kLlamaMaxVocab);
  if (c.seq_len < 1 || c.seq_len > kLlamaMaxSeqLen) return bad("seq_len", c.seq_len, kLlamaMaxSeqLen);
  if (c.heads % c.kv_heads != 0)
    return "the model's n_kv_heads (" + std::to_string(c.kv_heads) + ") must divide n_heads (" +
           std::to_string(c.heads) + ")";
  if (c.head_dim * c.heads != c.dim || c.head_dim % 2 != 0)
    return "the model's head size (" + std::to_string(c.head_dim) + ") must be even and n_heads (" +
           std::to_string(c.heads) + ") times it must be dim (" + std::to_string(c.dim) + ")";
  if (!(c.norm_eps > 0) || !std::isfinite(c.norm_eps)) return "the model's RMSNorm epsilon must be finite and > 0";
  if (!(c.rope_theta > 0) || !std::isfinite(c.rope_theta)) return "the model's RoPE theta must be finite and > 0";
  return {};
}

std::size_t llama_weight_bytes(const LlamaConfig& c) { return mul(weight_floats(c), sizeof(float)); }

std::size_t llama_cache_bytes(const LlamaConfig& c, std::size_t tokens) {
  return mul(mul(mul(2, c.layers), mul(tokens, c.kv_dim())), sizeof(float));
}

std::size_t llama_run_bytes(const LlamaConfig& c, std::size_t n) {
  const std::size_t d = c.dim;
  // x, xb, q, o, cat [n, d]; k, v [n, kv]; Q, K, V, O head-major [heads, n, hd]; two FFN
  // buffers [n, hidden]; the attention of every layer [heads, n, n]; logits.
  std::size_t floats = add(mul(5, mul(n, d)), mul(2, mul(n, c.kv_dim())));
  floats = add(floats, mul(4, mul(n, d)));
  floats = add(floats, mul(2, mul(n, c.hidden_dim)));
  floats = add(floats, mul(c.layers, mul(c.heads, mul(n, n))));
  floats = add(floats, c.vocab_size);
  return add(mul(floats, sizeof(float)), llama_cache_bytes(c, n));
}

std::string Llama::allocate(const LlamaConfig& config, std::size_t max_bytes) {
  ready_ = false;
  storage_.reset();
  layers_.clear();
  std::string error = check_llama_config(config);
  if (!error.empty()) return error;
  const std::size_t weights = llama_weight_bytes(config);
  const std::size_t cache = llama_cache_bytes(config, config.seq_len);
  if (add(weights, cache) > max_bytes)
    return "the model needs " + std::to_string(weights >> 20) + " MiB for its weights and " +
           std::to_string(cache >> 20) + " MiB for a full-context KV cache, more than the " +
           std::to_string(max_bytes >> 20) + " MiB of memory available";
  const std::size_t floats = weight_floats(config);
  storage_.reset(new (std::nothrow) float[floats]);
  if (!storage_) return "could not allocate " + std::to_string(weights >> 20) + " MiB for the model's weights";
  std::memset(storage_.get(), 0, floats * sizeof(float));
  config_ = config;
  const std::size_t d = config.dim, kv = config.kv_dim(), h = config.hidden_dim;
  float* p = storage_.get();
  auto take = [&](std::size_t count) {
    float* at = p;
    p += count;
    return at;
  };
  embedding_ = take(config.vocab_size * d);
  classifier_ = take(config.vocab_size * d);
  rms_final_ = take(d);
  layers_.resize(config.layers);
  for (Layer& L : layers_) {
    L.rms_att = take(d);
    L.wq = take(d * d);
    L.wk = take(d * kv);
    L.wv = take(d * kv);
    L.wo = take(d * d);
    L.rms_ffn = take(d);
    L.w1 = take(d * h);
    L.w2 = take(h * d);
    L.w3 = take(d * h);
  }
  set_.assign(kWeightKinds * config.layers, 0);
  return {};
}

std::size_t Llama::weight_size(LlamaWeight which) const {
  const std::size_t d = config_.dim, kv = config_.kv_dim(), h = config_.hidden_dim;
  switch (which) {
    case LlamaWeight::embedding:
    case LlamaWeight::classifier: return config_.vocab_size * d;
    case LlamaWeight::rms_att:
    case LlamaWeight::rms_ffn:
    case LlamaWeight::rms_final: return d;
    case LlamaWeight::wq:
    case LlamaWeight::wo: return d * d;
    case LlamaWeight::wk:
    case LlamaWeight::wv: return kv * d;
    case LlamaWeight::w1:
    case LlamaWeight::w2:
    case LlamaWeight::w3: return h * d;
  }
  return 0;
}

float* Llama::slot(LlamaWeight which, std::size_t layer) {
  Layer& L = layers_[layer];
  switch (which) {
    case LlamaWeight::embedding: return embedding_;
    case LlamaWeight::classifier: return classifier_;
    case LlamaWeight::rms_final: return rms_final_;
    case LlamaWeight::rms_att: return L.rms_att;
    case LlamaWeight::rms_ffn: return L.rms_ffn;
    case LlamaWeight::wq: return L.wq;
    case LlamaWeight::wk: return L.wk;
    case LlamaWeight::wv: return L.wv;
    case LlamaWeight::wo: return L.wo;
    case LlamaWeight::w1: return L.w1;
    case LlamaWeight::w2: return L.w2;
    case LlamaWeight::w3: return L.w3;
  }
  return nullptr;
}

std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^−24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN
  else bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float RawTensor::at(std::size_t i) const {
  if (dtype == DType::f32) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  const std::uint16_t h = static_cast<std::uint16_t>(data[2 * i] | (data[2 * i + 1] << 8));
  return dtype == DType::f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

std::string Llama::set(LlamaWeight which, std::size_t layer, const RawTensor& values, const std::string& name) {
  if (!storage_) return "the model is not allocated";
  const bool global = which == LlamaWeight::embedding || which == LlamaWeight::classifier ||
                      which == LlamaWeight::rms_final;
  if (global) layer = 0;
  if (layer >= config_.layers)
    return "weight '" + name + "' names layer " + std::to_string(layer) + ", beyond the model's layers";
  const std::size_t count = weight_size(which);
  for (std::size_t i = 0; i < count; ++i)
    if (!std::isfinite(values.at(i)))
      return "weight '" + name + "' holds a non-finite value at index " + std::to_string(i);
  const std::size_t d = config_.dim, kv = config_.kv_dim(), h = config_.hidden_dim;
  // Matrices [out, in] are stored as [in, out], so that x·W is a plain row-major product.
  auto transposed = [&](float* out, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = values.at(r * cols + c);
  };
  float* out = slot(which, layer);
  switch (which) {
    case LlamaWeight::embedding:
    case LlamaWeight::rms_att:
    case LlamaWeight::rms_ffn:
    case LlamaWeight::rms_final:
      for (std::size_t i = 0; i < count; ++i) out[i] = values.at(i);
      break;
    case LlamaWeight::classifier: transposed(out, config_.vocab_size, d); break;
    case LlamaWeight::wq:
    case LlamaWeight::wo: transposed(out, d, d); break;
    case LlamaWeight::wk:
    case LlamaWeight::wv: transposed(out, kv, d); break;
    case LlamaWeight::w1:
    case LlamaWeight::w3: transposed(out, h, d); break;
    case LlamaWeight::w2: transposed(out, d, h); break;
  }
  set_[static_cast<std::size_t>(which) * config_.layers + layer] = 1;
  if (which == LlamaWeight::embedding && config_.shared_classifier) {
    transposed(classifier_, config_.vocab_size, d);
    set_[static_cast<std::size_t>(LlamaWeight::classifier) * config_.layers] = 1;
  }
  return {};
}

std::string Llama::finish() {
  if (!storage_) return "the model is not allocated";
  static const char* names[kWeightKinds] = {"token embedding", "attention RMSNorm", "wq", "wk", "wv",
                                            "wo", "feed-forward RMSNorm", "w1", "w2", "w3",
                                            "final RMSNorm", "classifier"};
  for (std::size_t w = 0; w < kWeightKinds; ++w) {
    const bool global = w == 0 || w == 10 || w == 11;
    for (std::size_t l = 0; l < (global ? 1 : config_.layers); ++l)
      if (!set_[w * config_.layers + l])
        return "the model file lacks the " + std::string(names[w]) +
               (global ? std::string() : " of layer " + std::to_string(l));
  }
  ready_ = true;
  return {};
}

void Llama::reset(LlamaState& state, std::size_t capacity) const {
  state.capacity = capacity;
  state.position = 0;
  const std::size_t floats = config_.layers * config_.kv_heads * capacity * config_.head_dim;
  state.key.assign(floats, 0.0f);
  state.value.assign(floats, 0.0f);
  state.logits.assign(config_.vocab_size, 0.0f);
  state.attention.assign(config_.layers, {});
}

namespace {

struct Scratch {
  std::vector<float> x, xb, q, k, v, o, cat, qh, kh, vh, oh, h1, h3;
};

float* sized(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

void Llama::prefill(Span<const std::int32_t> ids, LlamaState& state,
                    std::vector<std::vector<float>>* attention, Kernel kernel) const {
  const LlamaConfig& c = config_;
  const std::size_t n = ids.size, d = c.dim, kvd = c.kv_dim(), hd = c.head_dim;
  const std::size_t group = c.heads / c.kv_heads;
  Scratch s;
  float* x = sized(s.x, n * d);
  float* xb = sized(s.xb, n * d);
  float* q = sized(s.q, n * d);
  float* k = sized(s.k, n * kvd);
  float* v = sized(s.v, n * kvd);
  float* cat = sized(s.cat, n * d);
  float* qh = sized(s.qh, n * d);
  float* kh = sized(s.kh, n * d);
  float* vh = sized(s.vh, n * d);
  float* oh = sized(s.oh, n * d);
  float* h1 = sized(s.h1, n * c.hidden_dim);
  float* h3 = sized(s.h3, n * c.hidden_dim);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(x + i * d, embedding_ + static_cast<std::size_t>(ids[i]) * d, d * sizeof(float));
  if (attention) attention->assign(c.layers, {});
  state.attention.assign(c.layers, {});

  for (std::size_t l = 0; l < c.layers; ++l) {
    const Layer& L = layers_[l];
    rms_norm(x, n, d, L.rms_att, c.norm_eps, xb);
    matmul(n, d, d, xb, L.wq, q, nullptr, kernel);
    matmul(n, kvd, d, xb, L.wk, k, nullptr, kernel);
    matmul(n, kvd, d, xb, L.wv, v, nullptr, kernel);
    for (std::size_t i = 0; i < n; ++i) {
      rope(q + i * d, c.heads, hd, i, c.rope_theta, c.rope);
      rope(k + i * kvd, c.kv_heads, hd, i, c.rope_theta, c.rope);
    }
    // The cache, [kv_heads, capacity, hd] per layer.
    float* key = state.key.data() + l * c.kv_heads * state.capacity * hd;
    float* value = state.value.data() + l * c.kv_heads * state.capacity * hd;
    for (std::size_t g = 0; g < c.kv_heads; ++g)
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(key + (g * state.capacity + i) * hd, k + i * kvd + g * hd, hd * sizeof(float));
        std::memcpy(value + (g * state.capacity + i) * hd, v + i * kvd + g * hd, hd * sizeof(float));
      }
    // Head-major Q, and K/V repeated for every query head of their group.
    split_heads(q, n, d, 0, c.heads, hd, qh);
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::size_t g = h / group;
      std::memcpy(kh + h * n * hd, key + g * state.capacity * hd, n * hd * sizeof(float));
      std::memcpy(vh + h * n * hd, value + g * state.capacity * hd, n * hd * sizeof(float));
    }
    // The last token's attention rows, as step() reports them (computed the same way).
    {
      auto& rows = state.attention[l];
      rows.resize(c.heads * n);
      std::vector<float> scratch_out(group * hd);
      const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
      for (std::size_t g = 0; g < c.kv_heads; ++g)
        attend(q + (n - 1) * d + g * group * hd, group, key + g * state.capacity * hd,
               value + g * state.capacity * hd, n, hd, scale, rows.data() + g * group * n, scratch_out.data());
    }
    Span<float> weights;
    if (attention) {
      (*attention)[l].resize(c.heads * n * n);
      weights = (*attention)[l];
    }
    AttentionOptions options;
    options.causal = true;
    attnlens::attention({c.heads, n, n, hd, hd}, {{qh, n * d}, {kh, n * d}, {vh, n * d}}, options,
                        {{oh, n * d}, weights, {}}, kernel);
    merge_heads(oh, n, c.heads, hd, cat);
    matmul(n, d, d, cat, L.wo, xb, nullptr, kernel);
    add_in_place(x, xb, n * d);

    rms_norm(x, n, d, L.rms_ffn, c.norm_eps, xb);
    matmul(n, c.hidden_dim, d, xb, L.w1, h1, nullptr, kernel);
    matmul(n, c.hidden_dim, d, xb, L.w3, h3, nullptr, kernel);
    swiglu(h1, h3, n * c.hidden_dim);
    matmul(n, d, c.hidden_dim, h1, L.w2, xb, nullptr, kernel);
    add_in_place(x, xb, n * d);
  }
  state.position = n;
  rms_norm(x + (n - 1) * d, 1, d, rms_final_, c.norm_eps, xb);
  state.logits.resize(c.vocab_size);
  matmul(1, c.vocab_size, d, xb, classifier_, state.logits.data(), nullptr, kernel);
}

void Llama::step(std::int32_t id, LlamaState& state, Kernel kernel) const {
  const LlamaConfig& c = config_;
  const std::size_t d = c.dim, kvd = c.kv_dim(), hd = c.head_dim, pos = state.position;
  const std::size_t group = c.heads / c.kv_heads, keys = pos + 1;
  Scratch s;
  float* x = sized(s.x, d);
  float* xb = sized(s.xb, d);
  float* q = sized(s.q, d);
  float* k = sized(s.k, kvd);
  float* v = sized(s.v, kvd);
  float* o = sized(s.o, d);
  float* h1 = sized(s.h1, c.hidden_dim);
  float* h3 = sized(s.h3, c.hidden_dim);
  std::memcpy(x, embedding_ + static_cast<std::size_t>(id) * d, d * sizeof(float));
  state.attention.resize(c.layers);

  for (std::size_t l = 0; l < c.layers; ++l) {
    const Layer& L = layers_[l];
    rms_norm(x, 1, d, L.rms_att, c.norm_eps, xb);
    matmul(1, d, d, xb, L.wq, q, nullptr, kernel);
    matmul(1, kvd, d, xb, L.wk, k, nullptr, kernel);
    matmul(1, kvd, d, xb, L.wv, v, nullptr, kernel);
    rope(q, c.heads, hd, pos, c.rope_theta, c.rope);
    rope(k, c.kv_heads, hd, pos, c.rope_theta, c.rope);
    float* key = state.key.data() + l * c.kv_heads * state.capacity * hd;
    float* value = state.value.data() + l * c.kv_heads * state.capacity * hd;
    for (std::size_t g = 0; g < c.kv_heads; ++g) {
      std::memcpy(key + (g * state.capacity + pos) * hd, k + g * hd, hd * sizeof(float));
      std::memcpy(value + (g * state.capacity + pos) * hd, v + g * hd, hd * sizeof(float));
    }
    // The `group` query heads of KV head g are adjacent in q: their rows against the cached
    // keys 0..pos, written straight into this layer's attention rows [heads, keys].
    auto& rows = state.attention[l];
    rows.resize(c.heads * keys);
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    for (std::size_t g = 0; g < c.kv_heads; ++g)
      attend(q + g * group * hd, group, key + g * state.capacity * hd, value + g * state.capacity * hd, keys, hd,
             scale, rows.data() + g * group * keys, o + g * group * hd);
    matmul(1, d, d, o, L.wo, xb, nullptr, kernel);
    add_in_place(x, xb, d);

    rms_norm(x, 1, d, L.rms_ffn, c.norm_eps, xb);
    matmul(1, c.hidden_dim, d, xb, L.w1, h1, nullptr, kernel);
    matmul(1, c.hidden_dim, d, xb, L.w3, h3, nullptr, kernel);
    swiglu(h1, h3, c.hidden_dim);
    matmul(1, d, c.hidden_dim, h1, L.w2, xb, nullptr, kernel);
    add_in_place(x, xb, d);
  }
  state.position = keys;
  rms_norm(x, 1, d, rms_final_, c.norm_eps, xb);
  state.logits.resize(c.vocab_size);
  matmul(1, c.vocab_size, d, xb, classifier_, state.logits.data(), nullptr, kernel);
}

}  // namespace attnlens::model
