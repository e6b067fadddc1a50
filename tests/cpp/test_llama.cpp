// The Transformer family: shared blocks against float64, the forward pass against a plain float64
// reference on small random models (llama2.c v0/v1 and Hugging Face F32/F16/BF16 layouts), the
// incremental (KV-cache) path against the full one, loader refusals, and (natively, where the
// files can be read) stories260K's greedy output against llama2.c's recorded text.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnlens/model/blocks.hpp"
#include "attnlens/model/architectures.hpp"
#include "attnlens/model/json.hpp"
#include "attnlens/model/loader.hpp"
#include "attnlens/model/transformer.hpp"
#include "attnlens/model/llama_tokenizer.hpp"
#include "attnlens/model/sampler.hpp"
#include "llama_support.hpp"

using namespace attnlens::model;
using namespace llama_support;
using attnlens::bf16_to_f32;
using attnlens::f16_to_f32;

namespace {

constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

attnlens::Span<const std::uint8_t> span(const Bytes& b) { return {b.data(), b.size()}; }

std::vector<float> logits_of(const Transformer& model, const std::vector<int>& ids,
                             std::vector<std::vector<float>>* attention = nullptr) {
  TransformerState state;
  model.reset(state, ids.size());
  model.prefill({ids.data(), ids.size()}, state, attention);
  return state.logits;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

std::vector<int> random_ids(std::mt19937& rng, int n, int vocab) {
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int& id : ids) id = pick(rng);
  return ids;
}

}  // namespace

TEST_CASE("rms_norm matches float64") {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const std::size_t rows = 3, d = 37;
  std::vector<float> x(rows * d), g(d), out(rows * d);
  for (float& v : x) v = normal(rng);
  for (float& v : g) v = normal(rng);
  rms_norm(x.data(), rows, d, g.data(), 1e-5f, out.data());
  for (std::size_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::size_t j = 0; j < d; ++j) ss += static_cast<double>(x[r * d + j]) * x[r * d + j];
    const double scale = 1.0 / std::sqrt(ss / d + 1e-5);
    for (std::size_t j = 0; j < d; ++j) {
      const double want = g[j] * x[r * d + j] * scale;
      CHECK(std::fabs(out[r * d + j] - want) <= 1e-6 * (1 + std::fabs(want)));
    }
  }
}

TEST_CASE("rope: interleaved pairs rotate as complex numbers; rotate-half on permuted rows agrees") {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t heads = 3, hd = 8;
  for (std::size_t pos : {0u, 1u, 7u, 511u, 4000u}) {
    std::vector<float> x(heads * hd);
    for (float& v : x) v = normal(rng);
    std::vector<float> inter = x;
    rope(inter.data(), heads, hd, pos, 10000.0f, RopeLayout::interleaved);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < hd / 2; ++i) {
        const double angle = static_cast<double>(pos) * std::pow(10000.0, -2.0 * i / hd);
        const double a = x[h * hd + 2 * i], b = x[h * hd + 2 * i + 1];
        CHECK(inter[h * hd + 2 * i] == doctest::Approx(a * std::cos(angle) - b * std::sin(angle)).epsilon(1e-5));
        CHECK(inter[h * hd + 2 * i + 1] == doctest::Approx(a * std::sin(angle) + b * std::cos(angle)).epsilon(1e-5));
      }
    // The Hugging Face layout: each head's rows regrouped (evens then odds).
    std::vector<float> permuted = permute_rows(x.data(), static_cast<int>(heads), static_cast<int>(hd), 1);
    rope(permuted.data(), heads, hd, pos, 10000.0f, RopeLayout::half);
    const std::vector<float> inter_permuted = permute_rows(inter.data(), static_cast<int>(heads), static_cast<int>(hd), 1);
    CHECK(max_diff(permuted, inter_permuted) == 0.0);
  }
}

TEST_CASE("f16 and bf16 decode exactly, for every bit pattern") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (e == 31) {
      CHECK((m ? std::isnan(f) : std::isinf(f)));
      continue;
    }
    double want = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    if (h & 0x8000) want = -want;
    if (static_cast<double>(f) != want) FAIL_CHECK("f16 " << h << " -> " << f << ", want " << want);
    CHECK(std::signbit(f) == ((h & 0x8000) != 0));
    const float b = bf16_to_f32(static_cast<std::uint16_t>(h));
    const int be = (h >> 7) & 0xFF, bm = h & 0x7F;
    if (be == 255) continue;
    double bwant = be == 0 ? std::ldexp(bm, -133) : std::ldexp(128 + bm, be - 134);
    if (h & 0x8000) bwant = -bwant;
    if (static_cast<double>(b) != bwant) FAIL_CHECK("bf16 " << h << " -> " << b << ", want " << bwant);
  }
}

