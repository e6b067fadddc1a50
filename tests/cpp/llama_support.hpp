// Test support for the Llama family: a small random model written as llama2.c files (legacy and
// version 1) and as Hugging Face safetensors (F32/F16/BF16, with the q/k row permutation of
// export.py), plus a plain float64 forward pass (no shared code with the engine) to compare with.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace llama_support {

using Bytes = std::vector<std::uint8_t>;

struct Weights {
  int dim = 16, hidden = 24, layers = 2, heads = 4, kv_heads = 2, vocab = 40, seq_len = 32;
  bool shared = true;
  // nn.Linear [out, in] layouts, llama2.c order; per-layer arrays are stacked.
  std::vector<float> embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, classifier;
  int head_dim() const { return dim / heads; }
  int kv_dim() const { return kv_heads * head_dim(); }
};

inline Weights random_weights(std::uint32_t seed, bool shared = true) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.4f);
  Weights w;
  w.shared = shared;
  auto fill = [&](std::vector<float>& v, std::size_t n, float mean = 0.0f) {
    v.resize(n);
    for (float& x : v) x = mean + normal(rng);
  };
  const std::size_t d = w.dim, kv = w.kv_dim(), h = w.hidden, L = w.layers;
  fill(w.embedding, w.vocab * d);
  fill(w.rms_att, L * d, 1.0f);
  fill(w.wq, L * d * d);
  fill(w.wk, L * kv * d);
  fill(w.wv, L * kv * d);
  fill(w.wo, L * d * d);
  fill(w.rms_ffn, L * d, 1.0f);
  fill(w.w1, L * h * d);
  fill(w.w2, L * d * h);
  fill(w.w3, L * h * d);
  fill(w.rms_final, d, 1.0f);
  if (!shared) fill(w.classifier, w.vocab * d);
  return w;
}

inline void put_i32(Bytes& b, std::int32_t v) {
  std::uint8_t p[4];
  std::memcpy(p, &v, 4);
  b.insert(b.end(), p, p + 4);
}
inline void put_f32s(Bytes& b, const std::vector<float>& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
  b.insert(b.end(), p, p + 4 * v.size());
}

// llama2.c legacy (v0) checkpoint: header, weights, freq_cis (zeros), classifier if not shared.
inline Bytes llama2c_v0(const Weights& w) {
  Bytes b;
  for (int v : {w.dim, w.hidden, w.layers, w.heads, w.kv_heads, w.shared ? w.vocab : -w.vocab, w.seq_len}) put_i32(b, v);
  for (const auto* v : {&w.embedding, &w.rms_att, &w.wq, &w.wk, &w.wv, &w.wo, &w.rms_ffn, &w.w1, &w.w2, &w.w3, &w.rms_final})
    put_f32s(b, *v);
  put_f32s(b, std::vector<float>(static_cast<std::size_t>(w.seq_len * w.head_dim()), 0.0f));
  if (!w.shared) put_f32s(b, w.classifier);
  return b;
}

// export.py version1_export(): 256-byte header, norms first, then the matrices.
inline Bytes llama2c_v1(const Weights& w, std::int32_t version = 1) {
  Bytes b;
  put_i32(b, 0x616b3432);
  put_i32(b, version);
  for (int v : {w.dim, w.hidden, w.layers, w.heads, w.kv_heads, w.vocab, w.seq_len}) put_i32(b, v);
  b.push_back(w.shared ? 1 : 0);
  b.resize(256, 0);
  for (const auto* v : {&w.rms_att, &w.rms_ffn, &w.rms_final, &w.embedding, &w.wq, &w.wk, &w.wv, &w.wo, &w.w1, &w.w2, &w.w3})
    put_f32s(b, *v);
  if (!w.shared) put_f32s(b, w.classifier);
  return b;
}

enum class Dtype { f32, f16, bf16 };

