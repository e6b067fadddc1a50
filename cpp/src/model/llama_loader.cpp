#include "attnlens/model/llama_loader.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attnlens/model/json.hpp"

namespace attnlens::model {

namespace {

constexpr std::uint32_t kVersionMagic = 0x616b3432;  // "ak42" as written by export.py
constexpr std::size_t kVersionHeaderBytes = 256;
constexpr std::size_t kMaxSafetensorsHeader = 100u << 20;

std::int32_t read_i32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return static_cast<std::int32_t>(v);
}

std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + " bytes"; }

// The tensors of a llama2.c file, in file order, with their element counts.
struct Block {
  LlamaWeight which;
  bool per_layer;
  const char* name;
};

std::string load_blocks(const std::vector<Block>& blocks, const std::uint8_t* data, std::size_t size,
                        Llama& model) {
  const LlamaConfig& c = model.config();
  std::size_t at = 0;
  for (const Block& b : blocks) {
    const std::size_t count = model.weight_size(b.which);
    for (std::size_t l = 0; l < (b.per_layer ? c.layers : 1); ++l) {
      if ((size - at) / 4 < count) return std::string("the model file is truncated in ") + b.name;
      std::string error = model.set(b.which, l, {data + at, DType::f32},
                                    b.per_layer ? std::string(b.name) + " of layer " + std::to_string(l) : b.name);
      if (!error.empty()) return error;
      at += count * 4;
    }
  }
  return {};
}

// Floats the blocks hold (the sizes are bounded by check_llama_config: no overflow in 64 bits;
// in 32 bits the product is checked by the caller against the file size via division).
bool block_floats(const std::vector<Block>& blocks, const Llama& model, std::size_t& total) {
  total = 0;
  for (const Block& b : blocks) {
    const std::size_t count = model.weight_size(b.which);
    const std::size_t times = b.per_layer ? model.config().layers : 1;
    if (count && times > std::numeric_limits<std::size_t>::max() / count) return false;
    if (total > std::numeric_limits<std::size_t>::max() - count * times) return false;
    total += count * times;
  }
  return true;
}

}  // namespace