TEST_CASE("the forward pass matches a float64 reference (GQA, RoPE, tied and untied heads, v0 and v1)") {
  std::mt19937 rng(3);
  for (bool shared : {true, false}) {
    const Weights w = random_weights(shared ? 10 : 11, shared);
    for (const Bytes& file : {llama2c_v0(w), llama2c_v1(w)}) {
      Transformer model;
      REQUIRE(load_llama2c(span(file), model, kUnlimited) == "");
      CHECK(model.spec().tied_head == shared);
      for (int n : {1, 2, 9, w.seq_len}) {
        const auto ids = random_ids(rng, n, w.vocab);
        std::vector<std::vector<float>> attention;
        const auto logits = logits_of(model, ids, &attention);
        const Reference ref = reference_forward(w, ids);
        for (int i = 0; i < w.vocab; ++i) CHECK(std::fabs(logits[i] - ref.logits[i]) <= 1e-4);
        for (int l = 0; l < w.layers; ++l) {
          double worst = 0;
          for (std::size_t i = 0; i < ref.attention[l].size(); ++i)
            worst = std::max(worst, std::fabs(attention[l][i] - ref.attention[l][i]));
          CHECK(worst <= 2e-5);
        }
      }
    }
  }
}

TEST_CASE("the incremental (KV-cache) path equals the full-sequence path") {
  const Weights w = random_weights(12);
  Transformer model;
  REQUIRE(load_llama2c(span(llama2c_v0(w)), model, kUnlimited) == "");
  std::mt19937 rng(4);
  const auto ids = random_ids(rng, w.seq_len, w.vocab);
  TransformerState state;
  model.reset(state, ids.size());
  model.prefill({ids.data(), 3}, state, nullptr);
  for (std::size_t n = 4; n <= ids.size(); ++n) {
    model.step(ids[n - 1], state);
    CHECK(state.position == n);
    std::vector<std::vector<float>> full_attention;
    const std::vector<int> prefix(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    const auto full = logits_of(model, prefix, &full_attention);
    // One token's products run linear()'s matrix-vector kernel, the whole sequence's its packed
    // panels: the same sums in another order, so both agree to rounding (seen: logits ≤ 1.2e-5
    // with relaxed SIMD's fused multiply-add, weights ≤ 1.1e-6).
    CHECK(max_diff(state.logits, full) <= 4e-5);
    for (int l = 0; l < w.layers; ++l)
      for (int h = 0; h < w.heads; ++h)
        for (std::size_t j = 0; j < n; ++j)
          CHECK(std::fabs(state.attention[l][h * n + j] - full_attention[l][(h * n + n - 1) * n + j]) <= 4e-6);
  }
}

TEST_CASE("Hugging Face safetensors (F32, F16, BF16; tied or lm_head) load to the same model") {
  std::mt19937 rng(5);
  const auto ids = random_ids(rng, 20, 40);
  for (bool shared : {true, false})
    for (Dtype t : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
      CAPTURE(shared);
      CAPTURE(static_cast<int>(t));
      const Weights w = random_weights(20, shared);
      const Weights same = rounded(w, t);  // what the file can hold
      Transformer from_bin, from_hf;
      REQUIRE(load_llama2c(span(llama2c_v0(same)), from_bin, kUnlimited) == "");
      const Bytes st = safetensors(hf_tensors(w, !shared), t);
      REQUIRE(load_huggingface(hf_config(w, shared), span(st), from_hf, kUnlimited) == "");
      CHECK(from_hf.spec().rope_layout == RopeLayout::half);
      // Same values, permuted q/k rows: equal up to the order of the q·k sums.
      CHECK(max_diff(logits_of(from_bin, ids), logits_of(from_hf, ids)) <= 1e-5);
      // And the conversion changed the float32 model only by the dtype's rounding.
      if (t != Dtype::f32) {
        Transformer exact;
        REQUIRE(load_llama2c(span(llama2c_v0(w)), exact, kUnlimited) == "");
        const double d = max_diff(logits_of(exact, ids), logits_of(from_hf, ids));
        CHECK(d > 0);
        CHECK(d < (t == Dtype::f16 ? 0.05 : 0.5));
      }
    }
}

TEST_CASE("Hugging Face safetensors tensor by tensor (header, then each tensor's bytes) load as the whole file does") {
  std::mt19937 rng(6);
  const auto ids = random_ids(rng, 20, 30);
  for (Dtype t : {Dtype::f32, Dtype::bf16}) {
    CAPTURE(static_cast<int>(t));
    const Weights w = random_weights(20, false);
    const Bytes st = safetensors(hf_tensors(w, true), t);
    const std::string config = hf_config(w, false);
    Transformer whole, pieces;
    REQUIRE(load_huggingface(config, span(st), whole, kUnlimited) == "");
    HfLoader loader;
    REQUIRE(loader.begin(config, pieces) == "");
    std::size_t header = 0;
    for (int i = 7; i >= 0; --i) header = header << 8 | st[static_cast<std::size_t>(i)];
    // A head cut short is refused; the whole head plans every tensor, in file order.
    CHECK(loader.begin_shard({st.data(), 8 + header - 1}, st.size(), "model.safetensors", kUnlimited).find("cut short") != std::string::npos);
    REQUIRE(loader.begin_shard({st.data(), 8 + header}, st.size(), "model.safetensors", kUnlimited) == "");
    REQUIRE(loader.planned_tensors() > 0);
    for (std::size_t i = 0; i < loader.planned_tensors(); ++i) {
      if (i > 0) CHECK(loader.tensor_begin(i) >= loader.tensor_end(i - 1));
      REQUIRE(loader.tensor_end(i) <= st.size());
      std::uint8_t* buffer = loader.tensor_buffer(i);
      REQUIRE(buffer != nullptr);
      std::copy(st.begin() + static_cast<std::ptrdiff_t>(loader.tensor_begin(i)),
                st.begin() + static_cast<std::ptrdiff_t>(loader.tensor_end(i)), buffer);
      REQUIRE(loader.add_tensor(i) == "");
    }
    CHECK(loader.add_tensor(loader.planned_tensors()) != "");  // past the plan
    REQUIRE(loader.finish() == "");
    CHECK(pieces.weight_bytes() == whole.weight_bytes());
    CHECK(max_diff(logits_of(whole, ids), logits_of(pieces, ids)) == 0);
  }
  // A non-finite value in a tensor taken over from its buffer is refused, naming the tensor.
  const Weights w = random_weights(21, false);
  std::vector<NamedTensor> tensors = hf_tensors(w, true);
  Bytes st = safetensors(tensors, Dtype::f32);
  Transformer model;
  HfLoader loader;
  REQUIRE(loader.begin(hf_config(w, false), model) == "");
  REQUIRE(loader.begin_shard(span(st), st.size(), "model.safetensors", kUnlimited) == "");
  std::uint8_t* buffer = loader.tensor_buffer(0);
  REQUIRE(buffer != nullptr);
  std::copy(st.begin() + static_cast<std::ptrdiff_t>(loader.tensor_begin(0)), st.begin() + static_cast<std::ptrdiff_t>(loader.tensor_end(0)), buffer);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(buffer, &nan, 4);
  CHECK(loader.add_tensor(0).find("non-finite") != std::string::npos);
}

TEST_CASE("a Conv1D (transposed) weight with a non-finite value is refused, naming its [row, column]") {
  Spec s;
  s.dim = 40, s.ffn = 70, s.layers = 1, s.heads = 4, s.kv_heads = 4, s.head_dim = 10, s.vocab = 16;
  s.context = s.positions = 8, s.norm = NormKind::layer, s.activation = Activation::gelu_tanh, s.gated = false;
  for (attnlens::WeightType type : {attnlens::WeightType::f32, attnlens::WeightType::f16}) {
    const std::size_t size = attnlens::weight_type_size(type);
    // GPT-2's c_attn: [in = 40, out = 120] as stored; the key projection is its rows 40..79.
    std::vector<std::uint8_t> bytes(40 * 120 * size, 0);
    const std::size_t row = 7, column = 33;  // of the key projection's [out, in] view
    const std::size_t at = (column * 120 + 40 + row) * size;
    if (size == 4) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&bytes[at], &nan, 4);
    } else {
      bytes[at] = 0x00, bytes[at + 1] = 0x7C;  // float16 +infinity
    }
    Transformer t;
    REQUIRE(t.configure(s).empty());
    SourceTensor src{bytes.data(), type, 120, 40, true, 40};
    const std::string error = t.set(Role::k, 0, src, "h.0.attn.c_attn.weight");
    CHECK(error.find("h.0.attn.c_attn.weight") != std::string::npos);
    CHECK(error.find("non-finite value at [47, 33]") != std::string::npos);  // rows of the source: 40 + 7
    // The same bytes with the value made finite load.
    bytes[at] = bytes[at + 1] = 0;
    if (size == 4) bytes[at + 2] = bytes[at + 3] = 0;
    CHECK(t.set(Role::k, 0, src, "h.0.attn.c_attn.weight").empty());
  }
}

