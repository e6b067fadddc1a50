// The only file that knows about Emscripten. Buffers live on the wasm heap: the JavaScript layer
// (web/engine/) validates arguments, copies inputs in, calls these functions with byte offsets,
// copies results out and frees. Each call returns "" or an error message for JS to throw, since
// the module is built without C++ exceptions.
#include <emscripten/bind.h>
#include <malloc.h>

#include <cstdint>
#include <string>

#include "attnlens/aggregate.hpp"
#include "attnlens/attention.hpp"
#include "attnlens/kernel.hpp"
#include "attnlens/multi_head.hpp"
#include "attnlens/probe.hpp"
#ifdef ATTNLENS_THREADS_MODULE
#include "attnlens/threads.hpp"
#endif

namespace {

using attnlens::Span;

template <class T>
Span<T> span(std::uintptr_t address, std::size_t size) {
  return address ? Span<T>(reinterpret_cast<T*>(address), size) : Span<T>();
}

attnlens::Kernel kernel(bool simd) { return simd ? attnlens::Kernel::simd : attnlens::Kernel::scalar; }

// The engine module of a SIMD build holds the SIMD kernels only (ATTNLENS_SIMD_ONLY,
// cpp/src/dispatch.hpp): a call asking it for the scalar ones is refused, never silently run.
std::string kernel_error([[maybe_unused]] bool simd) {
#ifdef ATTNLENS_SIMD_ONLY
  if (!simd) return "simd: false needs the scalar build: this module has the SIMD kernels only";
#endif
  return {};
}

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
  if (error.empty()) error = kernel_error(c.simd);
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
  if (error.empty()) error = kernel_error(c.simd);
  if (error.empty()) attnlens::multi_head_attention(shape, in, options, out, kernel(c.simd));
  return error;
}

std::string simd_arch() { return attnlens::simd_arch_name(); }

// Bytes handed out by malloc and not yet freed: the JS leak tests watch it.
std::size_t heap_in_use() { return mallinfo().uordblks; }
// The most the heap may grow to (-sMAXIMUM_MEMORY, CMakeLists.txt): 2 GiB for the engine modules,
// 4 GiB for the model modules. A double: 2^32 does not fit a 32-bit size_t.
double heap_limit() { return ATTNLENS_MAX_HEAP_BYTES; }

// Benchmarking aids (web/engine/lens.js: ceilingProbe(), lastCallBytes()).
// `chains`: 8, 12, 16 or 24 (web/engine/ceiling.js checks it first).
float ceiling_probe(std::uint32_t iterations, bool fused, int chains) {
  return attnlens::ceiling_probe(iterations, fused ? attnlens::ProbeOp::fma : attnlens::ProbeOp::mul_add, chains);
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
  function("heapLimit", &heap_limit);
  function("ceilingProbe", &ceiling_probe);
  function("probeHasFma", &probe_has_fma);
  // The register-tile choice of the relaxed build (web/engine/tiles.js).
  function("hasWideTiles", &attnlens::has_wide_tiles);
  function("setWideTiles", &attnlens::set_wide_tiles);
  function("wideTiles", &attnlens::wide_tiles);
  function("lastCallScratch", &last_call_scratch);
  function("firstNonFinite", &first_non_finite);
}

// ---- aggregation across heads and layers (web/engine/lens.js: aggregate(), rollout()) --------
namespace {

std::string aggregate_heads(std::uintptr_t weights, std::uintptr_t out, std::size_t heads,
                            std::size_t n_q, std::size_t n_k, bool max, bool simd) {
  const attnlens::AggregateShape shape{heads, n_q, n_k};
  const auto in = span<const float>(weights, heads * n_q * n_k);
  const auto result = span<float>(out, n_q * n_k);
  std::string error = attnlens::check_aggregate(shape, in, result);
  if (error.empty()) error = kernel_error(simd);
  if (error.empty())
    attnlens::aggregate_heads(shape, max ? attnlens::HeadAggregate::max : attnlens::HeadAggregate::mean,
                              in, result, kernel(simd));
  return error;
}

// One layer of the rollout product (JS copies in one layer at a time: memory stays heads·n²).
std::string rollout_layer(std::uintptr_t layer, std::uintptr_t r, std::uintptr_t scratch,
                          std::size_t heads, std::size_t n, float residual, bool first, bool simd) {
  const attnlens::RolloutShape shape{heads, n};
  const auto in = span<const float>(layer, heads * n * n);
  const auto product = span<float>(r, n * n);
  const auto room = span<float>(scratch, 2 * n * n);
  std::string error = attnlens::check_rollout_layer(shape, in, residual, product, room);
  if (error.empty()) error = kernel_error(simd);
  if (error.empty()) attnlens::rollout_layer(shape, in, residual, product, first, room, kernel(simd));
  return error;
}

double rollout_max_flops() { return attnlens::rollout_max_flops; }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_aggregate) {
  emscripten::function("aggregateHeads", &aggregate_heads);
  emscripten::function("rolloutLayer", &rollout_layer);
  emscripten::function("rolloutMaxFlops", &rollout_max_flops);
}