std::string load_llama2c(Span<const std::uint8_t> bytes, Llama& model, std::size_t max_bytes) {
  if (bytes.size < 28)
    return "the model file has " + bytes_text(bytes.size) + ": too short for a llama2.c checkpoint header";
  std::uint32_t magic;
  std::memcpy(&magic, bytes.data, 4);
  const bool versioned = magic == kVersionMagic;
  std::size_t header = 28;
  const std::uint8_t* params = bytes.data;
  bool shared = true;
  if (versioned) {
    const std::int32_t version = read_i32(bytes.data + 4);
    if (version == 2)
      return "the model file is a llama2.c version-2 export (int8-quantised weights), which is not "
             "supported: export it with version 0 (legacy) or 1 (float32)";
    if (version != 1)
      return "the model file says llama2.c export version " + std::to_string(version) +
             "; only the legacy format and version 1 are supported";
    if (bytes.size < kVersionHeaderBytes)
      return "the model file is truncated: a version-1 header takes 256 bytes, the file has " + bytes_text(bytes.size);
    params = bytes.data + 8;
    shared = bytes.data[36] != 0;
    header = kVersionHeaderBytes;
  }
  std::int32_t h[7];
  for (int i = 0; i < 7; ++i) h[i] = read_i32(params + 4 * i);
  for (int i = 0; i < 7; ++i)
    if (i != 5 && h[i] <= 0)
      return "the model file's header holds " + std::to_string(h[i]) + " at field " + std::to_string(i) +
             ": not a llama2.c checkpoint (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len)";
  if (h[5] == 0 || h[5] == std::numeric_limits<std::int32_t>::min())
    return "the model file's header gives vocab_size " + std::to_string(h[5]) + ": not a llama2.c checkpoint";
  if (!versioned) shared = h[5] > 0;
  LlamaConfig c;
  c.dim = static_cast<std::size_t>(h[0]);
  c.hidden_dim = static_cast<std::size_t>(h[1]);
  c.layers = static_cast<std::size_t>(h[2]);
  c.heads = static_cast<std::size_t>(h[3]);
  c.kv_heads = static_cast<std::size_t>(h[4]);
  c.vocab_size = static_cast<std::size_t>(h[5] < 0 ? -static_cast<std::int64_t>(h[5]) : h[5]);
  c.seq_len = static_cast<std::size_t>(h[6]);
  c.head_dim = c.dim / c.heads;
  c.shared_classifier = shared;
  c.rope = RopeLayout::interleaved;
  std::string error = check_llama_config(c);
  if (!error.empty()) return error + " (from the llama2.c header)";

  using W = LlamaWeight;
  // The two file orders, built once (constructing rather than assigning a vector from an
  // initializer list: GCC 12 warns -Wnonnull about the assignment's memmove from an empty vector).
  const std::vector<Block> blocks =
      versioned ? std::vector<Block>{{W::rms_att, true, "rms_att"}, {W::rms_ffn, true, "rms_ffn"},
                                     {W::rms_final, false, "rms_final"}, {W::embedding, false, "token_embedding"},
                                     {W::wq, true, "wq"}, {W::wk, true, "wk"}, {W::wv, true, "wv"},
                                     {W::wo, true, "wo"}, {W::w1, true, "w1"}, {W::w2, true, "w2"},
                                     {W::w3, true, "w3"}}
                : std::vector<Block>{{W::embedding, false, "token_embedding"}, {W::rms_att, true, "rms_att"},
                                     {W::wq, true, "wq"}, {W::wk, true, "wk"}, {W::wv, true, "wv"},
                                     {W::wo, true, "wo"}, {W::rms_ffn, true, "rms_ffn"}, {W::w1, true, "w1"},
                                     {W::w2, true, "w2"}, {W::w3, true, "w3"}, {W::rms_final, false, "rms_final"}};
  // Expected size, computed before allocating (allocate() sizes come from the same config).
  const std::size_t d = c.dim, kv = c.kv_dim(), hd = c.head_dim;
  const std::size_t freq_floats = versioned ? 0 : c.seq_len * hd;  // legacy freq_cis_real + imag
  const double per_layer = 2.0 * d + 2.0 * d * d + 2.0 * d * kv + 3.0 * d * c.hidden_dim;
  const double expected_floats = static_cast<double>(c.vocab_size) * d * (shared ? 1 : 2) +
                                 static_cast<double>(c.layers) * per_layer + d + static_cast<double>(freq_floats);
  const double expected = static_cast<double>(header) + 4 * expected_floats;
  if (static_cast<double>(bytes.size) != expected) {
    const std::string what = static_cast<double>(bytes.size) < expected ? "truncated" : "longer than its header says";
    return "the model file is " + what + ": its header (dim " + std::to_string(c.dim) + ", " +
           std::to_string(c.layers) + " layers, vocab " + std::to_string(c.vocab_size) + ", seq_len " +
           std::to_string(c.seq_len) + ") needs " + std::to_string(static_cast<unsigned long long>(expected)) +
           " bytes, the file has " + std::to_string(bytes.size);
  }
  error = model.allocate(c, max_bytes);
  if (!error.empty()) return error;
  std::size_t floats;
  if (!block_floats(blocks, model, floats)) return "the model is too large";
  const std::uint8_t* data = bytes.data + header;
  const std::size_t size = bytes.size - header;
  error = load_blocks(blocks, data, size, model);
  if (!error.empty()) return error;
  if (!shared) {
    const std::size_t at = (floats + freq_floats) * 4;
    if (at > size || (size - at) / 4 < model.weight_size(W::classifier)) return "the model file is truncated in the classifier";
    error = model.set(W::classifier, 0, {data + at, DType::f32}, "classifier");
    if (!error.empty()) return error;
  }
  return model.finish();
}