TEST_CASE("llama2.c loader refuses truncated, padded, foreign and oversized files") {
  const Weights w = random_weights(30);
  const Bytes good = llama2c_v0(w);
  Transformer model;
  for (std::size_t cut : {0u, 3u, 27u, 28u, 100u}) {
    const Bytes b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(load_llama2c(span(b), model, kUnlimited) != "");
  }
  for (std::size_t cut = good.size() - 1; cut + 4000 > good.size(); cut -= 37) {
    const Bytes b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(load_llama2c(span(b), model, kUnlimited).find("truncated") != std::string::npos);
  }
  Bytes padded = good;
  padded.push_back(0);
  CHECK(load_llama2c(span(padded), model, kUnlimited).find("longer than its header says") != std::string::npos);
  auto with_field = [&](int field, std::int32_t value) {
    Bytes b = good;
    std::memcpy(b.data() + 4 * field, &value, 4);
    return load_llama2c(span(b), model, kUnlimited);
  };
  CHECK(with_field(0, 0) != "");
  CHECK(with_field(0, -5) != "");
  CHECK(with_field(3, 5) != "");        // 16 not divisible by 5 heads
  CHECK(with_field(4, 3) != "");        // 3 kv heads do not divide 4
  CHECK(with_field(6, 1 << 30) != "");  // seq_len beyond the limit
  CHECK(with_field(2, 0x7fffffff) != "");
  CHECK(with_field(5, std::numeric_limits<std::int32_t>::min()) != "");
  Bytes nan = good;
  const float q = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan.data() + 28 + 4 * 7, &q, 4);
  CHECK(load_llama2c(span(nan), model, kUnlimited).find("non-finite") != std::string::npos);
  CHECK(load_llama2c(span(llama2c_v1(w, 2)), model, kUnlimited).find("int8") != std::string::npos);
  CHECK(load_llama2c(span(llama2c_v1(w, 7)), model, kUnlimited).find("version 7") != std::string::npos);
  // Too large for the memory given: refused before allocating.
  const std::string big = load_llama2c(span(good), model, 1000);
  CHECK(big.find("more than the") != std::string::npos);
  CHECK_FALSE(model.loaded());
}

