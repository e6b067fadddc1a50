#include "attnlens/model/use_lite.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnlens/attention.hpp"
#include "attnlens/model/blocks.hpp"
#include "attnlens/ops.hpp"

namespace attnlens::model {

namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// Finds tensor `name` with the given shape; on failure sets `error` (first failure wins).
class TensorLookup {
 public:
  explicit TensorLookup(const ModelFile& file) : file_(file) {}

  const float* get(const std::string& name, std::vector<std::size_t> shape) {
    const TensorView* t = file_.find(name);
    if (!t) return fail("the model file has no tensor '" + name + "'");
    if (t->shape != shape)
      return fail("tensor '" + name + "' has shape " + shape_text(t->shape) + ", expected " +
                  shape_text(shape));
    for (std::size_t i = 0; i < t->size; ++i)
      if (!std::isfinite(t->data[i]))
        return fail("tensor '" + name + "' holds a non-finite value at index " + std::to_string(i));
    return t->data;
  }
  float scalar(const std::string& name) {
    const float* p = get(name, {1});
    return p ? *p : 0.0f;
  }
  const TensorView* find(const std::string& name) const { return file_.find(name); }
  const std::string& error() const { return error_; }

 private:
  const float* fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return nullptr;
  }
  const ModelFile& file_;
  std::string error_;
};

// Scratch buffers of one forward pass, kept per thread so that runs do not allocate once warm.
struct Scratch {
  std::vector<float> x, ln, qkv, q, k, v, o, cat, y, r, h, f, pooled, h_mean, y_mean;
  std::vector<double> sums;
  static Scratch& local() {
    thread_local Scratch s;
    return s;
  }
};

float* sized(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// out[j] = mean over the n rows of x [n, d] of column j, summed in double row after row (`sums`:
// scratch; the adds of one row are independent, unlike one long chain per column).
void mean_rows(const float* x, std::size_t n, std::size_t d, std::vector<double>& sums, float* out) {
  sums.assign(d, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) sums[j] += x[i * d + j];
  for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<float>(sums[j]) / static_cast<float>(n);
}

}  // namespace