namespace {

// An integer field of config.json in [1, max] (or `fallback` when absent and fallback > 0).
std::string int_field(const Json& json, const char* key, std::size_t max, std::size_t fallback, std::size_t& out) {
  const Json* v = json.get(key);
  if (!v || v->is(Json::Type::null)) {
    if (fallback) return out = fallback, std::string();
    return std::string("config.json lacks \"") + key + "\"";
  }
  if (!v->is(Json::Type::number) || !(v->number >= 1) || v->number > static_cast<double>(max) ||
      v->number != std::floor(v->number))
    return std::string("config.json: \"") + key + "\" must be an integer from 1 to " + std::to_string(max);
  out = static_cast<std::size_t>(v->number);
  return {};
}

std::string float_field(const Json& json, const char* key, float fallback, float& out) {
  const Json* v = json.get(key);
  if (!v || v->is(Json::Type::null)) return out = fallback, std::string();
  if (!v->is(Json::Type::number) || !(v->number > 0) || !std::isfinite(static_cast<float>(v->number)))
    return std::string("config.json: \"") + key + "\" must be a number > 0";
  out = static_cast<float>(v->number);
  return {};
}

}  // namespace

std::string parse_llama_config_json(std::string_view text, LlamaConfig& c) {
  Json json;
  std::string error = parse_json(text, json);
  if (!error.empty()) return "config.json is not valid JSON: " + error;
  if (!json.is(Json::Type::object)) return "config.json must hold a JSON object";
  if (const Json* t = json.get("model_type"); t && !(t->is(Json::Type::string) && t->string == "llama"))
    return "config.json: \"model_type\" must be \"llama\" (this loader runs the Llama architecture)";
  if (const Json* a = json.get("architectures"); a && a->is(Json::Type::array)) {
    bool llama = false;
    for (const Json& name : a->array) llama |= name.is(Json::Type::string) && name.string == "LlamaForCausalLM";
    if (!llama) return "config.json: \"architectures\" must include \"LlamaForCausalLM\"";
  }
  if (const Json* act = json.get("hidden_act"); act && !(act->is(Json::Type::string) && act->string == "silu"))
    return "config.json: \"hidden_act\" must be \"silu\" (SwiGLU)";
  if (const Json* s = json.get("rope_scaling"); s && !s->is(Json::Type::null))
    return "config.json: \"rope_scaling\" is not supported (it must be null)";
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (const Json* b = json.get(key); b && !(b->is(Json::Type::boolean) && !b->boolean))
      return std::string("config.json: \"") + key + "\" must be false (the loader has no biases)";
  c = LlamaConfig{};
  if (!(error = int_field(json, "hidden_size", kLlamaMaxDim, 0, c.dim)).empty()) return error;
  if (!(error = int_field(json, "intermediate_size", kLlamaMaxHidden, 0, c.hidden_dim)).empty()) return error;
  if (!(error = int_field(json, "num_hidden_layers", kLlamaMaxLayers, 0, c.layers)).empty()) return error;
  if (!(error = int_field(json, "num_attention_heads", kLlamaMaxHeads, 0, c.heads)).empty()) return error;
  if (!(error = int_field(json, "num_key_value_heads", kLlamaMaxHeads, c.heads, c.kv_heads)).empty()) return error;
  if (!(error = int_field(json, "vocab_size", kLlamaMaxVocab, 0, c.vocab_size)).empty()) return error;
  if (!(error = int_field(json, "max_position_embeddings", kLlamaMaxSeqLen, 0, c.seq_len)).empty()) return error;
  c.head_dim = c.dim / c.heads;
  std::size_t head_dim = c.head_dim;
  if (!(error = int_field(json, "head_dim", kLlamaMaxDim, c.head_dim, head_dim)).empty()) return error;
  if (head_dim != c.head_dim)
    return "config.json: \"head_dim\" (" + std::to_string(head_dim) + ") must be hidden_size / num_attention_heads (" +
           std::to_string(c.head_dim) + ")";
  if (!(error = float_field(json, "rms_norm_eps", 1e-6f, c.norm_eps)).empty()) return error;
  if (!(error = float_field(json, "rope_theta", 10000.0f, c.rope_theta)).empty()) return error;
  c.shared_classifier = false;  // transformers' LlamaConfig default
  if (const Json* tie = json.get("tie_word_embeddings"); tie && !tie->is(Json::Type::null)) {
    if (!tie->is(Json::Type::boolean)) return "config.json: \"tie_word_embeddings\" must be true or false";
    c.shared_classifier = tie->boolean;
  }
  c.rope = RopeLayout::half;
  error = check_llama_config(c);
  return error.empty() ? error : error + " (from config.json)";
}