TEST_CASE("safetensors and config.json loader refuses bad input") {
  const Weights w = random_weights(31);
  const std::string config = hf_config(w);
  const Bytes good = safetensors(hf_tensors(w), Dtype::f32);
  Transformer model;
  REQUIRE(load_huggingface(config, span(good), model, kUnlimited) == "");
  for (std::size_t cut : {0u, 7u, 8u, 20u, 200u}) {
    const Bytes b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(load_huggingface(config, span(b), model, kUnlimited) != "");
  }
  const Bytes truncated(good.begin(), good.end() - 1);
  CHECK(load_huggingface(config, span(truncated), model, kUnlimited).find("data_offsets") != std::string::npos);
  Bytes huge_header = good;
  huge_header[7] = 0x7f;
  CHECK(load_huggingface(config, span(huge_header), model, kUnlimited).find("header length") != std::string::npos);
  auto tensors = hf_tensors(w);
  tensors.pop_back();  // no model.norm.weight
  CHECK(load_huggingface(config, span(safetensors(tensors, Dtype::f32)), model, kUnlimited).find("final norm") != std::string::npos);
  tensors = hf_tensors(w);
  tensors[1].shape = {w.dim, 1};
  tensors[1].values.resize(static_cast<std::size_t>(w.dim));
  CHECK(load_huggingface(config, span(safetensors(tensors, Dtype::f32)), model, kUnlimited).find("has shape") != std::string::npos);
  Bytes dtype = good;
  const std::string text(dtype.begin(), dtype.end());
  const std::size_t at = text.find("\"F32\"");
  dtype[at + 1] = 'I';  // "I32"
  CHECK(load_huggingface(config, span(dtype), model, kUnlimited).find("dtype I32") != std::string::npos);
  CHECK(load_huggingface(hf_config(w, false), span(good), model, kUnlimited).find("lm_head") != std::string::npos);
  CHECK(load_huggingface("{", span(good), model, kUnlimited).find("not valid JSON") != std::string::npos);
  CHECK(load_huggingface("[]", span(good), model, kUnlimited) != "");
  std::string gpt2 = config;
  gpt2.replace(gpt2.find("\"llama\""), 7, "\"t5\"");
  CHECK(load_huggingface(gpt2, span(good), model, kUnlimited).find("model_type") != std::string::npos);
  std::string scaled = config;
  scaled.replace(scaled.find("\"rope_scaling\":null"), 19, "\"rope_scaling\":{\"type\":\"linear\"}");
  CHECK(load_huggingface(scaled, span(good), model, kUnlimited).find("rope_scaling") != std::string::npos);
  std::string fractional = config;
  fractional.replace(fractional.find("\"hidden_size\":16"), 16, "\"hidden_size\":16.5");
  CHECK(load_huggingface(fractional, span(good), model, kUnlimited).find("hidden_size") != std::string::npos);
  CHECK(load_huggingface(config, span(good), model, 64).find("more than the") != std::string::npos);
}

