#include "attnlens/multi_head.hpp"

#include <cmath>
#include <cstring>

#include "attnlens/ops.hpp"
#include "checks.hpp"
#include "workspace.hpp"

namespace attnlens {

namespace {

bool self_attention(const MultiHeadInputs& in) { return in.x_kv.empty(); }

std::size_t keys(const MultiHeadShape& s, const MultiHeadInputs& in) {
  return self_attention(in) ? s.n_q : s.n_k;
}

std::string optional_length(const char* name, Span<const float> buffer, std::size_t want,
                            const char* shape) {
  return buffer.empty() ? std::string() : checks::length(name, buffer.size, want, shape);
}

// [n, heads·d] (columns grouped by head) → [heads, n, d], and back.
void split_heads(const float* x, std::size_t n, std::size_t heads, std::size_t d, float* out) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(out + (h * n + i) * d, x + i * heads * d + h * d, d * sizeof(float));
}
void merge_heads(const float* x, std::size_t n, std::size_t heads, std::size_t d, float* out) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(out + i * heads * d + h * d, x + (h * n + i) * d, d * sizeof(float));
}

}  // namespace

std::string check_multi_head(const MultiHeadShape& s, const MultiHeadInputs& in,
                             const AttentionOptions& options, const MultiHeadOutputs& out) {
  if (auto m = checks::positive("n_q", s.n_q); !m.empty()) return m;
  if (!self_attention(in))
    if (auto m = checks::positive("n_k", s.n_k); !m.empty()) return m;
  if (auto m = checks::positive("d_model", s.d_model); !m.empty()) return m;
  if (auto m = checks::positive("heads", s.heads); !m.empty()) return m;
  if (s.d_model % s.heads != 0)
    return "heads (" + std::to_string(s.heads) + ") must divide d_model (" +
           std::to_string(s.d_model) + ")";
  const std::size_t n_k = keys(s, in);
  const std::size_t xq = checks::product(s.n_q, s.d_model), xkv = checks::product(n_k, s.d_model);
  const std::size_t w = checks::product(s.d_model, s.d_model);
  const std::size_t a = checks::product(s.heads, s.n_q, n_k);
  if (!xq || !xkv || !w || !a) return checks::too_large("multi-head shape");
  if (auto m = checks::length("x_q", in.x_q.size, xq, "n_q*d_model"); !m.empty()) return m;
  if (auto m = optional_length("x_kv", in.x_kv, xkv, "n_k*d_model"); !m.empty()) return m;
  // Without an output (weights only) the value and output projections are not used.
  const bool with_output = !out.output.empty();
  if (!with_output && out.weights.empty())
    return "output and weights are both empty: at least one result buffer is needed";
  for (auto [name, buffer] : {std::pair{"w_q", in.w_q}, {"w_k", in.w_k}})
    if (auto m = checks::length(name, buffer.size, w, "d_model*d_model"); !m.empty()) return m;
  if (auto m = with_output ? checks::length("w_v", in.w_v.size, w, "d_model*d_model")
                           : optional_length("w_v", in.w_v, w, "d_model*d_model");
      !m.empty())
    return m;
  if (auto m = optional_length("w_o", in.w_o, w, "d_model*d_model"); !m.empty()) return m;
  for (auto [name, buffer] :
       {std::pair{"b_q", in.b_q}, {"b_k", in.b_k}, {"b_v", in.b_v}, {"b_o", in.b_o}})
    if (auto m = optional_length(name, buffer, s.d_model, "d_model"); !m.empty()) return m;
  if (!in.b_o.empty() && in.w_o.empty()) return "b_o needs w_o";
  if (with_output)
    if (auto m = checks::length("output", out.output.size, xq, "n_q*d_model"); !m.empty())
      return m;
  if (!out.weights.empty())
    if (auto m = checks::length("weights", out.weights.size, a, "heads*n_q*n_k"); !m.empty())
      return m;
  if (!options.key_mask.empty())
    if (auto m = checks::length("key_mask", options.key_mask.size, n_k, "n_k"); !m.empty())
      return m;
  if (options.scale)
    if (auto m = checks::scale(*options.scale); !m.empty()) return m;
  for (auto [name, buffer] :
       {std::pair{"x_q", in.x_q}, {"x_kv", in.x_kv}, {"w_q", in.w_q}, {"w_k", in.w_k},
        {"w_v", in.w_v}, {"w_o", in.w_o}, {"b_q", in.b_q}, {"b_k", in.b_k}, {"b_v", in.b_v},
        {"b_o", in.b_o}})
    if (auto m = checks::not_null(name, buffer); !m.empty()) return m;
  for (auto [name, buffer] : {std::pair{"output", out.output}, {"weights", out.weights}})
    if (auto m = checks::not_null(name, buffer); !m.empty()) return m;
  if (auto m = checks::not_null("key_mask", options.key_mask); !m.empty()) return m;
  return {};
}

void multi_head_attention(const MultiHeadShape& s, const MultiHeadInputs& in,
                          const AttentionOptions& options, const MultiHeadOutputs& out,
                          Kernel kernel) {
  throw_if(check_multi_head(s, in, options, out));
  const std::size_t n_q = s.n_q, n_k = keys(s, in), dm = s.d_model, d = dm / s.heads;
  const Span<const float> x_kv = self_attention(in) ? in.x_q : in.x_kv;
  auto bias = [](Span<const float> b) { return b.empty() ? nullptr : b.data; };

  Workspace& ws = Workspace::local();
  CallScope scope(ws);
  float* projected = ws.projected.get(std::max(n_q, n_k) * dm);
  float* q = ws.q_heads.get(n_q * dm);
  float* k = ws.k_heads.get(n_k * dm);
  matmul(n_q, dm, dm, in.x_q.data, in.w_q.data, projected, bias(in.b_q), kernel);
  split_heads(projected, n_q, s.heads, d, q);
  matmul(n_k, dm, dm, x_kv.data, in.w_k.data, projected, bias(in.b_k), kernel);
  split_heads(projected, n_k, s.heads, d, k);
  AttentionOptions head_options = options;
  if (!head_options.scale) head_options.scale = default_scale(d);
  if (out.output.empty()) {  // weights only: no V projection, no A·V, no output projection
    attention({s.heads, n_q, n_k, d, d}, {{q, n_q * dm}, {k, n_k * dm}, {}}, head_options,
              {{}, out.weights, {}}, kernel);
    return;
  }
  float* v = ws.v_heads.get(n_k * dm);
  matmul(n_k, dm, dm, x_kv.data, in.w_v.data, projected, bias(in.b_v), kernel);
  split_heads(projected, n_k, s.heads, d, v);

  float* o = ws.o_heads.get(n_q * dm);
  attention({s.heads, n_q, n_k, d, d}, {{q, n_q * dm}, {k, n_k * dm}, {v, n_k * dm}},
            head_options, {{o, n_q * dm}, out.weights, {}}, kernel);

  if (in.w_o.empty()) {
    merge_heads(o, n_q, s.heads, d, out.output.data);
  } else {
    merge_heads(o, n_q, s.heads, d, projected);
    matmul(n_q, dm, dm, projected, in.w_o.data, out.output.data, bias(in.b_o), kernel);
  }
}

}  // namespace attnlens
