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
}