TEST_CASE("json reader") {
  Json j;
  CHECK(parse_json(R"( {"a": [1, -2.5e3, true, null, "x\u00e9\ud83d\ude00\n"], "b": {}} )", j) == "");
  REQUIRE(j.get("a"));
  CHECK(j.get("a")->array[1].number == -2500);
  CHECK(j.get("a")->array[4].string == "x\xC3\xA9\xF0\x9F\x98\x80\n");
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,\"a\":2}", "01", "1.", "\"\x01\"", "tru", "[1] 2", "\"\\x\""})
    CHECK(parse_json(bad, j) != "");
  CHECK(parse_json(std::string(100, '['), j).find("deeply") != std::string::npos);
}

namespace {

// A tokenizer over the 3 specials, 256 byte pieces and a few merges.
struct TestVocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  TestVocab() {
    pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
    scores = {0, 0, 0};
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      pieces.push_back(name);
      scores.push_back(0);
    }
    const std::vector<std::pair<std::string, float>> extra = {
        {" ", -1}, {"a", -2}, {"b", -3}, {"c", -4}, {"ab", -5}, {"bc", -5}, {" a", -6}, {"abc", -7},
        {"\xC3\xA9", -8}, {" ab", -9}, {"ca", -5}, {"aa", -4.5f}};
    for (const auto& [p, s] : extra) pieces.push_back(p), scores.push_back(s);
  }
};

// run.c's encode() as written there: the O(n²) loop.
std::vector<int> naive_encode(const LlamaTokenizer& t, const std::string& text) {
  auto lookup = [&](const std::string& s) {
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.piece(static_cast<int>(i)) == s) return static_cast<int>(i);
    return -1;
  };
  std::vector<int> ids = {1};
  if (!text.empty()) ids.push_back(lookup(" "));
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i + 1;
    while (end < text.size() && end - i < 4 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    const int id = lookup(text.substr(i, end - i));
    if (id >= 0) ids.push_back(id);
    else
      for (std::size_t j = i; j < end; ++j) ids.push_back(static_cast<unsigned char>(text[j]) + 3);
    i = end;
  }
  for (;;) {
    float best = -1e10f;
    int best_id = -1, best_at = -1;
    for (std::size_t i = 1; i + 1 < ids.size(); ++i) {  // BOS (i = 0) stays
      const int id = lookup(t.piece(ids[i]) + t.piece(ids[i + 1]));
      if (id >= 0 && t.score(id) > best) best = t.score(id), best_id = id, best_at = static_cast<int>(i);
    }
    if (best_at < 0) break;
    ids[static_cast<std::size_t>(best_at)] = best_id;
    ids.erase(ids.begin() + best_at + 1);
  }
  return ids;
}

}  // namespace

TEST_CASE("tokenizer: encode equals run.c's O(n²) merge loop; decode follows run.c") {
  const TestVocab v;
  LlamaTokenizer t;
  REQUIRE(t.load(span(tokenizer_file(v.pieces, v.scores)), v.pieces.size()) == "");
  CHECK(t.encode("") == std::vector<int>{1});
  const std::vector<int> abc = t.encode("abc");
  CHECK(abc == naive_encode(t, "abc"));
  std::mt19937 rng(6);
  const std::vector<std::string> alphabet = {"a", "b", "c", " ", "\xC3\xA9", "z", "\xE2\x82\xAC", "\x80", "\xC3", "\n"};
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1), len(0, 24);
  for (int trial = 0; trial < 400; ++trial) {
    std::string s;
    for (std::size_t i = len(rng); i > 0; --i) s += alphabet[pick(rng)];
    const auto fast = t.encode(s);
    if (fast != naive_encode(t, s)) FAIL_CHECK("encode differs for '" << s << "'");
  }
  // Bytes without a piece fall back to ids byte + 3.
  const auto euro = t.encode("\xE2\x82\xAC");
  CHECK(euro == std::vector<int>{1, static_cast<int>(std::find(v.pieces.begin(), v.pieces.end(), " ") - v.pieces.begin()),
                                 0xE2 + 3, 0x82 + 3, 0xAC + 3});
  // Decoding: leading space dropped after BOS, <0xHH> → the byte, unprintable single bytes dropped.
  const int space_a = static_cast<int>(std::find(v.pieces.begin(), v.pieces.end(), " a") - v.pieces.begin());
  CHECK(t.decode(1, space_a) == "a");
  CHECK(t.decode(5, space_a) == " a");
  CHECK(t.decode(1, 'A' + 3) == "A");
  CHECK(t.decode(1, '\n' + 3) == "\n");
  CHECK(t.decode(1, 0x07 + 3) == "");
  CHECK(t.decode(1, 0xC3 + 3) == "");  // run.c: a lone non-ASCII byte is not printable
  CHECK(t.decode(0, 1) == "");
  CHECK(t.decode(0, 2) == "");
  CHECK(t.decode(0, 100000) == "");
  CHECK(t.display(1) == "<s>");
  CHECK(t.display('x' + 3) == "x");
}