std::string UseLite::load(const ModelFile& file) {
  TensorLookup t(file);
  const TensorView* embed = file.find("embed");
  if (!embed || embed->shape.size() != 2 || embed->shape[1] % 2 != 0)
    return "the model file has no embedding table 'embed' [rows, even width]";
  vocab_rows_ = embed->shape[0];
  d_embed_ = embed->shape[1];
  if (file.pieces.size() <= Tokenizer::reserved_ids || file.pieces.size() > vocab_rows_)
    return "the vocabulary has " + std::to_string(file.pieces.size()) +
           " pieces; the embedding table has " + std::to_string(vocab_rows_) + " rows";
  embed_ = t.get("embed", embed->shape);
  timing_ = t.get("timing.inv", {d_embed_ / 2});
  ln_eps_ = t.scalar("ln.eps");
  l2_eps_ = t.scalar("l2.eps");

  std::size_t width = d_embed_;
  for (std::size_t l = 0; l < layer_count && t.error().empty(); ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    const TensorView* qkv = file.find(p + "qkv.w");
    const TensorView* out = file.find(p + "out.w");
    const TensorView* ffn = file.find(p + "ffn1.w");
    if (!qkv || !out || !ffn || qkv->shape.size() != 2 || out->shape.size() != 2 ||
        ffn->shape.size() != 2 || qkv->shape[1] % 3 != 0 || (qkv->shape[1] / 3) % heads != 0)
      return "the model file lacks layer " + std::to_string(l) +
             "'s qkv.w [d, 3·d_attn], out.w and ffn1.w matrices";
    UseLiteLayer& L = layers_[l];
    L.d_in = width;
    L.d_attn = qkv->shape[1] / 3;
    L.d_out = out->shape[1];
    L.d_ff = ffn->shape[1];
    L.q_scale = t.scalar(p + "q.scale");
    L.ln1_scale = t.get(p + "ln1.scale", {L.d_in});
    L.ln1_bias = t.get(p + "ln1.bias", {L.d_in});
    L.qkv_w = t.get(p + "qkv.w", {L.d_in, 3 * L.d_attn});
    L.qkv_b = t.get(p + "qkv.b", {3 * L.d_attn});
    L.out_w = t.get(p + "out.w", {L.d_attn, L.d_out});
    L.out_b = t.get(p + "out.b", {L.d_out});
    // A residual that changes width needs the projection (layer 0: 256 → 512).
    if (L.d_in != L.d_out || file.find(p + "res.w")) {
      L.res_w = t.get(p + "res.w", {L.d_in, L.d_out});
      L.res_b = t.get(p + "res.b", {L.d_out});
    }
    L.ln2_scale = t.get(p + "ln2.scale", {L.d_out});
    L.ln2_bias = t.get(p + "ln2.bias", {L.d_out});
    L.ffn1_w = t.get(p + "ffn1.w", {L.d_out, L.d_ff});
    L.ffn1_b = t.get(p + "ffn1.b", {L.d_ff});
    L.ffn2_w = t.get(p + "ffn2.w", {L.d_ff, L.d_out});
    L.ffn2_b = t.get(p + "ffn2.b", {L.d_out});
    if (t.error().empty() && !(L.q_scale > 0)) return "tensor '" + p + "q.scale' must be > 0";
    width = L.d_out;
  }
  pool_w_ = t.get("pool.w", {width, embedding_size});
  pool_b_ = t.get("pool.b", {embedding_size});
  if (!t.error().empty()) return t.error();
  for (std::size_t l = 0; l < layer_count; ++l) {
    const UseLiteLayer& L = layers_[l];
    packed_[l] = {PackedMatrix(L.d_in, 3 * L.d_attn, L.qkv_w), PackedMatrix(L.d_attn, L.d_out, L.out_w),
                  L.res_w ? PackedMatrix(L.d_in, L.d_out, L.res_w) : PackedMatrix(),
                  PackedMatrix(L.d_out, L.d_ff, L.ffn1_w), PackedMatrix(L.d_ff, L.d_out, L.ffn2_w)};
  }
  pool_ = PackedMatrix(width, embedding_size, pool_w_);
  // The timing signal of every position, made once: [sin(p·inv), cos(p·inv)] per row (musl's
  // sin and cos are software, and a run needed n·d_embed of them).
  const std::size_t half = d_embed_ / 2;
  timing_signal_.resize(max_tokens * d_embed_);
  for (std::size_t i = 0; i < max_tokens; ++i)
    for (std::size_t j = 0; j < half; ++j) {
      const float angle = static_cast<float>(i) * timing_[j];
      timing_signal_[i * d_embed_ + j] = std::sin(angle);
      timing_signal_[i * d_embed_ + half + j] = std::cos(angle);
    }
  if (!(ln_eps_ > 0) || !(l2_eps_ > 0)) return "tensors 'ln.eps' and 'l2.eps' must be > 0";
  tokenizer_ = Tokenizer(file.pieces, file.scores);
  return {};
}

std::string UseLite::run(std::string_view text, UseLiteOutput& out, Kernel kernel) const {
  if (!embed_) return "the model is not loaded";
  out.encoding = tokenizer_.encode(text, max_tokens);
  if (out.encoding.ids.empty()) return "text is empty: the model needs at least one token";
  forward(out.encoding.ids, out, kernel);
  return {};
}