namespace {

struct SafeTensor {
  std::string name;
  DType dtype;
  const std::uint8_t* data;
  std::vector<std::size_t> shape;
};

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string parse_safetensors(Span<const std::uint8_t> bytes, std::vector<SafeTensor>& out) {
  if (bytes.size < 8) return "the safetensors file has " + bytes_text(bytes.size) + ": too short";
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | bytes.data[i];
  if (header < 2 || header > bytes.size - 8 || header > kMaxSafetensorsHeader)
    return "the safetensors file gives a header length of " + std::to_string(header) + " bytes for a file of " +
           std::to_string(bytes.size) + ": it is truncated or not a safetensors file";
  Json json;
  std::string error = parse_json({reinterpret_cast<const char*>(bytes.data + 8), static_cast<std::size_t>(header)}, json);
  if (!error.empty()) return "the safetensors header is not valid JSON: " + error;
  if (!json.is(Json::Type::object)) return "the safetensors header must be a JSON object";
  const std::uint8_t* data = bytes.data + 8 + header;
  const std::size_t data_size = bytes.size - 8 - static_cast<std::size_t>(header);
  for (const auto& [name, t] : json.object) {
    if (name == "__metadata__") continue;
    const Json* dtype = t.get("dtype");
    const Json* shape = t.get("shape");
    const Json* offsets = t.get("data_offsets");
    if (!dtype || !dtype->is(Json::Type::string) || !shape || !shape->is(Json::Type::array) || !offsets ||
        !offsets->is(Json::Type::array) || offsets->array.size() != 2)
      return "the safetensors entry '" + name + "' lacks dtype, shape or data_offsets";
    SafeTensor st;
    st.name = name;
    std::size_t element;
    if (dtype->string == "F32") st.dtype = DType::f32, element = 4;
    else if (dtype->string == "F16") st.dtype = DType::f16, element = 2;
    else if (dtype->string == "BF16") st.dtype = DType::bf16, element = 2;
    else return "tensor '" + name + "' has dtype " + dtype->string + "; supported: F32, F16, BF16";
    double count = 1;
    for (const Json& dim : shape->array) {
      if (!dim.is(Json::Type::number) || !(dim.number >= 0) || dim.number != std::floor(dim.number) || dim.number > 1e12)
        return "tensor '" + name + "' has an invalid shape";
      st.shape.push_back(static_cast<std::size_t>(dim.number));
      count *= dim.number;
    }
    const Json& b = offsets->array[0];
    const Json& e = offsets->array[1];
    if (!b.is(Json::Type::number) || !e.is(Json::Type::number) || !(b.number >= 0) || !(e.number >= b.number) ||
        b.number != std::floor(b.number) || e.number != std::floor(e.number) ||
        e.number > static_cast<double>(data_size))
      return "tensor '" + name + "' has data_offsets outside the file's " + std::to_string(data_size) +
             " data bytes: the file is truncated or corrupt";
    if (e.number - b.number != count * static_cast<double>(element))
      return "tensor '" + name + "' " + shape_text(st.shape) + " " + dtype->string + " needs " +
             std::to_string(static_cast<unsigned long long>(count * static_cast<double>(element))) +
             " bytes, its data_offsets give " + std::to_string(static_cast<unsigned long long>(e.number - b.number));
    st.data = data + static_cast<std::size_t>(b.number);
    out.push_back(std::move(st));
  }
  return {};
}

}  // namespace