TEST_CASE("tokenizer file loader refuses truncated or foreign files") {
  const TestVocab v;
  const Bytes good = tokenizer_file(v.pieces, v.scores);
  LlamaTokenizer t;
  for (std::size_t cut = 0; cut < good.size(); cut += 7) {
    const Bytes b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(t.load(span(b), v.pieces.size()) != "");
  }
  CHECK(t.load(span(good), v.pieces.size() - 1).find("bytes after") != std::string::npos);
  CHECK(t.load(span(good), v.pieces.size() + 1).find("holds " + std::to_string(v.pieces.size()) + " pieces") !=
        std::string::npos);  // another model's (smaller) vocabulary, said so
  CHECK(t.load(span(good), 1u << 30).find("cannot hold") != std::string::npos);
  Bytes bad_len = good;
  const std::int32_t minus = -1;
  std::memcpy(bad_len.data() + 8, &minus, 4);
  CHECK(t.load(span(bad_len), v.pieces.size()).find("length -1") != std::string::npos);
  Bytes nan = good;
  const float q = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan.data() + 4, &q, 4);
  CHECK(t.load(span(nan), v.pieces.size()).find("non-finite") != std::string::npos);
  Bytes zero_max = good;
  std::memset(zero_max.data(), 0, 4);
  CHECK(t.load(span(zero_max), v.pieces.size()).find("max_token_length") != std::string::npos);
}

TEST_CASE("sampler: run.c's xorshift64*, greedy, seeded sampling and top-p") {
  Rng rng(42);
  // xorshift64* from seed 42, computed independently (Python, 64-bit wrap-around).
  CHECK(rng.next_u32() == 1456360119u);
  CHECK(rng.next_u32() == 3359763283u);
  CHECK(rng.next_u32() == 3393612768u);
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.9f, 0.0f, 3.0f};
  std::vector<float> probs;
  Rng a(7), b(7);
  CHECK(sample(logits, {0.0f, 1.0f}, a, probs) == 5);
  CHECK(probs[5] == doctest::Approx(std::exp(3.0) / (std::exp(0.1) + std::exp(2.0) + std::exp(-1.0) + std::exp(1.9) + 1 + std::exp(3.0))));
  std::vector<int> seen(6, 0);
  for (int i = 0; i < 2000; ++i) {
    const int x = sample(logits, {1.0f, 1.0f}, a, probs);
    CHECK(x == sample(logits, {1.0f, 1.0f}, b, probs));  // same seed, same draws
    ++seen[static_cast<std::size_t>(x)];
  }
  CHECK(seen[5] > seen[1]);
  CHECK(seen[2] > 0);
  // top-p 0.6: the nucleus is {5, 1} (p5 ≈ 0.56, p5 + p1 > 0.6).
  for (int i = 0; i < 500; ++i) {
    const int x = sample(logits, {1.0f, 0.6f}, a, probs);
    CHECK((x == 5 || x == 1));
  }
  const auto top = top_k(probs, 3);
  CHECK(top == std::vector<int>{5, 1, 3});
  // A temperature so small that logits / T overflows: the limit (all mass on the argmax), not NaN.
  for (const float tiny : {1e-45f, 1e-40f, 1e-38f}) {
    CHECK(sample(logits, {tiny, 1.0f}, a, probs) == 5);
    CHECK(probs[5] == 1.0f);
    CHECK(probs[1] == 0.0f);
  }
}