// Threads, in the -pthread build only: the JS layer sets the count once, after the module's worker
// pool has loaded (web/engine/threaded.js).
#ifdef ATTNLENS_THREADS_MODULE
EMSCRIPTEN_BINDINGS(attnlens_threads) {
  emscripten::function("setThreads", &attnlens::set_threads);
  emscripten::function("threads", &attnlens::threads);
  emscripten::function("maxThreads", &attnlens::max_threads);
  emscripten::function("lastCallChunks", +[]() { return static_cast<double>(attnlens::last_call_chunks()); });
}
#endif  // ATTNLENS_THREADS_MODULE

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

#ifdef ATTNLENS_WITH_MODEL
// ---- Transformer language models (GPT-2, BERT, the Llama family, stories260K), for
// web/model/llama.js. One language model per module instance, as for USE-lite. A Hugging Face
// checkpoint arrives in pieces (lmBeginHf, each safetensors file tensor by tensor, lmFinishHf) so
// that only one tensor's bytes sit on the heap beside the weights. Calls leave their results on the
// heap until the next call or lmRelease(); generation state (the KV cache) lives from lmBegin()
// to lmEnd(), which the JS layer always calls.
#include "attnlens/model/llama_tokenizer.hpp"
#include "attnlens/model/loader.hpp"
#include "attnlens/model/sampler.hpp"
#include "attnlens/model/transformer.hpp"

