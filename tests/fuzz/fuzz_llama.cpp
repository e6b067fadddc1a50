// libFuzzer harness for the language-model loaders and tokenizer (untrusted files), through
// their public API: the llama2.c tokenizer file and encode()/decode(), the llama2.c checkpoint
// loader, the Hugging Face config.json → Spec mapping (every architecture), the safetensors
// parser and the shard-by-shard loader (the shard index is read in JS: tests/js/shards.test.js); a model that loads is run (causal: prefill,
// KV-cache steps, sampling; encoders: a bidirectional pass). The first byte picks the target:
//   0 tokenizer file bytes, any vocabulary size; then encode/decode of the rest
//   1 a tokenizer built from fuzzed pieces and scores; encode/decode fuzzed text
//   2 raw llama2.c checkpoint bytes
//   3 a llama2.c checkpoint with a small fuzzed header and fuzzed float bytes, maybe cut short
//   4 a fuzzed config.json and fuzzed safetensors bytes
//   5 a small config of a fuzzed architecture (gpt2, bert, distilbert, llama, qwen2) fed 1–3
//     fuzzed shards
// Findings: any crash or sanitizer report; an exception escaping; a loaded tokenizer whose
// encode() yields an id outside the vocabulary or not starting with BOS.
//
// Build: scripts/build.sh (ATTNLENS_FUZZ=ON, clang, .build/fuzz). Short run: scripts/test.sh.
// Long run: .build/fuzz/attnlens_fuzz_llama -max_total_time=3600 -max_len=65536 .build/fuzz/corpus-llama
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnlens/model/architectures.hpp"
#include "attnlens/model/llama_tokenizer.hpp"
#include "attnlens/model/loader.hpp"
#include "attnlens/model/sampler.hpp"
#include "attnlens/model/transformer.hpp"

namespace {

using namespace attnlens::model;
using Bytes = std::vector<std::uint8_t>;
constexpr std::size_t kMaxBytes = 32u << 20;  // the memory a fuzzed model may claim

void fail(const char* what) {
  std::fprintf(stderr, "finding: %s\n", what);
  std::abort();
}

void put_i32(Bytes& b, std::int32_t v) {
  std::uint8_t p[4];
  std::memcpy(p, &v, 4);
  b.insert(b.end(), p, p + 4);
}

void exercise_tokenizer(const LlamaTokenizer& t, const std::string& text) {
  const std::vector<std::int32_t> ids = t.encode(text);
  if (ids.empty() || ids[0] != LlamaTokenizer::bos_id) fail("encode() does not start with BOS");
  std::int32_t previous = -1;
  std::string out;
  for (std::int32_t id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= t.size()) fail("encode() id outside the vocabulary");
    out += t.decode(previous, id);
    out += t.display(id);
    previous = id;
  }
  for (std::int32_t id : {-1, 0, 1, 2, 1 << 30}) out += t.decode(1, id) + t.display(id);
}