// Round-to-nearest-even float → half / bfloat16 bits (finite inputs in range).
inline std::uint16_t to_f16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const float a = std::fabs(f);
  if (a < 6.103515625e-05f) {  // subnormal half: a multiple of 2^-24
    const auto m = static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f));
    return static_cast<std::uint16_t>(sign | m);
  }
  std::uint32_t ax = x & 0x7FFFFFFFu;
  ax += 0xFFFu + ((ax >> 13) & 1u);  // round to nearest even at bit 13
  return static_cast<std::uint16_t>(sign | (((ax >> 23) - 112) << 10) | ((ax >> 13) & 0x3FFu));
}
inline std::uint16_t to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}
// The value a float becomes after a round trip through the dtype (computed independently of
// the engine's decoder: by scaling, not bit surgery).
inline float rounded(float f, Dtype t) {
  if (t == Dtype::f32) return f;
  if (t == Dtype::bf16) {
    const std::uint32_t bits = static_cast<std::uint32_t>(to_bf16(f)) << 16;
    float r;
    std::memcpy(&r, &bits, 4);
    return r;
  }
  const std::uint16_t h = to_f16(f);
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return static_cast<float>((h & 0x8000) ? -v : v);
}
inline Weights rounded(const Weights& w, Dtype t) {
  Weights r = w;
  for (auto* v : {&r.embedding, &r.rms_att, &r.wq, &r.wk, &r.wv, &r.wo, &r.rms_ffn, &r.w1, &r.w2, &r.w3, &r.rms_final, &r.classifier})
    for (float& x : *v) x = rounded(x, t);
  return r;
}

// export.py permute_reverse: rows of each head regrouped so that rotate-half RoPE equals
// llama2.c's interleaved RoPE: new[h·hd + c·hd/2 + i] = old[h·hd + 2i + c].
inline std::vector<float> permute_rows(const float* w, int heads, int hd, int cols) {
  std::vector<float> out(static_cast<std::size_t>(heads * hd * cols));
  for (int h = 0; h < heads; ++h)
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < hd / 2; ++i)
        std::memcpy(&out[static_cast<std::size_t>((h * hd + c * hd / 2 + i) * cols)],
                    w + (h * hd + 2 * i + c) * cols, sizeof(float) * static_cast<std::size_t>(cols));
  return out;
}

struct NamedTensor {
  std::string name;
  std::vector<int> shape;
  std::vector<float> values;
};

inline Bytes safetensors(const std::vector<NamedTensor>& tensors, Dtype t) {
  const char* dtype = t == Dtype::f32 ? "F32" : t == Dtype::f16 ? "F16" : "BF16";
  const std::size_t element = t == Dtype::f32 ? 4 : 2;
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::size_t offset = 0;
  for (const auto& nt : tensors) {
    header += ",\"" + nt.name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < nt.shape.size(); ++i) header += (i ? "," : "") + std::to_string(nt.shape[i]);
    const std::size_t end = offset + element * nt.values.size();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  Bytes b(8);
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  for (const auto& nt : tensors)
    for (float f : nt.values) {
      if (t == Dtype::f32) {
        std::uint8_t p[4];
        std::memcpy(p, &f, 4);
        b.insert(b.end(), p, p + 4);
      } else {
        const std::uint16_t h = t == Dtype::f16 ? to_f16(f) : to_bf16(f);
        b.push_back(static_cast<std::uint8_t>(h));
        b.push_back(static_cast<std::uint8_t>(h >> 8));
      }
    }
  return b;
}