#ifdef ATTNLENS_SOURCE_DIR
// The real model, natively (wasm tests cannot read files; tests/js checks the wasm build).
TEST_CASE("stories260K: greedy output equals llama2.c's recorded text, from .bin and safetensors") {
  const std::string root = ATTNLENS_SOURCE_DIR;
  const Bytes bin = read_file(root + "/web/models/stories260K/stories260K.bin");
  const Bytes tok = read_file(root + "/web/models/stories260K/tok512.bin");
  const Bytes json_ids = read_file(root + "/tests/fixtures/stories260K/greedy_token_ids.json");
  const Bytes config = read_file(root + "/tests/fixtures/stories260K/config.json");
  REQUIRE(bin.size() == 1056540);
  Json ids_json;
  REQUIRE(parse_json({reinterpret_cast<const char*>(json_ids.data()), json_ids.size()}, ids_json) == "");
  std::vector<int> want_ids;
  for (const Json& id : ids_json.get("ids_256")->array) want_ids.push_back(static_cast<int>(id.number));
  REQUIRE(want_ids.size() == 256);

  Transformer from_bin;
  REQUIRE(load_llama2c(span(bin), from_bin, kUnlimited) == "");
  LlamaTokenizer tokenizer;
  REQUIRE(tokenizer.load(span(tok), 512) == "");
  // The HF layout, written here from the .bin's arrays (export.py's permutation).
  Weights w;
  w.dim = 64, w.hidden = 172, w.layers = 5, w.heads = 8, w.kv_heads = 4, w.vocab = 512, w.seq_len = 512;
  const float* f = reinterpret_cast<const float*>(bin.data() + 28);
  for (const auto& [v, n] : std::vector<std::pair<std::vector<float>*, std::size_t>>{
           {&w.embedding, 512 * 64}, {&w.rms_att, 5 * 64}, {&w.wq, 5 * 64 * 64}, {&w.wk, 5 * 32 * 64},
           {&w.wv, 5 * 32 * 64}, {&w.wo, 5 * 64 * 64}, {&w.rms_ffn, 5 * 64}, {&w.w1, 5 * 172 * 64},
           {&w.w2, 5 * 64 * 172}, {&w.w3, 5 * 172 * 64}, {&w.rms_final, 64}}) {
    v->assign(f, f + n);
    f += n;
  }
  Transformer from_hf;
  REQUIRE(load_huggingface({reinterpret_cast<const char*>(config.data()), config.size()},
                           span(safetensors(hf_tensors(w), Dtype::f32)), from_hf, kUnlimited) == "");

  for (const Transformer* model : {&from_bin, &from_hf}) {
    TransformerState state;
    model->reset(state, 512);
    const std::vector<int> bos = {1};
    model->prefill({bos.data(), 1}, state, nullptr);
    std::vector<int> ids;
    std::string text;
    int previous = 1;
    for (int step = 0; step < 256; ++step) {
      const int next = argmax(state.logits);
      if (next == 1) break;
      ids.push_back(next);
      text += tokenizer.decode(previous, next);
      previous = next;
      model->step(next, state);
    }
    CHECK(ids == want_ids);
    const Bytes t200 = read_file(root + "/tests/fixtures/stories260K/expected_greedy_200.txt");
    const Bytes t256 = read_file(root + "/tests/fixtures/stories260K/expected_greedy_256.txt");
    CHECK(text == std::string(t256.begin(), t256.end()));
    std::string text200;
    previous = 1;
    for (int i = 0; i < 200; ++i) text200 += tokenizer.decode(previous, ids[static_cast<std::size_t>(i)]), previous = ids[static_cast<std::size_t>(i)];
    CHECK(text200 == std::string(t200.begin(), t200.end()));
  }
  CHECK(tokenizer.encode("Once upon a time") == std::vector<int>{1, 403, 407, 261, 378});

  // The real weights against the float64 reference: empty, byte-fallback Unicode and
  // near-context-length inputs (the tolerances B2's JavaScript reference uses).
  std::string story;
  for (std::string longer; tokenizer.encode(longer = story + "Lily and Tom played with a big red ball. ").size() <= 510;)
    story = longer;
  for (const std::string& text : {std::string(), std::string("Na\xC3\xAFve caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC" "5"), story}) {
    const std::vector<std::int32_t> ids = tokenizer.encode(text);
    REQUIRE(ids.size() <= 512);
    CAPTURE(ids.size());
    std::vector<std::vector<float>> attention;
    const auto logits = logits_of(from_bin, std::vector<int>(ids.begin(), ids.end()), &attention);
    const Reference ref = reference_forward(w, std::vector<int>(ids.begin(), ids.end()));
    double worst_logit = 0, worst_weight = 0;
    for (int i = 0; i < 512; ++i) worst_logit = std::max(worst_logit, std::fabs(logits[i] - ref.logits[i]));
    for (int l = 0; l < 5; ++l)
      for (std::size_t i = 0; i < ref.attention[l].size(); ++i)
        worst_weight = std::max(worst_weight, std::fabs(attention[l][i] - ref.attention[l][i]));
    CHECK(worst_logit <= 1e-4);
    CHECK(worst_weight <= 2e-5);
    MESSAGE("n = " << ids.size() << ": logits " << worst_logit << ", attention " << worst_weight);
  }
}
#endif