std::string load_huggingface(std::string_view config_json, Span<const std::uint8_t> safetensors, Llama& model,
                             std::size_t max_bytes) {
  LlamaConfig c;
  std::string error = parse_llama_config_json(config_json, c);
  if (!error.empty()) return error;
  std::vector<SafeTensor> tensors;
  error = parse_safetensors(safetensors, tensors);
  if (!error.empty()) return error;
  bool has_head = false;
  for (const SafeTensor& t : tensors) has_head |= t.name == "lm_head.weight";
  if (!c.shared_classifier && !has_head)
    return "config.json says tie_word_embeddings is false, but the safetensors file has no 'lm_head.weight'";
  error = model.allocate(c, max_bytes);
  if (!error.empty()) return error;
  using W = LlamaWeight;
  const std::size_t d = c.dim, kv = c.kv_dim(), h = c.hidden_dim;
  struct Known {
    const char* suffix;
    W which;
    std::vector<std::size_t> shape;
  };
  const std::vector<Known> per_layer = {
      {"input_layernorm.weight", W::rms_att, {d}},       {"self_attn.q_proj.weight", W::wq, {d, d}},
      {"self_attn.k_proj.weight", W::wk, {kv, d}},       {"self_attn.v_proj.weight", W::wv, {kv, d}},
      {"self_attn.o_proj.weight", W::wo, {d, d}},        {"post_attention_layernorm.weight", W::rms_ffn, {d}},
      {"mlp.gate_proj.weight", W::w1, {h, d}},           {"mlp.down_proj.weight", W::w2, {d, h}},
      {"mlp.up_proj.weight", W::w3, {h, d}}};
  for (const SafeTensor& t : tensors) {
    W which;
    std::size_t layer = 0;
    std::vector<std::size_t> shape;
    if (t.name == "model.embed_tokens.weight") which = W::embedding, shape = {c.vocab_size, d};
    else if (t.name == "model.norm.weight") which = W::rms_final, shape = {d};
    else if (t.name == "lm_head.weight") {
      if (c.shared_classifier) continue;  // tied: the embedding is the head
      which = W::classifier, shape = {c.vocab_size, d};
    } else if (t.name.rfind("model.layers.", 0) == 0) {
      const std::string rest = t.name.substr(13);
      const std::size_t dot = rest.find('.');
      if (dot == std::string::npos || dot == 0 || dot > 4 || rest.find_first_not_of("0123456789") != dot) continue;
      layer = std::stoul(rest.substr(0, dot));
      const std::string suffix = rest.substr(dot + 1);
      const Known* known = nullptr;
      for (const Known& k : per_layer)
        if (suffix == k.suffix) known = &k;
      if (!known) continue;  // e.g. rotary_emb.inv_freq of older exports: recomputed here
      if (layer >= c.layers)
        return "tensor '" + t.name + "' is for layer " + std::to_string(layer) + ", but config.json has " +
               std::to_string(c.layers) + " layers";
      which = known->which;
      shape = known->shape;
    } else {
      continue;
    }
    if (t.shape != shape)
      return "tensor '" + t.name + "' has shape " + shape_text(t.shape) + ", expected " + shape_text(shape) +
             " from config.json";
    error = model.set(which, layer, {t.data, t.dtype}, t.name);
    if (!error.empty()) return error;
  }
  return model.finish();
}

}  // namespace attnlens::model