// The Hugging Face tensors of `w` (export.py hf_export()).
inline std::vector<NamedTensor> hf_tensors(const Weights& w, bool with_head = false) {
  const int d = w.dim, kv = w.kv_dim(), h = w.hidden, hd = w.head_dim();
  auto slice = [](const std::vector<float>& v, std::size_t l, std::size_t n) {
    return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(l * n), v.begin() + static_cast<std::ptrdiff_t>((l + 1) * n));
  };
  std::vector<NamedTensor> t;
  t.push_back({"model.embed_tokens.weight", {w.vocab, d}, w.embedding});
  for (int l = 0; l < w.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto L = static_cast<std::size_t>(l);
    t.push_back({p + "input_layernorm.weight", {d}, slice(w.rms_att, L, d)});
    t.push_back({p + "self_attn.q_proj.weight", {d, d}, permute_rows(w.wq.data() + L * d * d, w.heads, hd, d)});
    t.push_back({p + "self_attn.k_proj.weight", {kv, d}, permute_rows(w.wk.data() + L * kv * d, w.kv_heads, hd, d)});
    t.push_back({p + "self_attn.v_proj.weight", {kv, d}, slice(w.wv, L, static_cast<std::size_t>(kv * d))});
    t.push_back({p + "self_attn.o_proj.weight", {d, d}, slice(w.wo, L, static_cast<std::size_t>(d * d))});
    t.push_back({p + "post_attention_layernorm.weight", {d}, slice(w.rms_ffn, L, d)});
    t.push_back({p + "mlp.gate_proj.weight", {h, d}, slice(w.w1, L, static_cast<std::size_t>(h * d))});
    t.push_back({p + "mlp.down_proj.weight", {d, h}, slice(w.w2, L, static_cast<std::size_t>(d * h))});
    t.push_back({p + "mlp.up_proj.weight", {h, d}, slice(w.w3, L, static_cast<std::size_t>(h * d))});
  }
  t.push_back({"model.norm.weight", {d}, w.rms_final});
  if (with_head) t.push_back({"lm_head.weight", {w.vocab, d}, w.shared ? w.embedding : w.classifier});
  return t;
}

inline std::string hf_config(const Weights& w, bool tied = true, double eps = 1e-5) {
  char eps_text[32];
  std::snprintf(eps_text, sizeof eps_text, "%.17g", eps);
  return "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":" +
         std::to_string(w.dim) + ",\"intermediate_size\":" + std::to_string(w.hidden) +
         ",\"num_hidden_layers\":" + std::to_string(w.layers) + ",\"num_attention_heads\":" +
         std::to_string(w.heads) + ",\"num_key_value_heads\":" + std::to_string(w.kv_heads) +
         ",\"vocab_size\":" + std::to_string(w.vocab) + ",\"max_position_embeddings\":" +
         std::to_string(w.seq_len) + ",\"rms_norm_eps\":" + eps_text +
         ",\"rope_theta\":10000.0,\"hidden_act\":\"silu\",\"rope_scaling\":null,\"tie_word_embeddings\":" +
         (tied ? "true" : "false") + "}";
}

// ---- float64 reference forward pass (llama2.c's model.py, written out plainly) -----------------
struct Reference {
  std::vector<double> logits;                   // last position
  std::vector<std::vector<double>> attention;  // [layer][head·n·n]
};