namespace {

namespace am = attnlens::model;

struct LoadedLm {
  am::Transformer net;
  am::LlamaTokenizer tokenizer;
  bool has_tokenizer = false;
  std::unique_ptr<am::TransformerState> session;  // between lmBegin and lmEnd
  am::Rng rng;
  std::vector<std::vector<float>> attention;  // lmRun: [layer][heads, n, n]
  std::vector<float> logits, hidden, probs;
  std::vector<std::int32_t> ids, candidates;
  std::vector<float> candidate_p;
  std::string text;
  std::vector<std::uint32_t> offsets;
  std::size_t last_scratch = 0;
};
LoadedLm* loaded_lm = nullptr;
std::unique_ptr<LoadedLm> pending_lm;  // a Hugging Face load in progress
am::HfLoader hf_loader;

std::size_t limit_of(double max_bytes) { return static_cast<std::size_t>(max_bytes > 0 ? max_bytes : 0); }

// A llama2.c checkpoint (the bytes stay the caller's: the weights are copied).
std::string lm_load_llama2c(std::uintptr_t model, std::size_t size, double max_bytes) {
  if (loaded_lm || loaded_model || pending_lm) return "this module already holds a model";
  auto m = std::make_unique<LoadedLm>();
  std::string error = am::load_llama2c(span<const std::uint8_t>(model, size), m->net, limit_of(max_bytes));
  if (error.empty()) loaded_lm = m.release();
  return error;
}

std::string lm_begin_hf(std::string config, double context) {
  if (loaded_lm || loaded_model || pending_lm) return "this module already holds a model";
  auto m = std::make_unique<LoadedLm>();
  std::string error = hf_loader.begin(config, m->net, limit_of(context));
  if (error.empty()) pending_lm = std::move(m);
  return error;
}

// Each shard tensor by tensor: lmShardBegin with the file's head (8 + header bytes) and size, then
// for each planned tensor (lmShardTensors, in file order) its bytes written to
// lmShardTensorBuffer(i) and taken by lmShardAddTensor(i): the heap holds the weights and one
// tensor, never a whole shard.
std::string lm_shard_begin(std::uintptr_t head, std::size_t size, double file_size, std::string name, double max_bytes) {
  if (!pending_lm) return "no load is in progress";
  std::string error = hf_loader.begin_shard(span<const std::uint8_t>(head, size), limit_of(file_size), name, limit_of(max_bytes));
  if (!error.empty()) pending_lm.reset();
  return error;
}

// The planned tensors' count and byte ranges [begin, end) in the file.
std::size_t lm_shard_tensors() { return pending_lm ? hf_loader.planned_tensors() : 0; }
double lm_shard_tensor_begin(std::size_t i) { return static_cast<double>(hf_loader.tensor_begin(i)); }
double lm_shard_tensor_end(std::size_t i) { return static_cast<double>(hf_loader.tensor_end(i)); }

std::uintptr_t lm_shard_tensor_buffer(std::size_t i) {
  return pending_lm ? reinterpret_cast<std::uintptr_t>(hf_loader.tensor_buffer(i)) : 0;
}

std::string lm_shard_add_tensor(std::size_t i) {
  if (!pending_lm) return "no load is in progress";
  std::string error = hf_loader.add_tensor(i);
  if (!error.empty()) pending_lm.reset();
  return error;
}

std::string lm_finish_hf() {
  if (!pending_lm) return "no load is in progress";
  std::string error = hf_loader.finish();
  if (error.empty()) loaded_lm = pending_lm.release();
  pending_lm.reset();
  return error;
}

// Drops a load in progress (after a shard could not be read).
void lm_abort_hf() { pending_lm.reset(); }

// A llama2.c tokenizer file for the loaded model (stories260K, llama2.c checkpoints).
std::string lm_set_tokenizer(std::uintptr_t bytes, std::size_t size) {
  if (!loaded_lm) return "no language model is loaded";
  std::string error = loaded_lm->tokenizer.load(span<const std::uint8_t>(bytes, size), loaded_lm->net.spec().vocab);
  loaded_lm->has_tokenizer = error.empty();
  return error;
}

struct LmInfo {
  std::string architecture, model_type, kind, rope;
  std::size_t dim = 0, hidden_dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::size_t vocab_size = 0, seq_len = 0, type_vocab = 0;
  bool shared_classifier = false, has_tokenizer = false;
};

LmInfo lm_info() {
  LmInfo info;
  if (!loaded_lm) return info;
  const am::Spec& c = loaded_lm->net.spec();
  info.architecture = c.architecture;
  info.model_type = c.model_type;
  info.kind = c.head == am::HeadKind::causal_lm ? "causal-lm" : c.head == am::HeadKind::masked_lm ? "masked-lm" : "encoder";
  info.rope = !c.rope ? "none" : c.rope_layout == am::RopeLayout::interleaved ? "interleaved" : "half";
  info.dim = c.dim, info.hidden_dim = c.ffn, info.layers = c.layers, info.heads = c.heads;
  info.kv_heads = c.kv_heads, info.head_dim = c.head_dim, info.vocab_size = c.vocab, info.seq_len = c.context;
  info.type_vocab = c.type_vocab;
  info.shared_classifier = c.tied_head;
  info.has_tokenizer = loaded_lm->has_tokenizer;
  return info;
}

struct LmMemory {
  double weights = 0, kv_cache = 0, scratch = 0;
};

LmMemory lm_memory() {
  LmMemory m;
  if (!loaded_lm) return m;
  m.weights = static_cast<double>(loaded_lm->net.weight_bytes());
  if (loaded_lm->session)
    m.kv_cache = static_cast<double>(am::cache_bytes(loaded_lm->net.spec(), loaded_lm->session->capacity));
  m.scratch = static_cast<double>(loaded_lm->last_scratch);
  return m;
}

// Addresses of a call's results (0 when absent).
struct LmCall {
  std::string error;
  std::size_t count = 0, logits_count = 0;
  std::uintptr_t ids = 0, text = 0, offsets = 0, logits = 0, hidden = 0, bytes = 0;
  std::size_t bytes_size = 0;
};

void lm_release() {
  if (!loaded_lm) return;
  LoadedLm& m = *loaded_lm;
  std::vector<std::vector<float>>().swap(m.attention);
  std::vector<float>().swap(m.logits);
  std::vector<float>().swap(m.hidden);
  std::vector<float>().swap(m.probs);
  std::vector<std::int32_t>().swap(m.ids);
  std::vector<std::int32_t>().swap(m.candidates);
  std::vector<float>().swap(m.candidate_p);
  std::string().swap(m.text);
  std::vector<std::uint32_t>().swap(m.offsets);
}

// The display text of `ids` (BOS '<s>', byte pieces as their byte), as one string + offsets;
// empty texts without a llama2.c tokenizer (the JS tokenizer names the tokens then).
void lm_fill_tokens(LoadedLm& m, LmCall& c) {
  m.text.clear();
  m.offsets.assign(1, 0);
  for (std::int32_t id : m.ids) {
    if (m.has_tokenizer) m.text += m.tokenizer.display(id);
    m.offsets.push_back(static_cast<std::uint32_t>(m.text.size()));
  }
  c.count = m.ids.size();
  c.ids = reinterpret_cast<std::uintptr_t>(m.ids.data());
  c.text = reinterpret_cast<std::uintptr_t>(m.text.data());
  c.offsets = reinterpret_cast<std::uintptr_t>(m.offsets.data());
}

LmCall lm_tokenize(std::uintptr_t text, std::size_t size) {
  LmCall c;
  if (!loaded_lm) return c.error = "no language model is loaded", c;
  if (!loaded_lm->has_tokenizer) return c.error = "the model has no llama2.c tokenizer", c;
  loaded_lm->ids = loaded_lm->tokenizer.encode(std::string_view(reinterpret_cast<const char*>(text), size));
  lm_fill_tokens(*loaded_lm, c);
  return c;
}

// The bytes run.c prints for `count` ids at `ids` (each after the one before; the first after
// `previous`), plus the display text of each id.
LmCall lm_decode(std::uintptr_t ids, std::size_t count, int previous) {
  LmCall c;
  if (!loaded_lm) return c.error = "no language model is loaded", c;
  if (!loaded_lm->has_tokenizer) return c.error = "the model has no llama2.c tokenizer", c;
  LoadedLm& m = *loaded_lm;
  const auto* p = reinterpret_cast<const std::int32_t*>(ids);
  m.ids.assign(p, p + count);
  std::string bytes;
  for (std::int32_t id : m.ids) {
    bytes += m.tokenizer.decode(previous, id);
    previous = id;
  }
  lm_fill_tokens(m, c);
  m.text += bytes;  // the decoded bytes follow the display texts
  c.bytes = reinterpret_cast<std::uintptr_t>(m.text.data()) + m.offsets.back();
  c.text = reinterpret_cast<std::uintptr_t>(m.text.data());
  c.bytes_size = bytes.size();
  return c;
}

std::string lm_check_ids(const LoadedLm& m, const std::int32_t* p, std::size_t count) {
  const am::Spec& cfg = m.net.spec();
  if (count == 0) return "ids is empty: the model needs at least one token";
  if (count > cfg.context)
    return "the input has " + std::to_string(count) + " tokens, more than the model's context of " +
           std::to_string(cfg.context);
  for (std::size_t i = 0; i < count; ++i)
    if (p[i] < 0 || static_cast<std::size_t>(p[i]) >= cfg.vocab)
      return "ids[" + std::to_string(i) + "] is " + std::to_string(p[i]) + ", outside the vocabulary 0.." +
             std::to_string(cfg.vocab - 1);
  return {};
}

// The whole sequence at once: every layer's attention, the logits (the last position's for a
// causal LM, every position's for a masked LM) and, for encoders, the hidden states.
// `types`: token type ids (0 = all 0).
LmCall lm_run(std::uintptr_t ids, std::size_t count, std::uintptr_t types, double max_bytes, bool simd) {
  LmCall c;
  if (!loaded_lm) return c.error = "no language model is loaded", c;
  LoadedLm& m = *loaded_lm;
  const am::Spec& spec = m.net.spec();
  const auto* p = reinterpret_cast<const std::int32_t*>(ids);
  if (!(c.error = lm_check_ids(m, p, count)).empty()) return c;
  const auto* t = reinterpret_cast<const std::int32_t*>(types);
  if (t)
    for (std::size_t i = 0; i < count; ++i)
      if (t[i] < 0 || static_cast<std::size_t>(t[i]) >= (spec.type_vocab ? spec.type_vocab : 1))
        return c.error = "token type " + std::to_string(t[i]) + " at position " + std::to_string(i) +
                         " is outside the model's " + std::to_string(spec.type_vocab ? spec.type_vocab : 1) + " types",
               c;
  const std::size_t need = am::run_bytes(spec, count);
  if (static_cast<double>(need) > max_bytes)
    return c.error = "run() over " + std::to_string(count) + " tokens needs " + std::to_string(need >> 20) +
                     " MiB of working memory, more than the " + std::to_string(limit_of(max_bytes) >> 20) +
                     " MiB available",
           c;
  m.last_scratch = need;
  m.ids.assign(p, p + count);
  std::vector<std::int32_t> type_ids;
  if (t && spec.type_vocab) type_ids.assign(t, t + count);
  am::ForwardOutputs out;
  out.attention = &m.attention;
  if (spec.head != am::HeadKind::none) out.logits = &m.logits;
  if (spec.head == am::HeadKind::none) out.hidden = &m.hidden;
  m.net.forward(m.ids, type_ids, nullptr, out, kernel(simd));  // no KV cache: nothing follows
  lm_fill_tokens(m, c);
  c.logits = reinterpret_cast<std::uintptr_t>(m.logits.data());
  c.logits_count = m.logits.size();
  c.hidden = reinterpret_cast<std::uintptr_t>(m.hidden.data());
  return c;
}

std::uintptr_t lm_attention(std::size_t layer) {
  if (!loaded_lm || layer >= loaded_lm->attention.size()) return 0;
  return reinterpret_cast<std::uintptr_t>(loaded_lm->attention[layer].data());
}

// Starts a generation: the prompt's ids through the full path into a KV cache for the whole
// context; the PRNG seeded with (seed_high << 32 | seed_low).
std::string lm_begin(std::uintptr_t ids, std::size_t count, std::uint32_t seed_low, std::uint32_t seed_high,
                     double max_bytes, bool simd) {
  if (!loaded_lm) return "no language model is loaded";
  LoadedLm& m = *loaded_lm;
  const am::Spec& cfg = m.net.spec();
  if (cfg.head != am::HeadKind::causal_lm) return "the model is not a causal language model: it cannot generate";
  const auto* p = reinterpret_cast<const std::int32_t*>(ids);
  std::string error = lm_check_ids(m, p, count);
  if (!error.empty()) return error;
  const std::size_t need = am::cache_bytes(cfg, cfg.context) + am::run_bytes(cfg, count);
  if (static_cast<double>(need) > max_bytes)
    return "generation needs " + std::to_string(need >> 20) + " MiB of working memory, more than the " +
           std::to_string(limit_of(max_bytes) >> 20) + " MiB available";
  m.session = std::make_unique<am::TransformerState>();
  m.net.reset(*m.session, cfg.context);
  m.ids.assign(p, p + count);
  m.net.prefill(m.ids, *m.session, nullptr, kernel(simd));
  m.rng = am::Rng(static_cast<std::uint64_t>(seed_high) << 32 | seed_low);
  return {};
}

// Draws the next token from the session's logits; candidates: the `k` most probable ids of the
// distribution it was drawn from, with their probabilities.
struct LmDraw {
  std::string error;
  int id = -1;
  std::size_t position = 0, count = 0;
  std::uintptr_t candidates = 0, probabilities = 0;
};

LmDraw lm_sample(float temperature, float top_p, std::size_t k) {
  LmDraw d;
  if (!loaded_lm || !loaded_lm->session) return d.error = "no generation is in progress", d;
  LoadedLm& m = *loaded_lm;
  am::SampleOptions options;
  options.temperature = temperature;
  options.top_p = top_p;
  d.id = am::sample(m.session->logits, options, m.rng, m.probs);
  m.candidates = am::top_k(m.probs, k);
  m.candidate_p.clear();
  for (std::int32_t id : m.candidates) m.candidate_p.push_back(m.probs[static_cast<std::size_t>(id)]);
  d.position = m.session->position - 1;
  d.count = m.candidates.size();
  d.candidates = reinterpret_cast<std::uintptr_t>(m.candidates.data());
  d.probabilities = reinterpret_cast<std::uintptr_t>(m.candidate_p.data());
  return d;
}

// Layer `layer`'s attention row of the last token fed: [heads, position + 1].
std::uintptr_t lm_step_attention(std::size_t layer) {
  if (!loaded_lm || !loaded_lm->session || layer >= loaded_lm->session->attention.size()) return 0;
  return reinterpret_cast<std::uintptr_t>(loaded_lm->session->attention[layer].data());
}

// Feeds `id` at the next position.
std::string lm_feed(int id, bool simd) {
  if (!loaded_lm || !loaded_lm->session) return "no generation is in progress";
  LoadedLm& m = *loaded_lm;
  if (m.session->position >= m.session->capacity) return "the context is full";
  if (id < 0 || static_cast<std::size_t>(id) >= m.net.spec().vocab) return "id outside the vocabulary";
  m.net.step(id, *m.session, kernel(simd));
  return {};
}

// Frees the KV cache and every result buffer.
void lm_end() {
  if (!loaded_lm) return;
  loaded_lm->session.reset();
  lm_release();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_lm) {
  using namespace emscripten;
  value_object<LmInfo>("LmInfo")
      .field("architecture", &LmInfo::architecture)
      .field("modelType", &LmInfo::model_type)
      .field("kind", &LmInfo::kind)
      .field("rope", &LmInfo::rope)
      .field("dim", &LmInfo::dim)
      .field("hiddenDim", &LmInfo::hidden_dim)
      .field("layers", &LmInfo::layers)
      .field("heads", &LmInfo::heads)
      .field("kvHeads", &LmInfo::kv_heads)
      .field("headDim", &LmInfo::head_dim)
      .field("vocabSize", &LmInfo::vocab_size)
      .field("seqLen", &LmInfo::seq_len)
      .field("typeVocab", &LmInfo::type_vocab)
      .field("sharedClassifier", &LmInfo::shared_classifier)
      .field("hasTokenizer", &LmInfo::has_tokenizer);
  value_object<LmMemory>("LmMemory")
      .field("weights", &LmMemory::weights)
      .field("kvCache", &LmMemory::kv_cache)
      .field("scratch", &LmMemory::scratch);
  value_object<LmCall>("LmCall")
      .field("error", &LmCall::error)
      .field("count", &LmCall::count)
      .field("logitsCount", &LmCall::logits_count)
      .field("ids", &LmCall::ids)
      .field("text", &LmCall::text)
      .field("offsets", &LmCall::offsets)
      .field("logits", &LmCall::logits)
      .field("hidden", &LmCall::hidden)
      .field("bytes", &LmCall::bytes)
      .field("bytesSize", &LmCall::bytes_size);
  value_object<LmDraw>("LmDraw")
      .field("error", &LmDraw::error)
      .field("id", &LmDraw::id)
      .field("position", &LmDraw::position)
      .field("count", &LmDraw::count)
      .field("candidates", &LmDraw::candidates)
      .field("probabilities", &LmDraw::probabilities);
  function("lmLoadLlama2c", &lm_load_llama2c);
  function("lmBeginHf", &lm_begin_hf);
  function("lmShardBegin", &lm_shard_begin);
  function("lmShardTensors", &lm_shard_tensors);
  function("lmShardTensorBegin", &lm_shard_tensor_begin);
  function("lmShardTensorEnd", &lm_shard_tensor_end);
  function("lmShardTensorBuffer", &lm_shard_tensor_buffer);
  function("lmShardAddTensor", &lm_shard_add_tensor);
  function("lmFinishHf", &lm_finish_hf);
  function("lmAbortHf", &lm_abort_hf);
  function("lmSetTokenizer", &lm_set_tokenizer);
  function("lmInfo", &lm_info);
  function("lmMemory", &lm_memory);
  function("lmTokenize", &lm_tokenize);
  function("lmDecode", &lm_decode);
  function("lmRun", &lm_run);
  function("lmAttention", &lm_attention);
  function("lmRelease", &lm_release);
  function("lmBegin", &lm_begin);
  function("lmSample", &lm_sample);
  function("lmStepAttention", &lm_step_attention);
  function("lmFeed", &lm_feed);
  function("lmEnd", &lm_end);
}
#endif  // ATTNLENS_WITH_MODEL
