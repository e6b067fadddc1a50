#include "attnlens/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "checks.hpp"
#include "dispatch.hpp"
#include "kernels/gemm.hpp"
#include "kernels/softmax.hpp"
#include "workspace.hpp"

namespace attnlens {

float default_scale(std::size_t d_k) { return 1.0f / std::sqrt(static_cast<float>(d_k)); }

std::string check_attention(const AttentionShape& s, const AttentionInputs& in,
                            const AttentionOptions& options, const AttentionOutputs& out) {
  for (auto [name, value] : {std::pair{"heads", s.heads}, {"n_q", s.n_q}, {"n_k", s.n_k},
                             {"d_k", s.d_k}, {"d_v", s.d_v}})
    if (auto m = checks::positive(name, value); !m.empty()) return m;
  const std::size_t nq_dk = checks::product(s.heads, s.n_q, s.d_k);
  const std::size_t nk_dk = checks::product(s.heads, s.n_k, s.d_k);
  const std::size_t nk_dv = checks::product(s.heads, s.n_k, s.d_v);
  const std::size_t nq_dv = checks::product(s.heads, s.n_q, s.d_v);
  const std::size_t nq_nk = checks::product(s.heads, s.n_q, s.n_k);
  if (!nq_dk || !nk_dk || !nk_dv || !nq_dv || !nq_nk) return checks::too_large("attention shape");
  if (auto m = checks::length("q", in.q.size, nq_dk, "heads*n_q*d_k"); !m.empty()) return m;
  if (auto m = checks::length("k", in.k.size, nk_dk, "heads*n_k*d_k"); !m.empty()) return m;
  if (auto m = checks::length("v", in.v.size, nk_dv, "heads*n_k*d_v"); !m.empty()) return m;
  if (auto m = checks::length("output", out.output.size, nq_dv, "heads*n_q*d_v"); !m.empty())
    return m;
  if (!out.weights.empty())
    if (auto m = checks::length("weights", out.weights.size, nq_nk, "heads*n_q*n_k"); !m.empty())
      return m;
  if (!out.scores.empty())
    if (auto m = checks::length("scores", out.scores.size, nq_nk, "heads*n_q*n_k"); !m.empty())
      return m;
  if (!options.key_mask.empty())
    if (auto m = checks::length("key_mask", options.key_mask.size, s.n_k, "n_k"); !m.empty())
      return m;
  if (options.scale)
    if (auto m = checks::scale(*options.scale); !m.empty()) return m;
  if (!in.q.data || !in.k.data || !in.v.data || !out.output.data)
    return "q, k, v and output must not be null";
  return {};
}

namespace {

void transpose(const float* src, std::size_t rows, std::size_t cols, float* dst) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

template <class Arch>
void attention_heads(const AttentionShape& s, const AttentionInputs& in, float scale, bool causal,
                     const std::uint8_t* key_mask, const AttentionOutputs& out) {
  Workspace& ws = Workspace::local();
  float* key_t = ws.key_t.get(s.d_k * s.n_k);
  const std::size_t nn = s.n_q * s.n_k;
  float* scratch_weights = out.weights.empty() ? ws.scores.get(nn) : nullptr;
  for (std::size_t h = 0; h < s.heads; ++h) {
    const float* q = in.q.data + h * s.n_q * s.d_k;
    const float* k = in.k.data + h * s.n_k * s.d_k;
    const float* v = in.v.data + h * s.n_k * s.d_v;
    float* o = out.output.data + h * s.n_q * s.d_v;
    float* w = scratch_weights ? scratch_weights : out.weights.data + h * nn;
    transpose(k, s.n_k, s.d_k, key_t);  // contiguous key columns for the QKᵀ tiles
    kernels::gemm<Arch>(s.n_q, s.n_k, s.d_k, q, s.d_k, key_t, s.n_k, w, s.n_k);
    if (!out.scores.empty()) std::memcpy(out.scores.data + h * nn, w, nn * sizeof(float));
    for (std::size_t i = 0; i < s.n_q; ++i) {
      const std::size_t visible = causal ? std::min(i + 1, s.n_k) : s.n_k;
      kernels::masked_softmax_row<Arch>(w + i * s.n_k, s.n_k, visible, key_mask, scale);
    }
    kernels::gemm<Arch>(s.n_q, s.d_v, s.n_k, w, s.n_k, v, s.d_v, o, s.d_v);
  }
}

}  // namespace

void attention(const AttentionShape& shape, const AttentionInputs& in,
               const AttentionOptions& options, const AttentionOutputs& out, Kernel kernel) {
  throw_if(check_attention(shape, in, options, out));
  const float scale = options.scale.value_or(default_scale(shape.d_k));
  const std::uint8_t* mask = options.key_mask.empty() ? nullptr : options.key_mask.data;
  dispatch(kernel, [&](auto arch) {
    attention_heads<decltype(arch)>(shape, in, scale, options.causal, mask, out);
  });
}

AttentionResult attention(const AttentionShape& shape, const AttentionInputs& in,
                          const AttentionOptions& options, bool return_scores, Kernel kernel) {
  AttentionResult r;
  const std::size_t nn = checks::product(shape.heads, shape.n_q, shape.n_k);
  const std::size_t no = checks::product(shape.heads, shape.n_q, shape.d_v);
  if (!nn || !no) throw_if(check_attention(shape, in, options, {}));
  r.output.resize(no);
  r.weights.resize(nn);
  if (return_scores) r.scores.resize(nn);
  attention(shape, in, options, {r.output, r.weights, Span<float>(r.scores)}, kernel);
  return r;
}

}  // namespace attnlens