TEST_CASE("Hugging Face shards: one file or three give the same model; duplicates and gaps are refused") {
  const Weights w = random_weights(40);
  const auto tensors = hf_tensors(w);
  const std::string config = hf_config(w);
  Transformer whole;
  REQUIRE(load_huggingface(config, span(safetensors(tensors, Dtype::f16)), whole, kUnlimited) == "");
  std::vector<Bytes> parts;
  const std::size_t per = (tensors.size() + 2) / 3;
  for (std::size_t at = 0; at < tensors.size(); at += per)
    parts.push_back(safetensors({tensors.begin() + static_cast<std::ptrdiff_t>(at),
                                 tensors.begin() + static_cast<std::ptrdiff_t>(std::min(at + per, tensors.size()))},
                                Dtype::f16));
  REQUIRE(parts.size() == 3);
  Transformer sharded;
  HfLoader loader;
  REQUIRE(loader.begin(config, sharded) == "");
  for (const Bytes& p : parts) REQUIRE(loader.add_shard(span(p), "shard", kUnlimited) == "");
  REQUIRE(loader.finish() == "");
  std::mt19937 rng(41);
  const auto ids = random_ids(rng, 12, w.vocab);
  CHECK(max_diff(logits_of(whole, ids), logits_of(sharded, ids)) == 0);
  CHECK(sharded.weight_bytes() < whole.weight_bytes() + 1);
  // 16-bit matrices stay 16-bit: about half the float32 model's bytes.
  Transformer f32;
  REQUIRE(load_huggingface(config, span(safetensors(tensors, Dtype::f32)), f32, kUnlimited) == "");
  CHECK(whole.weight_bytes() < f32.weight_bytes() * 6 / 10);

  Transformer again;
  REQUIRE(loader.begin(config, again) == "");
  REQUIRE(loader.add_shard(span(parts[0]), "a.safetensors", kUnlimited) == "");
  CHECK(loader.add_shard(span(parts[0]), "b.safetensors", kUnlimited).find("appears in two shards (again in b.safetensors)") !=
        std::string::npos);
  REQUIRE(loader.begin(config, again) == "");
  REQUIRE(loader.add_shard(span(parts[0]), "a.safetensors", kUnlimited) == "");
  REQUIRE(loader.add_shard(span(parts[1]), "b.safetensors", kUnlimited) == "");
  CHECK(loader.finish().find("lacks") != std::string::npos);
  // The memory check happens at the first shard, with its precision, before any weight is kept.
  REQUIRE(loader.begin(config, again) == "");
  CHECK(loader.add_shard(span(parts[0]), "a.safetensors", 1000).find("more than the") != std::string::npos);
}

TEST_CASE("config.json: every architecture maps to a Spec; unknown model types are refused naming the supported") {
  Spec s;
  REQUIRE(spec_from_config(R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,"vocab_size":100})", s) == "");
  CHECK((s.norm == NormKind::layer && !s.rope && s.causal && s.pre_norm && s.qkv_bias && s.tied_head && s.ffn == 256));
  CHECK((s.activation == Activation::gelu_tanh && s.context == 1024 && s.eps == 1e-5f));
  REQUIRE(spec_from_config(R"({"model_type":"bert","architectures":["BertForMaskedLM"],"hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":4,"intermediate_size":128,"vocab_size":100})", s) == "");
  CHECK((!s.causal && !s.pre_norm && s.embedding_norm && s.type_vocab == 2 && s.head == HeadKind::masked_lm));
  CHECK((s.activation == Activation::gelu_erf && s.eps == 1e-12f && s.context == 512));
  REQUIRE(spec_from_config(R"({"model_type":"qwen2","hidden_size":64,"intermediate_size":96,"num_hidden_layers":2,
    "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":32768})", s, 256) == "");
  CHECK((s.qkv_bias && !s.out_bias && s.rope && s.gated && s.context == 256 && s.kv_heads == 2));
  REQUIRE(spec_from_config(R"({"model_type":"mistral","hidden_size":64,"intermediate_size":96,"num_hidden_layers":2,
    "num_attention_heads":4,"num_key_value_heads":1,"vocab_size":100,"max_position_embeddings":32768,"sliding_window":4096})", s) == "");
  CHECK(s.context == 4096);
  const std::string t5 = spec_from_config(R"({"model_type":"t5"})", s);
  CHECK(t5.find("\"t5\" is not supported; supported: gpt2, bert, distilbert, llama, mistral, qwen2") != std::string::npos);
  CHECK(spec_from_config(R"({"model_type":"gpt2","architectures":["GPT2ForSequenceClassification"],"n_embd":64,"n_layer":2,
    "n_head":4,"vocab_size":100})", s).find("GPT2LMHeadModel") != std::string::npos);
  CHECK(spec_from_config(R"({"model_type":"bert","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "intermediate_size":128,"vocab_size":100,"position_embedding_type":"relative_key"})", s).find("relative_key") != std::string::npos);
}
