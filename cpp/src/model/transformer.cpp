#include "attnlens/model/transformer.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "attnlens/activation.hpp"
#include "attnlens/attention.hpp"

namespace attnlens::model {

namespace {

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

// a·b and a + b, saturating (sizes are checked against limits before use).
std::size_t mul(std::size_t a, std::size_t b) { return a && b > kSizeMax / a ? kSizeMax : a * b; }
std::size_t add(std::size_t a, std::size_t b) { return a > kSizeMax - b ? kSizeMax : a + b; }

bool finite_bits(const std::uint8_t* p, WeightType t) {
  if (t == WeightType::f32) {
    std::uint32_t x;
    std::memcpy(&x, p, 4);
    return (x & 0x7F800000u) != 0x7F800000u;
  }
  const std::uint16_t h = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  return t == WeightType::f16 ? (h & 0x7C00u) != 0x7C00u : (h & 0x7F80u) != 0x7F80u;
}

float decode(const std::uint8_t* p, WeightType t) {
  if (t == WeightType::f32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  const std::uint16_t h = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  return t == WeightType::f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

// Whether every value of the `out` × `in` view of src is finite, scanning the stored bytes in
// memory order (a transposed view is `in` source rows, each holding a run of `out` values).
bool all_finite(const SourceTensor& src, std::size_t out, std::size_t in) {
  const std::size_t size = weight_type_size(src.type);
  auto run_finite = [&](const std::uint8_t* p, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
      if (!finite_bits(p + i * size, src.type)) return false;
    return true;
  };
  if (!src.transposed) return run_finite(src.data + src.row_offset * in * size, out * in);
  for (std::size_t c = 0; c < in; ++c)
    if (!run_finite(src.data + (c * src.out_total + src.row_offset) * size, out)) return false;
  return true;
}

// to[r·in + c] = from[c·stride + r] for elements of T, in 32 × 32 blocks: read column by column,
// a Conv1D weight of GPT-2 small (768 × 3072) missed the cache on every element (~0.85 s of a
// 1.2 s load of the whole model).
template <class T>
void transpose_blocked(const std::uint8_t* from, std::size_t stride, std::size_t out, std::size_t in,
                       std::uint8_t* to) {
  constexpr std::size_t B = 32;
  for (std::size_t r0 = 0; r0 < out; r0 += B)
    for (std::size_t c0 = 0; c0 < in; c0 += B)
      for (std::size_t r = r0; r < std::min(out, r0 + B); ++r)
        for (std::size_t c = c0; c < std::min(in, c0 + B); ++c)
          std::memcpy(to + (r * in + c) * sizeof(T), from + (c * stride + r) * sizeof(T), sizeof(T));
}

}  // namespace

const char* role_name(Role r) {
  static const char* names[kRoles] = {
      "token embedding", "position embedding", "token type embedding", "embedding norm",
      "embedding norm bias", "final norm", "final norm bias", "LM head", "MLM transform",
      "MLM transform bias", "MLM norm", "MLM norm bias", "MLM output bias", "attention norm",
      "attention norm bias", "query projection", "query bias", "key projection", "key bias",
      "value projection", "value bias", "attention output", "attention output bias",
      "feed-forward norm", "feed-forward norm bias", "feed-forward up", "feed-forward up bias",
      "feed-forward gate", "feed-forward down", "feed-forward down bias"};
  return names[static_cast<std::size_t>(r)];
}

bool role_is_matrix(Role r) {
  switch (r) {
    case Role::token_embedding: case Role::position_embedding: case Role::type_embedding:
    case Role::lm_head: case Role::mlm_dense: case Role::q: case Role::k: case Role::v: case Role::o:
    case Role::up: case Role::gate: case Role::down:
      return true;
    default: return false;
  }
}

bool role_used(const Spec& s, Role r) {
  const bool ln = s.norm == NormKind::layer;
  switch (r) {
    case Role::token_embedding: return true;
    case Role::position_embedding: return !s.rope;
    case Role::type_embedding: return s.type_vocab > 0;
    case Role::embedding_norm: return s.embedding_norm;
    case Role::embedding_norm_bias: return s.embedding_norm && ln;
    case Role::final_norm: return s.pre_norm;
    case Role::final_norm_bias: return s.pre_norm && ln;
    case Role::lm_head: return s.head == HeadKind::causal_lm && !s.tied_head;
    case Role::mlm_dense: case Role::mlm_dense_bias: case Role::mlm_norm: case Role::mlm_bias:
      return s.head == HeadKind::masked_lm;
    case Role::mlm_norm_bias: return s.head == HeadKind::masked_lm && ln;
    case Role::attn_norm: case Role::ffn_norm: return true;
    case Role::attn_norm_bias: case Role::ffn_norm_bias: return ln;
    case Role::q: case Role::k: case Role::v: case Role::o: case Role::up: case Role::down: return true;
    case Role::q_bias: case Role::k_bias: case Role::v_bias: return s.qkv_bias;
    case Role::o_bias: return s.out_bias;
    case Role::up_bias: case Role::down_bias: return s.mlp_bias;
    case Role::gate: return s.gated;
  }
  return false;
}

void role_shape(const Spec& s, Role r, std::size_t& out, std::size_t& in) {
  in = 1;
  switch (r) {
    case Role::token_embedding: case Role::lm_head: out = s.vocab, in = s.dim; return;
    case Role::position_embedding: out = s.positions, in = s.dim; return;
    case Role::type_embedding: out = s.type_vocab, in = s.dim; return;
    case Role::mlm_dense: out = s.dim, in = s.dim; return;
    case Role::mlm_bias: out = s.vocab; return;
    case Role::q: out = s.q_dim(), in = s.dim; return;
    case Role::q_bias: out = s.q_dim(); return;
    case Role::k: case Role::v: out = s.kv_dim(), in = s.dim; return;
    case Role::k_bias: case Role::v_bias: out = s.kv_dim(); return;
    case Role::o: out = s.dim, in = s.q_dim(); return;
    case Role::up: case Role::gate: out = s.ffn, in = s.dim; return;
    case Role::up_bias: out = s.ffn; return;
    case Role::down: out = s.dim, in = s.ffn; return;
    default: out = s.dim; return;  // norms and the remaining biases
  }
}

std::string check_spec(const Spec& s) {
  auto bad = [](const char* name, std::size_t v, std::size_t max) {
    return "the model's " + std::string(name) + " is " + std::to_string(v) + "; it must be 1 to " +
           std::to_string(max);
  };
  if (s.dim < 1 || s.dim > kMaxDim) return bad("hidden size", s.dim, kMaxDim);
  if (s.ffn < 1 || s.ffn > kMaxFfn) return bad("feed-forward size", s.ffn, kMaxFfn);
  if (s.layers < 1 || s.layers > kMaxLayers) return bad("number of layers", s.layers, kMaxLayers);
  if (s.heads < 1 || s.heads > kMaxHeads) return bad("number of heads", s.heads, kMaxHeads);
  if (s.kv_heads < 1 || s.kv_heads > s.heads) return bad("number of key/value heads", s.kv_heads, s.heads);
  if (s.head_dim < 1 || s.head_dim > kMaxDim) return bad("head size", s.head_dim, kMaxDim);
  if (s.vocab < 1 || s.vocab > kMaxVocab) return bad("vocabulary size", s.vocab, kMaxVocab);
  if (s.context < 1 || s.context > kMaxContext) return bad("context", s.context, kMaxContext);
  if (s.type_vocab > 64) return bad("token type vocabulary", s.type_vocab, 64);
  if (!s.rope && (s.positions < s.context || s.positions > kMaxContext))
    return "the model has " + std::to_string(s.positions) + " learned positions, fewer than its context of " +
           std::to_string(s.context);
  if (s.heads % s.kv_heads != 0)
    return "the model's key/value heads (" + std::to_string(s.kv_heads) + ") must divide its heads (" +
           std::to_string(s.heads) + ")";
  if (s.q_dim() > kMaxDim) return bad("heads × head size", s.q_dim(), kMaxDim);
  if (s.rope && s.head_dim % 2 != 0) return "the model's head size (" + std::to_string(s.head_dim) + ") must be even for RoPE";
  if (!(s.eps > 0) || !std::isfinite(s.eps)) return "the model's norm epsilon must be finite and > 0";
  if (s.rope && (!(s.rope_theta > 0) || !std::isfinite(s.rope_theta))) return "the model's RoPE theta must be finite and > 0";
  if (s.head == HeadKind::causal_lm && !s.causal) return "a causal LM head needs causal attention";
  if (!s.pre_norm && s.norm != NormKind::layer) return "post-norm models use LayerNorm";
  return {};
}

std::size_t weight_bytes(const Spec& s, std::size_t element_bytes) {
  std::size_t total = 0;
  for (std::size_t r = 0; r < kRoles; ++r) {
    const Role role = static_cast<Role>(r);
    if (!role_used(s, role)) continue;
    std::size_t out, in;
    role_shape(s, role, out, in);
    const std::size_t bytes = mul(mul(out, in), role_is_matrix(role) ? element_bytes : 4);
    total = add(total, per_layer(role) ? mul(bytes, s.layers) : bytes);
  }
  return total;
}

std::size_t cache_bytes(const Spec& s, std::size_t tokens) {
  return mul(mul(mul(2, s.layers), mul(tokens, s.kv_dim())), sizeof(float));
}

std::size_t run_bytes(const Spec& s, std::size_t n) {
  // x, xb, hidden [n, dim]; q, cat, Q, K, V, O [n, q_dim]; k, v [n, kv]; two FFN buffers; the
  // attention of every layer; logits (every position for a masked LM).
  std::size_t floats = add(mul(3, mul(n, s.dim)), mul(6, mul(n, s.q_dim())));
  floats = add(floats, add(mul(2, mul(n, s.kv_dim())), mul(2, mul(n, s.ffn))));
  floats = add(floats, mul(s.layers, mul(s.heads, mul(n, n))));
  floats = add(floats, s.head == HeadKind::masked_lm ? mul(n, s.vocab) : s.vocab);
  return add(mul(floats, sizeof(float)), s.causal ? cache_bytes(s, n) : 0);
}

std::string Transformer::configure(const Spec& spec) {
  ready_ = false;
  tensors_.clear();
  weight_bytes_ = 0;
  std::string error = check_spec(spec);
  if (!error.empty()) return error;
  spec_ = spec;
  tensors_.resize(kRoles * (spec.layers + 1));
  return {};
}

Transformer::Tensor& Transformer::slot(Role role, std::size_t layer) {
  return tensors_[(per_layer(role) ? layer + 1 : 0) * kRoles + static_cast<std::size_t>(role)];
}
const Transformer::Tensor& Transformer::slot(Role role, std::size_t layer) const {
  return tensors_[(per_layer(role) ? layer + 1 : 0) * kRoles + static_cast<std::size_t>(role)];
}

bool Transformer::has(Role role, std::size_t layer) const {
  return !tensors_.empty() && layer < spec_.layers && slot(role, layer).bytes != nullptr;
}

std::string Transformer::set(Role role, std::size_t layer, const SourceTensor& src, const std::string& name,
                             std::unique_ptr<std::uint8_t[]>* owned) {
  if (tensors_.empty()) return "the model is not configured";
  if (!per_layer(role)) layer = 0;
  if (layer >= spec_.layers)
    return "tensor '" + name + "' is for layer " + std::to_string(layer) + ", but the model has " +
           std::to_string(spec_.layers) + " layers";
  if (!role_used(spec_, role)) return {};  // e.g. a tied lm_head: the embedding serves
  std::size_t out, in;
  role_shape(spec_, role, out, in);
  if (src.in != in || src.row_offset > src.out_total || src.out_total - src.row_offset < out)
    return "tensor '" + name + "' does not hold the " + role_name(role) + " [" + std::to_string(out) + ", " +
           std::to_string(in) + "]";
  const bool matrix = role_is_matrix(role);
  const WeightType type = matrix ? src.type : WeightType::f32;
  const std::size_t src_size = weight_type_size(src.type), size = weight_type_size(type);
  Tensor& t = slot(role, layer);
  const bool as_stored = !src.transposed && size == src_size;
  const bool take_over = as_stored && owned && *owned && owned->get() == src.data && src.row_offset == 0;
  std::unique_ptr<std::uint8_t[]> bytes(take_over ? owned->release() : new (std::nothrow) std::uint8_t[out * in * size]);
  if (!bytes) return "could not allocate " + std::to_string(out * in * size) + " bytes for tensor '" + name + "'";
  std::uint8_t* to = bytes.get();
  if (as_stored) {
    // Rows at the file's precision: one copy (none when taken over), then a scan for non-finite values.
    if (!take_over) std::memcpy(to, src.data + src.row_offset * in * size, out * in * size);
    for (std::size_t i = 0; i < out * in; ++i)
      if (!finite_bits(to + i * size, type))
        return "tensor '" + name + "' holds a non-finite value at [" + std::to_string(src.row_offset + i / in) + ", " +
               std::to_string(i % in) + "]";
  } else if (src.transposed && size == src_size && all_finite(src, out, in)) {  // Conv1D, kept as stored
    const std::uint8_t* from = src.data + src.row_offset * size;
    if (size == 4) transpose_blocked<std::uint32_t>(from, src.out_total, out, in, to);
    else transpose_blocked<std::uint16_t>(from, src.out_total, out, in, to);
  } else {  // widened (a 16-bit vector), or a non-finite value to name: element by element
    for (std::size_t r = 0; r < out; ++r)
      for (std::size_t c = 0; c < in; ++c) {
        const std::size_t row = src.row_offset + r;
        const std::uint8_t* from = src.data + (src.transposed ? c * src.out_total + row : row * in + c) * src_size;
        if (!finite_bits(from, src.type))
          return "tensor '" + name + "' holds a non-finite value at [" + std::to_string(row) + ", " + std::to_string(c) + "]";
        if (size == src_size) {
          std::memcpy(to, from, size);
        } else {
          const float f = decode(from, src.type);
          std::memcpy(to, &f, 4);
        }
        to += size;
      }
  }
  if (t.bytes) weight_bytes_ -= t.out * t.in * weight_type_size(t.type);
  t.bytes = std::move(bytes);
  t.type = type;
  t.out = out;
  t.in = in;
  weight_bytes_ += out * in * size;
  return {};
}

std::string Transformer::finish() {
  if (tensors_.empty()) return "the model is not configured";
  for (std::size_t r = 0; r < kRoles; ++r) {
    const Role role = static_cast<Role>(r);
    if (!role_used(spec_, role)) continue;
    for (std::size_t l = 0; l < (per_layer(role) ? spec_.layers : 1); ++l)
      if (!slot(role, l).bytes)
        return std::string("the model file lacks the ") + role_name(role) +
               (per_layer(role) ? " of layer " + std::to_string(l) : std::string());
  }
  ready_ = true;
  return {};
}

WeightMatrix Transformer::matrix(Role role, std::size_t layer) const {
  const Tensor& t = slot(role, layer);
  return {t.bytes.get(), t.type, t.out, t.in};
}

const float* Transformer::vec(Role role, std::size_t layer) const {
  if (!role_used(spec_, role)) return nullptr;
  return reinterpret_cast<const float*>(slot(role, layer).bytes.get());
}

void Transformer::norm(const float* x, std::size_t rows, Role weight, std::size_t layer, float* out) const {
  const float* w = vec(weight, layer);
  if (spec_.norm == NormKind::rms) return rms_norm(x, rows, spec_.dim, w, spec_.eps, out);
  layer_norm(x, rows, spec_.dim, w, vec(static_cast<Role>(static_cast<std::size_t>(weight) + 1), layer),
             spec_.eps, out);
}

// h = act(h), or for a gated FFN h = SiLU(h)·up (h holds the gate).
void Transformer::activate(float* h, const float* up, std::size_t count, Kernel kernel) const {
  if (spec_.gated) return attnlens::swiglu(h, up, count, kernel);
  if (spec_.activation == Activation::gelu_tanh) return attnlens::gelu_tanh(h, count, kernel);
  if (spec_.activation == Activation::gelu_erf) return attnlens::gelu_erf(h, count, kernel);
  attnlens::silu(h, count, kernel);
}

void Transformer::embed(std::int32_t id, std::int32_t type, std::size_t position, float* x) const {
  const std::size_t d = spec_.dim;
  weight_row(matrix(Role::token_embedding), static_cast<std::size_t>(id), x);
  std::vector<float> row;
  if (!spec_.rope) {
    row.resize(d);
    weight_row(matrix(Role::position_embedding), position, row.data());
    add_in_place(x, row.data(), d);
  }
  if (spec_.type_vocab) {
    row.resize(d);
    weight_row(matrix(Role::type_embedding), static_cast<std::size_t>(type), row.data());
    add_in_place(x, row.data(), d);
  }
  if (spec_.embedding_norm) norm(x, 1, Role::embedding_norm, 0, x);
}

void Transformer::reset(TransformerState& state, std::size_t capacity) const {
  state.capacity = capacity;
  state.position = 0;
  const std::size_t floats = spec_.layers * spec_.kv_heads * capacity * spec_.head_dim;
  state.key.assign(floats, 0.0f);
  state.value.assign(floats, 0.0f);
  state.logits.assign(spec_.vocab, 0.0f);
  state.attention.assign(spec_.layers, {});
}

struct Transformer::Scratch {
  std::vector<float> x, xb, q, k, v, cat, qh, kh, vh, oh, h1, h3;
};

namespace {
float* sized(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}
}  // namespace

void Transformer::attention_output(std::size_t n, float* x, std::size_t l, Scratch& s, Kernel kernel) const {
  float* xb = s.xb.data();
  linear(n, s.cat.data(), matrix(Role::o, l), vec(Role::o_bias, l), xb, kernel);
  add_in_place(x, xb, n * spec_.dim);
  if (!spec_.pre_norm) norm(x, n, Role::attn_norm, l, x);
}

void Transformer::feed_forward(std::size_t n, float* x, std::size_t l, Scratch& s, Kernel kernel) const {
  const std::size_t d = spec_.dim, f = spec_.ffn;
  float* xb = sized(s.xb, n * d);
  float* h1 = sized(s.h1, n * f);
  const float* in = x;
  if (spec_.pre_norm) {
    norm(x, n, Role::ffn_norm, l, xb);
    in = xb;
  }
  float* up = nullptr;
  if (spec_.gated) {
    up = sized(s.h3, n * f);
    linear(n, in, matrix(Role::gate, l), nullptr, h1, kernel);
    linear(n, in, matrix(Role::up, l), vec(Role::up_bias, l), up, kernel);
  } else {
    linear(n, in, matrix(Role::up, l), vec(Role::up_bias, l), h1, kernel);
  }
  activate(h1, up, n * f, kernel);
  linear(n, h1, matrix(Role::down, l), vec(Role::down_bias, l), xb, kernel);
  add_in_place(x, xb, n * d);
  if (!spec_.pre_norm) norm(x, n, Role::ffn_norm, l, x);
}

// q, k, v of n rows at positions first.. (RoPE applied), from x (normed first when pre-norm).
void Transformer::project(std::size_t n, const float* x, std::size_t l, std::size_t first, Scratch& s,
                          Kernel kernel) const {
  const std::size_t d = spec_.dim, qd = spec_.q_dim(), kvd = spec_.kv_dim();
  const float* in = x;
  if (spec_.pre_norm) {
    float* xb = sized(s.xb, n * d);
    norm(x, n, Role::attn_norm, l, xb);
    in = xb;
  }
  float* q = sized(s.q, n * qd);
  float* k = sized(s.k, n * kvd);
  float* v = sized(s.v, n * kvd);
  linear(n, in, matrix(Role::q, l), vec(Role::q_bias, l), q, kernel);
  linear(n, in, matrix(Role::k, l), vec(Role::k_bias, l), k, kernel);
  linear(n, in, matrix(Role::v, l), vec(Role::v_bias, l), v, kernel);
  if (spec_.rope)
    for (std::size_t i = 0; i < n; ++i) {
      rope(q + i * qd, spec_.heads, spec_.head_dim, first + i, spec_.rope_theta, spec_.rope_layout);
      rope(k + i * kvd, spec_.kv_heads, spec_.head_dim, first + i, spec_.rope_theta, spec_.rope_layout);
    }
}

void Transformer::finish_logits(std::size_t n, float* x, const ForwardOutputs& out, std::vector<float>* last,
                                Scratch& s, Kernel kernel) const {
  const std::size_t d = spec_.dim;
  if (spec_.pre_norm) norm(x, n, Role::final_norm, 0, x);
  if (out.hidden) out.hidden->assign(x, x + n * d);
  if (spec_.head == HeadKind::causal_lm && (out.logits || last)) {
    std::vector<float>& logits = out.logits ? *out.logits : *last;
    logits.resize(spec_.vocab);
    const WeightMatrix head = matrix(spec_.tied_head ? Role::token_embedding : Role::lm_head);
    linear(1, x + (n - 1) * d, head, nullptr, logits.data(), kernel);
    if (last && out.logits) *last = logits;
  } else if (spec_.head == HeadKind::masked_lm && out.logits) {
    float* t = sized(s.xb, n * d);
    linear(n, x, matrix(Role::mlm_dense), vec(Role::mlm_dense_bias), t, kernel);
    if (spec_.activation == Activation::gelu_tanh) attnlens::gelu_tanh(t, n * d, kernel);
    else attnlens::gelu_erf(t, n * d, kernel);
    norm(t, n, Role::mlm_norm, 0, t);
    out.logits->resize(n * spec_.vocab);
    linear(n, t, matrix(Role::token_embedding), vec(Role::mlm_bias), out.logits->data(), kernel);
  }
}

void Transformer::forward(Span<const std::int32_t> ids, Span<const std::int32_t> type_ids, TransformerState* state,
                          const ForwardOutputs& out, Kernel kernel) const {
  const Spec& c = spec_;
  const std::size_t n = ids.size, d = c.dim, qd = c.q_dim(), kvd = c.kv_dim(), hd = c.head_dim;
  const std::size_t group = c.heads / c.kv_heads;
  Scratch s;
  float* x = sized(s.x, n * d);
  sized(s.xb, n * d);
  float* cat = sized(s.cat, n * qd);
  float* qh = sized(s.qh, n * qd);
  float* kh = sized(s.kh, n * qd);
  float* vh = sized(s.vh, n * qd);
  float* oh = sized(s.oh, n * qd);
  for (std::size_t i = 0; i < n; ++i) embed(ids[i], type_ids.size ? type_ids[i] : 0, i, x + i * d);
  if (out.attention) out.attention->assign(c.layers, {});
  if (state) state->attention.assign(c.layers, {});

  for (std::size_t l = 0; l < c.layers; ++l) {
    project(n, x, l, 0, s, kernel);
    const float *q = s.q.data(), *k = s.k.data(), *v = s.v.data();
    if (state) {  // the cache, [kv_heads, capacity, hd] per layer
      float* key = state->key.data() + l * c.kv_heads * state->capacity * hd;
      float* value = state->value.data() + l * c.kv_heads * state->capacity * hd;
      for (std::size_t g = 0; g < c.kv_heads; ++g)
        for (std::size_t i = 0; i < n; ++i) {
          std::memcpy(key + (g * state->capacity + i) * hd, k + i * kvd + g * hd, hd * sizeof(float));
          std::memcpy(value + (g * state->capacity + i) * hd, v + i * kvd + g * hd, hd * sizeof(float));
        }
      // The last token's attention rows, as step() reports them (computed the same way).
      auto& rows = state->attention[l];
      rows.resize(c.heads * n);
      std::vector<float> scratch_out(group * hd);
      const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
      for (std::size_t g = 0; g < c.kv_heads; ++g)
        attend(q + (n - 1) * qd + g * group * hd, group, key + g * state->capacity * hd,
               value + g * state->capacity * hd, n, hd, scale, rows.data() + g * group * n, scratch_out.data());
    }
    // Head-major Q, and K/V repeated for every query head of their group.
    split_heads(q, n, qd, 0, c.heads, hd, qh);
    for (std::size_t h = 0; h < c.heads; ++h) {
      split_heads(k, n, kvd, (h / group) * hd, 1, hd, kh + h * n * hd);
      split_heads(v, n, kvd, (h / group) * hd, 1, hd, vh + h * n * hd);
    }
    Span<float> weights;
    if (out.attention) {
      (*out.attention)[l].resize(c.heads * n * n);
      weights = (*out.attention)[l];
    }
    AttentionOptions options;
    options.causal = c.causal;
    attnlens::attention({c.heads, n, n, hd, hd}, {{qh, n * qd}, {kh, n * qd}, {vh, n * qd}}, options,
                        {{oh, n * qd}, weights, {}}, kernel);
    merge_heads(oh, n, c.heads, hd, cat);
    attention_output(n, x, l, s, kernel);
    feed_forward(n, x, l, s, kernel);
  }
  if (state) state->position = n;
  finish_logits(n, x, out, state ? &state->logits : nullptr, s, kernel);
}

void Transformer::prefill(Span<const std::int32_t> ids, TransformerState& state,
                          std::vector<std::vector<float>>* attention, Kernel kernel) const {
  ForwardOutputs out;
  out.attention = attention;
  forward(ids, {}, &state, out, kernel);
}

void Transformer::step(std::int32_t id, TransformerState& state, Kernel kernel) const {
  const Spec& c = spec_;
  const std::size_t d = c.dim, qd = c.q_dim(), hd = c.head_dim, pos = state.position;
  const std::size_t group = c.heads / c.kv_heads, keys = pos + 1;
  Scratch s;
  float* x = sized(s.x, d);
  sized(s.xb, d);
  float* o = sized(s.cat, qd);
  embed(id, 0, pos, x);
  state.attention.resize(c.layers);

  for (std::size_t l = 0; l < c.layers; ++l) {
    project(1, x, l, pos, s, kernel);
    float* key = state.key.data() + l * c.kv_heads * state.capacity * hd;
    float* value = state.value.data() + l * c.kv_heads * state.capacity * hd;
    for (std::size_t g = 0; g < c.kv_heads; ++g) {
      std::memcpy(key + (g * state.capacity + pos) * hd, s.k.data() + g * hd, hd * sizeof(float));
      std::memcpy(value + (g * state.capacity + pos) * hd, s.v.data() + g * hd, hd * sizeof(float));
    }
    // The `group` query heads of KV head g are adjacent in q: their rows against the cached
    // keys 0..pos, written straight into this layer's attention rows [heads, keys].
    auto& rows = state.attention[l];
    rows.resize(c.heads * keys);
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    for (std::size_t g = 0; g < c.kv_heads; ++g)
      attend(s.q.data() + g * group * hd, group, key + g * state.capacity * hd, value + g * state.capacity * hd,
             keys, hd, scale, rows.data() + g * group * keys, o + g * group * hd);
    attention_output(1, x, l, s, kernel);
    feed_forward(1, x, l, s, kernel);
  }
  state.position = keys;
  finish_logits(1, x, {}, &state.logits, s, kernel);
}

}  // namespace attnlens::model