inline Reference reference_forward(const Weights& w, const std::vector<int>& ids) {
  const int n = static_cast<int>(ids.size()), d = w.dim, hd = w.head_dim(), kvd = w.kv_dim(), H = w.hidden;
  std::vector<std::vector<double>> x(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(d)));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) x[i][j] = w.embedding[static_cast<std::size_t>(ids[i] * d + j)];
  auto rms = [&](const std::vector<double>& v, const float* g) {
    double ss = 0;
    for (double a : v) ss += a * a;
    const double r = 1.0 / std::sqrt(ss / d + 1e-5);
    std::vector<double> o(v.size());
    for (std::size_t j = 0; j < v.size(); ++j) o[j] = g[j] * v[j] * r;
    return o;
  };
  auto linear = [](const std::vector<double>& v, const float* W, int out) {  // W [out, in]
    std::vector<double> o(static_cast<std::size_t>(out), 0.0);
    for (int r = 0; r < out; ++r)
      for (std::size_t c = 0; c < v.size(); ++c) o[r] += W[r * v.size() + c] * v[c];
    return o;
  };
  auto rotate = [&](std::vector<double>& v, int heads, int pos) {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < hd / 2; ++i) {
        const double angle = pos * std::pow(10000.0, -2.0 * i / hd);
        const double a = v[h * hd + 2 * i], b = v[h * hd + 2 * i + 1];
        v[h * hd + 2 * i] = a * std::cos(angle) - b * std::sin(angle);
        v[h * hd + 2 * i + 1] = a * std::sin(angle) + b * std::cos(angle);
      }
  };
  Reference ref;
  for (int l = 0; l < w.layers; ++l) {
    std::vector<std::vector<double>> q(n), k(n), v(n);
    for (int i = 0; i < n; ++i) {
      const auto xb = rms(x[i], w.rms_att.data() + l * d);
      q[i] = linear(xb, w.wq.data() + l * d * d, d);
      k[i] = linear(xb, w.wk.data() + l * kvd * d, kvd);
      v[i] = linear(xb, w.wv.data() + l * kvd * d, kvd);
      rotate(q[i], w.heads, i);
      rotate(k[i], w.kv_heads, i);
    }
    std::vector<double> att(static_cast<std::size_t>(w.heads * n * n), 0.0);
    std::vector<std::vector<double>> o(n, std::vector<double>(static_cast<std::size_t>(d), 0.0));
    for (int h = 0; h < w.heads; ++h) {
      const int g = h / (w.heads / w.kv_heads);
      for (int i = 0; i < n; ++i) {
        std::vector<double> s(static_cast<std::size_t>(i + 1));
        double max = -1e300, sum = 0;
        for (int j = 0; j <= i; ++j) {
          double dot = 0;
          for (int c = 0; c < hd; ++c) dot += q[i][h * hd + c] * k[j][g * hd + c];
          s[j] = dot / std::sqrt(static_cast<double>(hd));
          max = std::max(max, s[j]);
        }
        for (int j = 0; j <= i; ++j) sum += s[j] = std::exp(s[j] - max);
        for (int j = 0; j <= i; ++j) {
          att[(h * n + i) * n + j] = s[j] / sum;
          for (int c = 0; c < hd; ++c) o[i][h * hd + c] += s[j] / sum * v[j][g * hd + c];
        }
      }
    }
    ref.attention.push_back(att);
    for (int i = 0; i < n; ++i) {
      const auto a = linear(o[i], w.wo.data() + l * d * d, d);
      for (int j = 0; j < d; ++j) x[i][j] += a[j];
      const auto xb = rms(x[i], w.rms_ffn.data() + l * d);
      auto g1 = linear(xb, w.w1.data() + l * H * d, H);
      const auto u = linear(xb, w.w3.data() + l * H * d, H);
      for (int j = 0; j < H; ++j) g1[j] = g1[j] / (1.0 + std::exp(-g1[j])) * u[j];
      const auto f = linear(g1, w.w2.data() + l * d * H, d);
      for (int j = 0; j < d; ++j) x[i][j] += f[j];
    }
  }
  const auto last = rms(x[n - 1], w.rms_final.data());
  ref.logits = linear(last, (w.shared ? w.embedding : w.classifier).data(), w.vocab);
  return ref;
}

// A llama2.c tokenizer file from pieces and scores.
inline Bytes tokenizer_file(const std::vector<std::string>& pieces, const std::vector<float>& scores, int max_len = 16) {
  Bytes b;
  put_i32(b, max_len);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::uint8_t p[4];
    std::memcpy(p, &scores[i], 4);
    b.insert(b.end(), p, p + 4);
    put_i32(b, static_cast<std::int32_t>(pieces[i].size()));
    b.insert(b.end(), pieces[i].begin(), pieces[i].end());
  }
  return b;
}

inline Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

}  // namespace llama_support