void exercise_model(const Transformer& model, FuzzedDataProvider& in) {
  const Spec& c = model.spec();
  const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(1, std::min<std::size_t>(c.context, 6));
  std::vector<std::int32_t> ids(n), types(n);
  for (auto& id : ids) id = in.ConsumeIntegralInRange<std::int32_t>(0, static_cast<std::int32_t>(c.vocab - 1));
  for (auto& t : types) t = c.type_vocab ? in.ConsumeIntegralInRange<std::int32_t>(0, static_cast<std::int32_t>(c.type_vocab - 1)) : 0;
  if (c.head != HeadKind::causal_lm) {
    std::vector<std::vector<float>> attention;
    std::vector<float> hidden, logits;
    ForwardOutputs out{&attention, &hidden, &logits};
    model.forward({ids.data(), n}, {types.data(), n}, nullptr, out);
    return;
  }
  TransformerState state;
  model.reset(state, std::min<std::size_t>(c.context, n + 3));
  std::vector<std::vector<float>> attention;
  model.prefill({ids.data(), n}, state, &attention);
  Rng rng(in.ConsumeIntegral<std::uint64_t>());
  std::vector<float> probs;
  while (state.position < state.capacity) {
    SampleOptions o;
    o.temperature = in.ConsumeFloatingPointInRange<float>(0.0f, 2.0f);
    o.top_p = in.ConsumeFloatingPointInRange<float>(0.0f, 1.0f);
    const std::int32_t next = sample(state.logits, o, rng, probs);
    if (next < 0 || static_cast<std::size_t>(next) >= c.vocab) fail("sample() outside the vocabulary");
    (void)top_k(probs, 10);
    model.step(next, state);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  try {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: {
        const std::size_t vocab = in.ConsumeIntegralInRange<std::size_t>(1, 600);
        const Bytes file = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, in.remaining_bytes()));
        LlamaTokenizer t;
        if (t.load({file.data(), file.size()}, vocab).empty()) exercise_tokenizer(t, in.ConsumeRemainingBytesAsString());
        break;
      }
      case 1: {
        const std::size_t vocab = in.ConsumeIntegralInRange<std::size_t>(3, 300);
        Bytes file;
        put_i32(file, 16);
        for (std::size_t i = 0; i < vocab; ++i) {
          std::string piece;
          if (i >= 3 && i < 259 && in.ConsumeBool()) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(i - 3));
            piece = name;
          } else {
            piece = in.ConsumeRandomLengthString(6);
          }
          const float score = in.ConsumeFloatingPointInRange<float>(-100.0f, 0.0f);
          std::uint8_t p[4];
          std::memcpy(p, &score, 4);
          file.insert(file.end(), p, p + 4);
          put_i32(file, static_cast<std::int32_t>(piece.size()));
          file.insert(file.end(), piece.begin(), piece.end());
        }
        LlamaTokenizer t;
        if (!t.load({file.data(), file.size()}, vocab).empty()) fail("a well-formed tokenizer file was refused");
        exercise_tokenizer(t, in.ConsumeRemainingBytesAsString());
        break;
      }
      case 2: {
        const Bytes file = in.ConsumeRemainingBytes<std::uint8_t>();
        Transformer model;
        if (load_llama2c({file.data(), file.size()}, model, kMaxBytes).empty()) {
          FuzzedDataProvider rest(data, size);
          exercise_model(model, rest);
        }
        break;
      }
      case 3: {
        const bool versioned = in.ConsumeBool();
        const std::int32_t heads = in.ConsumeIntegralInRange<std::int32_t>(1, 4);
        const std::int32_t head_dim = 2 * in.ConsumeIntegralInRange<std::int32_t>(0, 3);
        const std::int32_t header[7] = {
            heads * head_dim, in.ConsumeIntegralInRange<std::int32_t>(-1, 12), in.ConsumeIntegralInRange<std::int32_t>(0, 3),
            heads, in.ConsumeIntegralInRange<std::int32_t>(0, heads), in.ConsumeIntegralInRange<std::int32_t>(-20, 20),
            in.ConsumeIntegralInRange<std::int32_t>(0, 8)};
        Bytes file;
        if (versioned) {
          put_i32(file, 0x616b3432);
          put_i32(file, in.ConsumeIntegralInRange<std::int32_t>(0, 3));
        }
        for (std::int32_t v : header) put_i32(file, v);
        if (versioned) {
          file.push_back(in.ConsumeIntegral<std::uint8_t>());
          file.resize(256, 0);
        }
        // Weights: fuzzed bytes repeated to about the size the header implies, maybe cut short.
        const Bytes weights = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(1, 512));
        const std::size_t want = in.ConsumeIntegralInRange<std::size_t>(0, 40000);
        for (std::size_t i = 0; i < want; ++i) file.push_back(weights.empty() ? 0 : weights[i % weights.size()]);
        Transformer model;
        if (load_llama2c({file.data(), file.size()}, model, kMaxBytes).empty()) exercise_model(model, in);
        break;
      }
      case 5: {
        static const char* configs[] = {
            R"({"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":2,"n_positions":8,"vocab_size":5})",
            R"({"model_type":"bert","architectures":["BertForMaskedLM"],"hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":8,"max_position_embeddings":8,"vocab_size":5})",
            R"({"model_type":"distilbert","architectures":["DistilBertModel"],"dim":8,"n_layers":1,"n_heads":2,"hidden_dim":8,"max_position_embeddings":8,"vocab_size":5})",
            R"({"model_type":"llama","hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"vocab_size":5,"max_position_embeddings":8,"tie_word_embeddings":true})",
            R"({"model_type":"qwen2","hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"vocab_size":5,"max_position_embeddings":8})"};
        Transformer model;
        HfLoader loader;
        if (!loader.begin(configs[in.ConsumeIntegralInRange<int>(0, 4)], model, in.ConsumeIntegralInRange<std::size_t>(0, 9)).empty())
          fail("a well-formed config.json was refused");
        bool ok = true;
        for (int shards = in.ConsumeIntegralInRange<int>(1, 3); shards > 0 && ok; --shards) {
          const Bytes file = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, in.remaining_bytes()));
          ok = loader.add_shard({file.data(), file.size()}, "shard", kMaxBytes).empty();
        }
        if (ok && loader.finish().empty()) exercise_model(model, in);
        break;
      }
      default: {
        const std::string config = in.ConsumeRandomLengthString(2048);
        const Bytes file = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, in.remaining_bytes()));
        Transformer model;
        if (load_huggingface(config, {file.data(), file.size()}, model, kMaxBytes).empty()) exercise_model(model, in);
        break;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