void UseLite::forward(Span<const std::int32_t> ids, UseLiteOutput& out, Kernel kernel) const {
  const std::size_t n = ids.size;
  Scratch& s = Scratch::local();
  out.tokens = n;
  out.attention.resize(layer_count);

  // x0 = E + (E + timing), in the graph's order of additions.
  float* x = sized(s.x, n * d_embed_);
  for (std::size_t i = 0; i < n; ++i) {
    const float* e = embed_ + static_cast<std::size_t>(ids[i]) * d_embed_;
    const float* signal = timing_signal_.data() + i * d_embed_;
    for (std::size_t j = 0; j < d_embed_; ++j) x[i * d_embed_ + j] = e[j] + (e[j] + signal[j]);
  }

  for (std::size_t l = 0; l < layer_count; ++l) {
    const UseLiteLayer& L = layers_[l];
    const PackedLayer& P = packed_[l];
    const std::size_t dh = L.d_attn / heads;
    float* ln = sized(s.ln, n * std::max(L.d_in, L.d_out));
    float* qkv = sized(s.qkv, n * 3 * L.d_attn);
    float* q = sized(s.q, n * L.d_attn);
    float* k = sized(s.k, n * L.d_attn);
    float* v = sized(s.v, n * L.d_attn);
    float* o = sized(s.o, n * L.d_attn);
    float* cat = sized(s.cat, n * L.d_attn);
    float* y = sized(s.y, n * L.d_out);
    float* h = sized(s.h, n * L.d_ff);

    // Self-attention block.
    layer_norm(x, n, L.d_in, L.ln1_scale, L.ln1_bias, ln_eps_, ln);
    matmul(n, ln, P.qkv, qkv, L.qkv_b, kernel);
    split_heads(qkv, n, 3 * L.d_attn, 0, heads, dh, q);
    split_heads(qkv, n, 3 * L.d_attn, L.d_attn, heads, dh, k);
    split_heads(qkv, n, 3 * L.d_attn, 2 * L.d_attn, heads, dh, v);
    std::vector<float>& weights = out.attention[l];
    weights.resize(heads * n * n);
    AttentionOptions options;
    options.scale = L.q_scale;
    attention({heads, n, n, dh, dh}, {{q, heads * n * dh}, {k, heads * n * dh}, {v, heads * n * dh}},
              options, {{o, heads * n * dh}, weights, {}}, kernel);
    merge_heads(o, n, heads, dh, cat);
    matmul(n, cat, P.out, y, L.out_b, kernel);
    if (L.res_w) {
      float* r = sized(s.r, n * L.d_out);
      matmul(n, x, P.res, r, L.res_b, kernel);
      add_in_place(y, r, n * L.d_out);
    } else {
      add_in_place(y, x, n * L.d_out);
    }

    // Feed-forward block; its output becomes the next layer's input.
    layer_norm(y, n, L.d_out, L.ln2_scale, L.ln2_bias, ln_eps_, ln);
    matmul(n, ln, P.ffn1, h, L.ffn1_b, kernel);
    for (std::size_t i = 0; i < n * L.d_ff; ++i) h[i] = std::max(h[i], 0.0f);
    static_assert(layer_count >= 1, "the pooled mean below comes from the last layer");
    if (l + 1 == layer_count) {
      // The last layer's output is only ever averaged over tokens (the embedding), and its
      // second feed-forward product is linear: mean(y + h·W2 + b2) = mean(y) + mean(h)·W2 + b2.
      // One row instead of n skips a sixth of the pass's multiply-adds; the sums differ from the
      // graph's order only by rounding.
      float* h_mean = sized(s.h_mean, L.d_ff);
      float* pooled = sized(s.pooled, L.d_out);
      mean_rows(h, n, L.d_ff, s.sums, h_mean);
      matmul(1, h_mean, P.ffn2, pooled, L.ffn2_b, kernel);
      float* y_mean = sized(s.y_mean, L.d_out);
      mean_rows(y, n, L.d_out, s.sums, y_mean);
      add_in_place(pooled, y_mean, L.d_out);
      break;
    }
    float* next = sized(s.f, n * L.d_out);
    matmul(n, h, P.ffn2, next, L.ffn2_b, kernel);
    add_in_place(next, y, n * L.d_out);
    std::swap(s.x, s.f);
    x = s.x.data();
  }

  // The pooled mean (above), dense + tanh, L2-normalise.
  const float* pooled = s.pooled.data();
  out.embedding.resize(embedding_size);
  float* e = out.embedding.data();
  matmul(1, pooled, pool_, e, pool_b_, kernel);
  double squares = 0;
  for (std::size_t j = 0; j < embedding_size; ++j) {
    e[j] = std::tanh(e[j]);
    squares += static_cast<double>(e[j]) * e[j];
  }
  const float inv_norm = 1.0f / std::sqrt(std::max(static_cast<float>(squares), l2_eps_));
  for (std::size_t j = 0; j < embedding_size; ++j) e[j] *= inv_norm;
}

}  // namespace attnlens::model
