// The only file that knows about Emscripten. Buffers live on the wasm heap: the JavaScript layer
// (web/engine/) validates arguments, copies inputs in, calls these functions with byte offsets,
// copies results out and frees. Each call returns "" or an error message for JS to throw, since
// the module is built without C++ exceptions.
#include <emscripten/bind.h>
#include <malloc.h>

#include <cstdint>
#include <string>

#include "attnlens/attention.hpp"
#include "attnlens/kernel.hpp"
#include "attnlens/multi_head.hpp"
#include "attnlens/probe.hpp"

namespace {

using attnlens::Span;

template <class T>
Span<T> span(std::uintptr_t address, std::size_t size) {
  return address ? Span<T>(reinterpret_cast<T*>(address), size) : Span<T>();
}

attnlens::Kernel kernel(bool simd) { return simd ? attnlens::Kernel::simd : attnlens::Kernel::scalar; }

// Offsets are byte addresses on the wasm heap; 0 means "not given".
struct AttentionCall {
  std::uintptr_t q = 0, k = 0, v = 0, key_mask = 0, output = 0, weights = 0, scores = 0;
  std::size_t heads = 1, n_q = 0, n_k = 0, d_k = 0, d_v = 0;
  float scale = 0;
  bool causal = false, simd = true;
};

std::string attention(const AttentionCall& c) {
  const attnlens::AttentionShape shape{c.heads, c.n_q, c.n_k, c.d_k, c.d_v};
  const std::size_t nn = c.heads * c.n_q * c.n_k;
  const attnlens::AttentionInputs in{span<const float>(c.q, c.heads * c.n_q * c.d_k),
                                     span<const float>(c.k, c.heads * c.n_k * c.d_k),
                                     span<const float>(c.v, c.heads * c.n_k * c.d_v)};
  attnlens::AttentionOptions options;
  options.scale = c.scale;
  options.causal = c.causal;
  options.key_mask = span<const std::uint8_t>(c.key_mask, c.n_k);
  const attnlens::AttentionOutputs out{span<float>(c.output, c.heads * c.n_q * c.d_v),
                                       span<float>(c.weights, nn), span<float>(c.scores, nn)};
  std::string error = attnlens::check_attention(shape, in, options, out);
  if (error.empty()) attnlens::attention(shape, in, options, out, kernel(c.simd));
  return error;
}

struct MultiHeadCall {
  std::uintptr_t x_q = 0, x_kv = 0, w_q = 0, w_k = 0, w_v = 0, w_o = 0;
  std::uintptr_t b_q = 0, b_k = 0, b_v = 0, b_o = 0, key_mask = 0, output = 0, weights = 0;
  std::size_t n_q = 0, n_k = 0, d_model = 0, heads = 1;
  float scale = 0;
  bool causal = false, simd = true;
};

std::string multi_head(const MultiHeadCall& c) {
  const std::size_t dm = c.d_model, n_k = c.x_kv ? c.n_k : c.n_q;
  const attnlens::MultiHeadShape shape{c.n_q, n_k, dm, c.heads};
  attnlens::MultiHeadInputs in;
  in.x_q = span<const float>(c.x_q, c.n_q * dm);
  in.x_kv = span<const float>(c.x_kv, n_k * dm);
  in.w_q = span<const float>(c.w_q, dm * dm);
  in.w_k = span<const float>(c.w_k, dm * dm);
  in.w_v = span<const float>(c.w_v, dm * dm);
  in.w_o = span<const float>(c.w_o, dm * dm);
  in.b_q = span<const float>(c.b_q, dm);
  in.b_k = span<const float>(c.b_k, dm);
  in.b_v = span<const float>(c.b_v, dm);
  in.b_o = span<const float>(c.b_o, dm);
  attnlens::AttentionOptions options;
  if (c.scale > 0) options.scale = c.scale;
  options.causal = c.causal;
  options.key_mask = span<const std::uint8_t>(c.key_mask, n_k);
  const attnlens::MultiHeadOutputs out{span<float>(c.output, c.n_q * dm),
                                       span<float>(c.weights, c.heads * c.n_q * n_k)};
  std::string error = attnlens::check_multi_head(shape, in, options, out);
  if (error.empty()) attnlens::multi_head_attention(shape, in, options, out, kernel(c.simd));
  return error;
}

std::string simd_arch() { return attnlens::simd_arch_name(); }

// Bytes handed out by malloc and not yet freed: the JS leak tests watch it.
std::size_t heap_in_use() { return mallinfo().uordblks; }

// Benchmarking aids (web/engine/lens.js: ceilingProbe(), lastCallBytes()).
float ceiling_probe(std::uint32_t iterations, bool fused) {
  return attnlens::ceiling_probe(iterations, fused ? attnlens::ProbeOp::fma : attnlens::ProbeOp::mul_add);
}
bool probe_has_fma() { return attnlens::probe_has_fma(); }
std::size_t last_call_scratch() { return attnlens::last_call_scratch_bytes(); }

// Index of the first NaN or ±inf among `count` floats at `address`, or -1. Blocks of 256 are
// scanned without branches (clang vectorises x − x == 0), the offending block one by one.
int first_non_finite(std::uintptr_t address, std::size_t count) {
  const float* x = reinterpret_cast<const float*>(address);
  for (std::size_t begin = 0; begin < count; begin += 256) {
    const std::size_t end = count - begin < 256 ? count : begin + 256;
    bool bad = false;
    for (std::size_t i = begin; i < end; ++i) bad |= !(x[i] - x[i] == 0.0f);
    if (bad)
      for (std::size_t i = begin; i < end; ++i)
        if (!(x[i] - x[i] == 0.0f)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
  using namespace emscripten;
  value_object<AttentionCall>("AttentionCall")
      .field("q", &AttentionCall::q)
      .field("k", &AttentionCall::k)
      .field("v", &AttentionCall::v)
      .field("keyMask", &AttentionCall::key_mask)
      .field("output", &AttentionCall::output)
      .field("weights", &AttentionCall::weights)
      .field("scores", &AttentionCall::scores)
      .field("heads", &AttentionCall::heads)
      .field("nQ", &AttentionCall::n_q)
      .field("nK", &AttentionCall::n_k)
      .field("dK", &AttentionCall::d_k)
      .field("dV", &AttentionCall::d_v)
      .field("scale", &AttentionCall::scale)
      .field("causal", &AttentionCall::causal)
      .field("simd", &AttentionCall::simd);
  value_object<MultiHeadCall>("MultiHeadCall")
      .field("xQ", &MultiHeadCall::x_q)
      .field("xKV", &MultiHeadCall::x_kv)
      .field("wQ", &MultiHeadCall::w_q)
      .field("wK", &MultiHeadCall::w_k)
      .field("wV", &MultiHeadCall::w_v)
      .field("wO", &MultiHeadCall::w_o)
      .field("bQ", &MultiHeadCall::b_q)
      .field("bK", &MultiHeadCall::b_k)
      .field("bV", &MultiHeadCall::b_v)
      .field("bO", &MultiHeadCall::b_o)
      .field("keyMask", &MultiHeadCall::key_mask)
      .field("output", &MultiHeadCall::output)
      .field("weights", &MultiHeadCall::weights)
      .field("nQ", &MultiHeadCall::n_q)
      .field("nK", &MultiHeadCall::n_k)
      .field("dModel", &MultiHeadCall::d_model)
      .field("heads", &MultiHeadCall::heads)
      .field("scale", &MultiHeadCall::scale)
      .field("causal", &MultiHeadCall::causal)
      .field("simd", &MultiHeadCall::simd);
  function("attention", &attention);
  function("multiHead", &multi_head);
  function("simdArch", &simd_arch);
  function("heapInUse", &heap_in_use);
  function("ceilingProbe", &ceiling_probe);
  function("probeHasFma", &probe_has_fma);
  function("lastCallScratch", &last_call_scratch);
  function("firstNonFinite", &first_non_finite);
}

#ifdef ATTNLENS_WITH_MODEL
// ---- USE-lite, for the opt-in module web/dist/attnlens-model.* (web/model/index.js) ----------
// One model per module instance: the JS layer instantiates a module for each model it loads.
// Results stay on the heap until the next call; JS copies them out at once.
#include <memory>
#include <vector>

#include "attnlens/model/use_lite.hpp"

namespace {

struct LoadedModel {
  attnlens::model::ModelFile file;  // views into `bytes`
  attnlens::model::UseLite model;
  attnlens::model::UseLiteOutput out;
  std::string token_text;
  std::vector<std::uint32_t> token_offsets;
};
LoadedModel* loaded_model = nullptr;

// On success the model keeps (and reads in place) the `size` malloc'ed bytes at `bytes`; on
// failure they stay the caller's to free.
std::string model_load(std::uintptr_t bytes, std::size_t size) {
  if (loaded_model) return "this module already holds a model";
  auto m = std::make_unique<LoadedModel>();
  std::string error = attnlens::model::parse_model_file(span<const std::uint8_t>(bytes, size), m->file);
  if (error.empty()) error = m->model.load(m->file);
  if (error.empty()) loaded_model = m.release();
  return error;
}

struct ModelInfo {
  std::size_t max_tokens = attnlens::model::UseLite::max_tokens;
  std::size_t layers = attnlens::model::UseLite::layer_count;
  std::size_t heads = attnlens::model::UseLite::heads;
  std::size_t embedding_size = attnlens::model::UseLite::embedding_size;
  std::size_t vocab_size = 0;
};

ModelInfo model_info() {
  ModelInfo info;
  if (loaded_model) info.vocab_size = loaded_model->model.tokenizer().size();
  return info;
}

// Byte addresses of one call's results (0 when absent).
struct ModelCall {
  std::string error;
  std::size_t tokens = 0, total = 0;
  bool clipped = false;
  std::uintptr_t ids = 0, text = 0, offsets = 0, embedding = 0;
};

// Tokenises the `size` UTF-8 bytes at `text`; with `forward`, also runs the encoder.
ModelCall model_call(std::uintptr_t text, std::size_t size, bool forward) {
  ModelCall c;
  LoadedModel* m = loaded_model;
  if (!m) {
    c.error = "no model is loaded";
    return c;
  }
  const std::string_view input(reinterpret_cast<const char*>(text), size);
  auto& enc = m->out.encoding;
  if (forward) {
    c.error = m->model.run(input, m->out);
    if (!c.error.empty()) return c;
    c.embedding = reinterpret_cast<std::uintptr_t>(m->out.embedding.data());
  } else {
    enc = m->model.tokenizer().encode(input, attnlens::model::UseLite::max_tokens);
  }
  m->token_text.clear();
  m->token_offsets.assign(1, 0);
  for (const auto& t : enc.tokens) {
    m->token_text += t;
    m->token_offsets.push_back(static_cast<std::uint32_t>(m->token_text.size()));
  }
  c.tokens = enc.ids.size();
  c.total = enc.total;
  c.clipped = enc.clipped;
  c.ids = reinterpret_cast<std::uintptr_t>(enc.ids.data());
  c.text = reinterpret_cast<std::uintptr_t>(m->token_text.data());
  c.offsets = reinterpret_cast<std::uintptr_t>(m->token_offsets.data());
  return c;
}

// Layer `layer`'s attention weights [heads, n, n] from the last forward call.
std::uintptr_t model_attention(std::size_t layer) {
  if (!loaded_model || layer >= loaded_model->out.attention.size()) return 0;
  return reinterpret_cast<std::uintptr_t>(loaded_model->out.attention[layer].data());
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_model) {
  using namespace emscripten;
  value_object<ModelInfo>("ModelInfo")
      .field("maxTokens", &ModelInfo::max_tokens)
      .field("layers", &ModelInfo::layers)
      .field("heads", &ModelInfo::heads)
      .field("embeddingSize", &ModelInfo::embedding_size)
      .field("vocabSize", &ModelInfo::vocab_size);
  value_object<ModelCall>("ModelCall")
      .field("error", &ModelCall::error)
      .field("tokens", &ModelCall::tokens)
      .field("total", &ModelCall::total)
      .field("clipped", &ModelCall::clipped)
      .field("ids", &ModelCall::ids)
      .field("text", &ModelCall::text)
      .field("offsets", &ModelCall::offsets)
      .field("embedding", &ModelCall::embedding);
  function("modelLoad", &model_load);
  function("modelInfo", &model_info);
  function("modelCall", &model_call);
  function("modelAttention", &model_attention);
}
#endif  // ATTNLENS_WITH_MODEL
