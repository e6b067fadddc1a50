#include "attnlens/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "checks.hpp"
#include "dispatch.hpp"
#include "kernels/blocked.hpp"
#include "kernels/softmax.hpp"
#include "parallel.hpp"
#include "workspace.hpp"

namespace attnlens {

float default_scale(std::size_t d_k) { return 1.0f / std::sqrt(static_cast<float>(d_k)); }

namespace {

// Shape, inputs and options: everything that does not depend on the caller's result buffers.
// `needs_v`: false for a weights-only call, where v may be empty (and is checked when given).
std::string check_inputs(const AttentionShape& s, const AttentionInputs& in,
                         const AttentionOptions& options, bool needs_v = true) {
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
  if (needs_v || !in.v.empty())
    if (auto m = checks::length("v", in.v.size, nk_dv, "heads*n_k*d_v"); !m.empty()) return m;
  if (!options.key_mask.empty())
    if (auto m = checks::length("key_mask", options.key_mask.size, s.n_k, "n_k"); !m.empty())
      return m;
  if (options.scale)
    if (auto m = checks::scale(*options.scale); !m.empty()) return m;
  if (!in.q.data || !in.k.data) return "q and k must not be null";
  if (auto m = checks::not_null("v", in.v); !m.empty()) return m;
  return checks::not_null("key_mask", options.key_mask);
}

std::string check_outputs(const AttentionShape& s, const AttentionOutputs& out) {
  const std::size_t nq_dv = s.heads * s.n_q * s.d_v, nq_nk = s.heads * s.n_q * s.n_k;
  if (out.output.empty() && out.weights.empty() && out.scores.empty())
    return "output, weights and scores are all empty: at least one result buffer is needed";
  for (auto [name, buffer, want, shape] :
       {std::tuple{"output", out.output, nq_dv, "heads*n_q*d_v"},
        {"weights", out.weights, nq_nk, "heads*n_q*n_k"},
        {"scores", out.scores, nq_nk, "heads*n_q*n_k"}}) {
    if (buffer.empty()) continue;
    if (auto m = checks::length(name, buffer.size, want, shape); !m.empty()) return m;
    if (auto m = checks::not_null(name, buffer); !m.empty()) return m;
  }
  return {};
}

}  // namespace

std::string check_attention(const AttentionShape& s, const AttentionInputs& in,
                            const AttentionOptions& options, const AttentionOutputs& out) {
  if (auto m = check_inputs(s, in, options, !out.output.empty()); !m.empty()) return m;
  return check_outputs(s, out);  // products are known not to overflow here
}

namespace {

// Everything one call needs, per head pointers aside.
struct Call {
  std::size_t n_q, n_k, d_k, d_v;
  float scale;
  bool causal;
  const std::uint8_t* key_mask;  // n_k bytes or null
  const float* key_bias;         // n_k floats, 0 (keep) or −inf (drop), or null
};

// A query row whose scores overflowed float (±inf, or NaN from inf − inf) is redone on its own
// with the plain row softmax, which gives infinite scores equal shares; rare, so unhurried.
// `weights_row` and `out_row` may each be null (not asked for).
template <class Arch>
void redo_row(const Call& c, std::size_t i, const float* q, const float* k, const float* v,
              float* row, float* weights_row, float* out_row) {
  for (std::size_t j = 0; j < c.n_k; ++j) {
    float dot = 0;
    for (std::size_t p = 0; p < c.d_k; ++p) dot += q[i * c.d_k + p] * k[j * c.d_k + p];
    row[j] = dot;
  }
  const std::size_t visible = c.causal ? std::min(i + 1, c.n_k) : c.n_k;
  kernels::masked_softmax_row<Arch>(row, c.n_k, visible, c.key_mask, c.scale);
  if (weights_row) std::memcpy(weights_row, row, c.n_k * sizeof(float));
  if (!out_row) return;
  for (std::size_t p = 0; p < c.d_v; ++p) out_row[p] = 0.0f;
  for (std::size_t j = 0; j < c.n_k; ++j)
    if (row[j] != 0.0f)
      for (std::size_t p = 0; p < c.d_v; ++p) out_row[p] += row[j] * v[j * c.d_v + p];
}

// Per head: K packed into key panels once; then for each block of Bq queries (Qᵀ packed):
//   output only  — one pass over key blocks of Bk with an online softmax (running max m, sum l;
//                  the output accumulated so far is rescaled by α inside the P·V tiles), so the
//                  scratch is O(Bk·Bq) whatever n is;
//   with weights — scores of the whole query block (O(n·Bq) scratch), exact max, exp, normalise,
//                  write the weights out in row order, then P·V (skipped, with V's packing,
//                  when no output is asked for: the weights-only path).
// Under a causal mask, key blocks after the block's last query are never touched.
// Work items are (head, query block) pairs, numbered h·blocks + b; a thread runs a contiguous
// range of them (parallel.hpp) with its own scratch, packing a head's keys (and values) when its
// range enters that head. Every item is computed the same way whichever thread runs it.
template <class Arch>
void attention_items(const AttentionShape& s, const AttentionInputs& in, const Call& c,
                     const AttentionOutputs& out, std::size_t item_begin, std::size_t item_end) {
  using B = kernels::blocking<Arch>;
  constexpr std::size_t Bq = B::Bq, Bk = B::Bk;
  using kernels::Accumulate;
  using kernels::round_up;
  const bool two_pass = !out.weights.empty() || !out.scores.empty();
  const bool with_output = !out.output.empty();  // else two_pass (check_outputs)
  const std::size_t n_kp = round_up(c.n_k, B::MK);
  const std::size_t dvp = round_up(c.d_v, B::value_cols);
  const bool pack_v = with_output && dvp != c.d_v;

  // Every per-block step is a function of its own (see ATTNLENS_OUT_OF_LINE): called many times
  // per call, each gets V8's optimised code during the first call, where code inlined here would
  // stay in the baseline compiler's until the next call.
  ATTNLENS_OUT_OF_LINE(kernels::pack_keys<Arch, B::MK>);
  ATTNLENS_OUT_OF_LINE(kernels::pack_queries_t<Arch, Bq>);
  ATTNLENS_OUT_OF_LINE(kernels::mask_block<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::block_max<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::exp_block<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::online_softmax_block<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::scale_columns<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::store_transposed<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::qk_block<Arch>);
  ATTNLENS_OUT_OF_LINE(kernels::pv_block<Arch>);

  Workspace& ws = Workspace::local();
  float* kp = ws.key_t.get(n_kp * c.d_k);
  float* vp = pack_v ? ws.values.get(c.n_k * dvp) : nullptr;
  float* qt = ws.queries.get(c.d_k * Bq);
  float* st = ws.scores.get((two_pass ? n_kp : Bk) * Bq);
  float* ob = with_output ? ws.out_block.get(Bq * dvp) : nullptr;
  float* stats = ws.stats.get(4 * Bq);
  float *m = stats, *l = stats + Bq, *alpha = stats + 2 * Bq, *m_new = stats + 3 * Bq;
  float* row = nullptr;  // for redo_row, allocated on first need

  const std::size_t blocks = (c.n_q + Bq - 1) / Bq;
  std::size_t packed_head = s.heads;  // none yet
  for (std::size_t item = item_begin; item < item_end; ++item) {
    const std::size_t h = item / blocks, q0 = (item % blocks) * Bq;
    const float* q = in.q.data + h * c.n_q * c.d_k;
    const float* k = in.k.data + h * c.n_k * c.d_k;
    const float* v = with_output ? in.v.data + h * c.n_k * c.d_v : nullptr;
    float* o = with_output ? out.output.data + h * c.n_q * c.d_v : nullptr;
    float* weights = out.weights.empty() ? nullptr : out.weights.data + h * c.n_q * c.n_k;
    float* scores = out.scores.empty() ? nullptr : out.scores.data + h * c.n_q * c.n_k;
    if (packed_head != h) {
      kernels::pack_keys<Arch, B::MK>(k, c.n_k, c.d_k, kp);
      if (pack_v) kernels::pack_values(v, c.n_k, c.d_v, dvp, vp);
      packed_head = h;
    }
    const float* vv = pack_v ? vp : v;
    {
      const std::size_t rows = std::min(Bq, c.n_q - q0);
      const std::size_t lanes = round_up(rows, B::query_cols);  // columns of S̃ computed
      const std::size_t pv_rows = round_up(rows, B::MQ);
      // Keys any query of the block can see: the rest of a causal row is never computed.
      const std::size_t key_end = c.causal ? std::min(c.n_k, q0 + rows) : c.n_k;
      kernels::pack_queries_t<Arch, Bq>(q + q0 * c.d_k, rows, c.d_k, qt);
      auto needs_mask = [&](std::size_t kb0, std::size_t len) {
        return c.key_bias || (c.causal && kb0 + len - 1 > q0);
      };
      auto mask = [&](float* block, std::size_t kb0, std::size_t len) {
        kernels::mask_block<Arch>(block, len, c.key_bias ? c.key_bias + kb0 : nullptr, c.causal,
                                  kb0, q0);
      };
      for (std::size_t i = 0; i < Bq; ++i) m[i] = kernels::neg_inf, l[i] = 0.0f;

      if (!two_pass) {
        for (std::size_t kb0 = 0; kb0 < key_end; kb0 += Bk) {
          const std::size_t len = std::min(Bk, key_end - kb0);
          std::copy(m, m + lanes, m_new);
          if (needs_mask(kb0, len)) {
            kernels::qk_block<Arch>(len, lanes, c.d_k, kp + kb0 * c.d_k, qt, st, nullptr);
            mask(st, kb0, len);
            kernels::block_max<Arch>(st, len, lanes, m_new);
          } else {
            kernels::qk_block<Arch>(len, lanes, c.d_k, kp + kb0 * c.d_k, qt, st, m_new);
          }
          kernels::online_softmax_block<Arch>(st, len, lanes, c.scale, m, m_new, l, alpha);
          kernels::pv_block<Arch>(len, pv_rows, dvp, st, vv + kb0 * dvp, ob, alpha,
                                  kb0 == 0 ? Accumulate::zero : Accumulate::rescale);
        }
        for (std::size_t i = 0; i < rows; ++i) alpha[i] = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
      } else {
        // Raw scores of every key (all of them when `scores` is asked for), the visible ones
        // masked, and the exact max of each query.
        const std::size_t score_end = scores ? c.n_k : key_end;
        for (std::size_t kb0 = 0; kb0 < score_end; kb0 += Bk) {
          const std::size_t len = std::min(Bk, score_end - kb0);
          float* block = st + kb0 * Bq;
          const std::size_t visible = kb0 < key_end ? std::min(len, key_end - kb0) : 0;
          // Fused max only when the whole block is visible and nothing in it is masked.
          const bool fused = visible == len && !needs_mask(kb0, len);
          kernels::qk_block<Arch>(len, lanes, c.d_k, kp + kb0 * c.d_k, qt, block,
                                  fused ? m : nullptr);
          if (scores)
            kernels::store_transposed<Arch>(block, len, rows, scores + q0 * c.n_k + kb0, c.n_k);
          if (fused || visible == 0) continue;
          if (needs_mask(kb0, visible)) mask(block, kb0, visible);
          kernels::block_max<Arch>(block, visible, lanes, m);
        }
        kernels::exp_block<Arch>(st, key_end, lanes, m, c.scale, l);
        for (std::size_t i = 0; i < lanes; ++i) alpha[i] = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
        kernels::scale_columns<Arch>(st, key_end, lanes, alpha);
        if (weights) {
          float* w = weights + q0 * c.n_k;
          kernels::store_transposed<Arch>(st, key_end, rows, w, c.n_k);
          if (key_end < c.n_k)
            for (std::size_t i = 0; i < rows; ++i)
              std::fill(w + i * c.n_k + key_end, w + (i + 1) * c.n_k, 0.0f);
        }
        for (std::size_t kb0 = 0; with_output && kb0 < key_end; kb0 += Bk) {
          const std::size_t len = std::min(Bk, key_end - kb0);
          kernels::pv_block<Arch>(len, pv_rows, dvp, st + kb0 * Bq, vv + kb0 * dvp, ob, alpha,
                                  kb0 == 0 ? Accumulate::zero : Accumulate::load);
        }
        for (std::size_t i = 0; i < rows; ++i) alpha[i] = 1.0f;  // already normalised
      }

      for (std::size_t i = 0; i < rows; ++i) {
        float* dst = o ? o + (q0 + i) * c.d_v : nullptr;
        if (!std::isfinite(l[i]) || m[i] == std::numeric_limits<float>::infinity() ||
            std::isnan(m[i])) {
          if (!row) row = ws.row.get(c.n_k);
          redo_row<Arch>(c, q0 + i, q, k, v, row, weights ? weights + (q0 + i) * c.n_k : nullptr,
                         dst);
          continue;
        }
        if (!dst) continue;
        const float* src = ob + i * dvp;
        const float f = alpha[i];
        for (std::size_t p = 0; p < c.d_v; ++p) dst[p] = src[p] * f;
      }
    }
  }
}

// The smallest chunk of items handed to a thread (parallel::for_chunks hands out guided chunks,
// large first): no chunk under kMinChunkFlops, and calls under kMinSplitFlops in all (~1.5 ms in
// one wasm thread here) run serially (min chunk = items): waking a worker costs tens of µs when
// its core is free, much more when other processes hold it (measured with h = 8, n = 128,
// 34 MFLOP: 2 threads were slower than one on this shared 2-core machine).
constexpr double kMinChunkFlops = 4e6, kMinSplitFlops = 48e6;

std::size_t min_items_per_chunk(const AttentionShape& s, const Call& c, const AttentionOutputs& out,
                                std::size_t bq, std::size_t items) {
  if (parallel::threads() <= 1) return items;
  // Q·Kᵀ over the keys a block sees (half of them, on average, under a causal mask), plus P·V.
  const double keys = c.causal ? 0.5 * static_cast<double>(std::min(s.n_q, s.n_k)) : double(s.n_k);
  const double per_item = 2.0 * double(bq) * keys * double(c.d_k + (out.output.empty() ? 0 : c.d_v));
  if (per_item * double(items) < kMinSplitFlops) return items;
  return static_cast<std::size_t>(kMinChunkFlops / std::max(per_item, 1.0)) + 1;
}

}  // namespace

void attention(const AttentionShape& shape, const AttentionInputs& in,
               const AttentionOptions& options, const AttentionOutputs& out, Kernel kernel) {
  throw_if(check_attention(shape, in, options, out));
  Call c{shape.n_q, shape.n_k, shape.d_k, shape.d_v,
         options.scale.value_or(default_scale(shape.d_k)), options.causal,
         options.key_mask.empty() ? nullptr : options.key_mask.data, nullptr};
  Workspace& ws = Workspace::local();
  CallScope scope(ws);
  if (c.key_mask) {
    float* bias = ws.key_bias.get(shape.n_k);
    for (std::size_t j = 0; j < shape.n_k; ++j) bias[j] = c.key_mask[j] ? 0.0f : kernels::neg_inf;
    c.key_bias = bias;
  }
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    using B = kernels::blocking<Arch>;
    const std::size_t blocks = (shape.n_q + B::Bq - 1) / B::Bq, items = shape.heads * blocks;
    parallel::for_chunks(items, min_items_per_chunk(shape, c, out, B::Bq, items),
                         [&](std::size_t begin, std::size_t end) {
                           attention_items<Arch>(shape, in, c, out, begin, end);
                         });
  });
}

AttentionResult attention(const AttentionShape& shape, const AttentionInputs& in,
                          const AttentionOptions& options, bool return_scores, Kernel kernel) {
  // Validate before sizing the results: a huge shape with short inputs is an Error, not bad_alloc.
  throw_if(check_inputs(shape, in, options));
  AttentionResult r;
  const std::size_t nn = shape.heads * shape.n_q * shape.n_k;
  const std::size_t no = shape.heads * shape.n_q * shape.d_v;
  r.output.resize(no);
  r.weights.resize(nn);
  if (return_scores) r.scores.resize(nn);
  attention(shape, in, options, {r.output, r.weights, Span<float>(r.scores)}, kernel);
  return r;
}

}  // namespace attnlens
