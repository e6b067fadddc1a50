#include "attnlens/model/architectures.hpp"

#include <cmath>

#include "attnlens/model/json.hpp"

namespace attnlens::model {

namespace {

using Kind = TensorPlace::Kind;

// One row of a name table: `pattern` with "{L}" standing for the layer number.
struct Rule {
  const char* pattern;
  Kind kind;
  Role role;
  bool transposed;
};

constexpr Rule R(const char* p, Role r, bool t = false) { return {p, Kind::role, r, t}; }
constexpr Rule Ignore(const char* p) { return {p, Kind::ignored, Role::token_embedding, false}; }

// GPT-2 (transformers' GPT2LMHeadModel; the file may or may not prefix "transformer."). Conv1D
// weights are stored [in, out]; c_attn holds q, k and v side by side.
const std::vector<Rule> kGpt2 = {
    R("wte.weight", Role::token_embedding), R("wpe.weight", Role::position_embedding),
    R("h.{L}.ln_1.weight", Role::attn_norm), R("h.{L}.ln_1.bias", Role::attn_norm_bias),
    {"h.{L}.attn.c_attn.weight", Kind::fused_qkv, Role::q, true},
    {"h.{L}.attn.c_attn.bias", Kind::fused_qkv, Role::q_bias, false},
    R("h.{L}.attn.c_proj.weight", Role::o, true), R("h.{L}.attn.c_proj.bias", Role::o_bias),
    R("h.{L}.ln_2.weight", Role::ffn_norm), R("h.{L}.ln_2.bias", Role::ffn_norm_bias),
    R("h.{L}.mlp.c_fc.weight", Role::up, true), R("h.{L}.mlp.c_fc.bias", Role::up_bias),
    R("h.{L}.mlp.c_proj.weight", Role::down, true), R("h.{L}.mlp.c_proj.bias", Role::down_bias),
    R("ln_f.weight", Role::final_norm), R("ln_f.bias", Role::final_norm_bias),
    R("lm_head.weight", Role::lm_head),
    // The causal-mask buffers older exports store.
    Ignore("h.{L}.attn.bias"), Ignore("h.{L}.attn.masked_bias")};

// BERT (prefix "bert." optional; old checkpoints name LayerNorm's parameters gamma/beta).
const std::vector<Rule> kBert = {
    R("embeddings.word_embeddings.weight", Role::token_embedding),
    R("embeddings.position_embeddings.weight", Role::position_embedding),
    R("embeddings.token_type_embeddings.weight", Role::type_embedding),
    R("embeddings.LayerNorm.weight", Role::embedding_norm), R("embeddings.LayerNorm.bias", Role::embedding_norm_bias),
    R("encoder.layer.{L}.attention.self.query.weight", Role::q), R("encoder.layer.{L}.attention.self.query.bias", Role::q_bias),
    R("encoder.layer.{L}.attention.self.key.weight", Role::k), R("encoder.layer.{L}.attention.self.key.bias", Role::k_bias),
    R("encoder.layer.{L}.attention.self.value.weight", Role::v), R("encoder.layer.{L}.attention.self.value.bias", Role::v_bias),
    R("encoder.layer.{L}.attention.output.dense.weight", Role::o), R("encoder.layer.{L}.attention.output.dense.bias", Role::o_bias),
    R("encoder.layer.{L}.attention.output.LayerNorm.weight", Role::attn_norm),
    R("encoder.layer.{L}.attention.output.LayerNorm.bias", Role::attn_norm_bias),
    R("encoder.layer.{L}.intermediate.dense.weight", Role::up), R("encoder.layer.{L}.intermediate.dense.bias", Role::up_bias),
    R("encoder.layer.{L}.output.dense.weight", Role::down), R("encoder.layer.{L}.output.dense.bias", Role::down_bias),
    R("encoder.layer.{L}.output.LayerNorm.weight", Role::ffn_norm), R("encoder.layer.{L}.output.LayerNorm.bias", Role::ffn_norm_bias),
    R("cls.predictions.transform.dense.weight", Role::mlm_dense), R("cls.predictions.transform.dense.bias", Role::mlm_dense_bias),
    R("cls.predictions.transform.LayerNorm.weight", Role::mlm_norm),
    R("cls.predictions.transform.LayerNorm.bias", Role::mlm_norm_bias),
    R("cls.predictions.bias", Role::mlm_bias), R("cls.predictions.decoder.bias", Role::mlm_bias),
    Ignore("cls.predictions.decoder.weight"),  // tied to the word embeddings
    Ignore("embeddings.position_ids")};

const std::vector<Rule> kDistilBert = {
    R("embeddings.word_embeddings.weight", Role::token_embedding),
    R("embeddings.position_embeddings.weight", Role::position_embedding),
    R("embeddings.LayerNorm.weight", Role::embedding_norm), R("embeddings.LayerNorm.bias", Role::embedding_norm_bias),
    R("transformer.layer.{L}.attention.q_lin.weight", Role::q), R("transformer.layer.{L}.attention.q_lin.bias", Role::q_bias),
    R("transformer.layer.{L}.attention.k_lin.weight", Role::k), R("transformer.layer.{L}.attention.k_lin.bias", Role::k_bias),
    R("transformer.layer.{L}.attention.v_lin.weight", Role::v), R("transformer.layer.{L}.attention.v_lin.bias", Role::v_bias),
    R("transformer.layer.{L}.attention.out_lin.weight", Role::o), R("transformer.layer.{L}.attention.out_lin.bias", Role::o_bias),
    R("transformer.layer.{L}.sa_layer_norm.weight", Role::attn_norm), R("transformer.layer.{L}.sa_layer_norm.bias", Role::attn_norm_bias),
    R("transformer.layer.{L}.ffn.lin1.weight", Role::up), R("transformer.layer.{L}.ffn.lin1.bias", Role::up_bias),
    R("transformer.layer.{L}.ffn.lin2.weight", Role::down), R("transformer.layer.{L}.ffn.lin2.bias", Role::down_bias),
    R("transformer.layer.{L}.output_layer_norm.weight", Role::ffn_norm),
    R("transformer.layer.{L}.output_layer_norm.bias", Role::ffn_norm_bias),
    R("vocab_transform.weight", Role::mlm_dense), R("vocab_transform.bias", Role::mlm_dense_bias),
    R("vocab_layer_norm.weight", Role::mlm_norm), R("vocab_layer_norm.bias", Role::mlm_norm_bias),
    R("vocab_projector.bias", Role::mlm_bias), Ignore("vocab_projector.weight"),
    Ignore("embeddings.position_ids")};

// The Llama family (prefix "model."; lm_head at the top level).
const std::vector<Rule> kLlama = {
    R("embed_tokens.weight", Role::token_embedding),
    R("layers.{L}.input_layernorm.weight", Role::attn_norm),
    R("layers.{L}.self_attn.q_proj.weight", Role::q), R("layers.{L}.self_attn.q_proj.bias", Role::q_bias),
    R("layers.{L}.self_attn.k_proj.weight", Role::k), R("layers.{L}.self_attn.k_proj.bias", Role::k_bias),
    R("layers.{L}.self_attn.v_proj.weight", Role::v), R("layers.{L}.self_attn.v_proj.bias", Role::v_bias),
    R("layers.{L}.self_attn.o_proj.weight", Role::o), R("layers.{L}.self_attn.o_proj.bias", Role::o_bias),
    R("layers.{L}.post_attention_layernorm.weight", Role::ffn_norm),
    R("layers.{L}.mlp.gate_proj.weight", Role::gate), R("layers.{L}.mlp.up_proj.weight", Role::up),
    R("layers.{L}.mlp.down_proj.weight", Role::down), R("norm.weight", Role::final_norm),
    R("lm_head.weight", Role::lm_head),
    Ignore("layers.{L}.self_attn.rotary_emb.inv_freq")};  // recomputed from rope_theta

struct Table {
  const std::vector<Rule>* rules;
  const char* prefix;  // optional in front of every name
};

Table table_of(const Spec& s) {
  if (s.model_type == "gpt2") return {&kGpt2, "transformer."};
  if (s.model_type == "bert") return {&kBert, "bert."};
  if (s.model_type == "distilbert") return {&kDistilBert, "distilbert."};
  return {&kLlama, "model."};  // llama, mistral, qwen2, llama2.c
}

// Matches `name` against `pattern`, reading "{L}" as a decimal layer number.
bool matches(std::string_view pattern, std::string_view name, std::size_t& layer) {
  const std::size_t at = pattern.find("{L}");
  if (at == std::string_view::npos) return pattern == name;
  if (name.substr(0, at) != pattern.substr(0, at)) return false;
  std::size_t end = at, value = 0;
  while (end < name.size() && end - at < 4 && name[end] >= '0' && name[end] <= '9')
    value = value * 10 + static_cast<std::size_t>(name[end++] - '0');
  if (end == at || (name[at] == '0' && end - at > 1)) return false;
  layer = value;
  return name.substr(end) == pattern.substr(at + 3);
}

// ---- config.json fields ---------------------------------------------------------------------

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

std::string bool_field(const Json& json, const char* key, bool fallback, bool& out) {
  const Json* v = json.get(key);
  if (!v || v->is(Json::Type::null)) return out = fallback, std::string();
  if (!v->is(Json::Type::boolean)) return std::string("config.json: \"") + key + "\" must be true or false";
  out = v->boolean;
  return {};
}

std::string string_field(const Json& json, const char* key, const char* fallback, std::string& out) {
  const Json* v = json.get(key);
  if (!v || v->is(Json::Type::null)) return out = fallback, std::string();
  if (!v->is(Json::Type::string)) return std::string("config.json: \"") + key + "\" must be a string";
  out = v->string;
  return {};
}

// The activation named by `key`: GELU (tanh or erf) here; SiLU is checked by the Llama mapping.
std::string gelu_field(const Json& json, const char* key, const char* fallback, Activation& out) {
  std::string name;
  std::string error = string_field(json, key, fallback, name);
  if (!error.empty()) return error;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") out = Activation::gelu_tanh;
  else if (name == "gelu") out = Activation::gelu_erf;
  else return std::string("config.json: \"") + key + "\" is \"" + name + "\"; supported: gelu, gelu_new, gelu_pytorch_tanh";
  return {};
}

// The first of `known` that config.json's "architectures" lists ("" when it lists none of them
// or has no such field: then `fallback`); a message when it lists only others.
std::string architecture(const Json& json, const std::vector<const char*>& known, const char* fallback, std::string& out) {
  const Json* a = json.get("architectures");
  out = fallback;
  if (!a || a->is(Json::Type::null)) return {};
  if (!a->is(Json::Type::array)) return "config.json: \"architectures\" must be an array of names";
  for (const Json& name : a->array)
    for (const char* k : known)
      if (name.is(Json::Type::string) && name.string == k) return out = k, std::string();
  std::string list;
  for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  std::string given = a->array.empty() || !a->array[0].is(Json::Type::string) ? "none" : "\"" + a->array[0].string + "\"";
  return "config.json: \"architectures\" names " + given + "; supported for this model_type: " + list;
}

#define TRY(expr)                            \
  do {                                       \
    std::string error_ = (expr);             \
    if (!error_.empty()) return error_;      \
  } while (0)

std::string gpt2_spec(const Json& j, Spec& s) {
  TRY(architecture(j, {"GPT2LMHeadModel", "GPT2Model"}, "GPT2LMHeadModel", s.architecture));
  TRY(int_field(j, "n_embd", kMaxDim, 0, s.dim));
  TRY(int_field(j, "n_layer", kMaxLayers, 0, s.layers));
  TRY(int_field(j, "n_head", kMaxHeads, 0, s.heads));
  TRY(int_field(j, "vocab_size", kMaxVocab, 0, s.vocab));
  std::size_t ctx = 0;
  TRY(int_field(j, "n_ctx", kMaxContext, 1024, ctx));
  TRY(int_field(j, "n_positions", kMaxContext, ctx, s.positions));
  TRY(int_field(j, "n_inner", kMaxFfn, 4 * s.dim, s.ffn));
  TRY(float_field(j, "layer_norm_epsilon", 1e-5f, s.eps));
  TRY(gelu_field(j, "activation_function", "gelu_new", s.activation));
  bool flag;
  TRY(bool_field(j, "scale_attn_weights", true, flag));
  if (!flag) return "config.json: \"scale_attn_weights\" false is not supported";
  TRY(bool_field(j, "scale_attn_by_inverse_layer_idx", false, flag));
  if (flag) return "config.json: \"scale_attn_by_inverse_layer_idx\" true is not supported";
  TRY(bool_field(j, "add_cross_attention", false, flag));
  if (flag) return "config.json: \"add_cross_attention\" true is not supported";
  TRY(bool_field(j, "tie_word_embeddings", true, s.tied_head));
  if (s.dim % s.heads) return "config.json: \"n_embd\" must be a multiple of \"n_head\"";
  s.kv_heads = s.heads, s.head_dim = s.dim / s.heads, s.context = s.positions;
  s.norm = NormKind::layer, s.rope = false, s.gated = false, s.causal = true, s.pre_norm = true;
  s.qkv_bias = s.out_bias = s.mlp_bias = true;
  s.head = HeadKind::causal_lm;
  return {};
}

std::string bert_spec(const Json& j, Spec& s, bool distil) {
  if (distil) {
    TRY(architecture(j, {"DistilBertForMaskedLM", "DistilBertModel"}, "DistilBertModel", s.architecture));
    TRY(int_field(j, "dim", kMaxDim, 0, s.dim));
    TRY(int_field(j, "n_layers", kMaxLayers, 0, s.layers));
    TRY(int_field(j, "n_heads", kMaxHeads, 0, s.heads));
    TRY(int_field(j, "hidden_dim", kMaxFfn, 0, s.ffn));
    TRY(gelu_field(j, "activation", "gelu", s.activation));
    bool sinusoidal;
    TRY(bool_field(j, "sinusoidal_pos_embds", false, sinusoidal));
    if (sinusoidal) return "config.json: \"sinusoidal_pos_embds\" true is not supported";
    s.eps = 1e-12f;  // DistilBERT's LayerNorms, fixed in its code
    s.head = s.architecture == "DistilBertForMaskedLM" ? HeadKind::masked_lm : HeadKind::none;
  } else {
    TRY(architecture(j, {"BertForMaskedLM", "BertForPreTraining", "BertModel"}, "BertModel", s.architecture));
    TRY(int_field(j, "hidden_size", kMaxDim, 0, s.dim));
    TRY(int_field(j, "num_hidden_layers", kMaxLayers, 0, s.layers));
    TRY(int_field(j, "num_attention_heads", kMaxHeads, 0, s.heads));
    TRY(int_field(j, "intermediate_size", kMaxFfn, 0, s.ffn));
    TRY(int_field(j, "type_vocab_size", 64, 2, s.type_vocab));
    TRY(float_field(j, "layer_norm_eps", 1e-12f, s.eps));
    TRY(gelu_field(j, "hidden_act", "gelu", s.activation));
    std::string position;
    TRY(string_field(j, "position_embedding_type", "absolute", position));
    if (position != "absolute") return "config.json: \"position_embedding_type\" \"" + position + "\" is not supported (only absolute)";
    bool decoder;
    TRY(bool_field(j, "is_decoder", false, decoder));
    if (decoder) return "config.json: \"is_decoder\" true is not supported";
    s.head = s.architecture == "BertModel" ? HeadKind::none : HeadKind::masked_lm;
  }
  TRY(int_field(j, "vocab_size", kMaxVocab, 0, s.vocab));
  TRY(int_field(j, "max_position_embeddings", kMaxContext, 512, s.positions));
  if (s.dim % s.heads) return "config.json: the hidden size must be a multiple of the number of heads";
  s.kv_heads = s.heads, s.head_dim = s.dim / s.heads, s.context = s.positions;
  s.norm = NormKind::layer, s.rope = false, s.gated = false, s.causal = false, s.pre_norm = false;
  s.embedding_norm = true, s.qkv_bias = s.out_bias = s.mlp_bias = true, s.tied_head = true;
  return {};
}

std::string llama_spec(const Json& j, Spec& s) {
  const char* name = s.model_type == "llama" ? "LlamaForCausalLM" : s.model_type == "mistral" ? "MistralForCausalLM" : "Qwen2ForCausalLM";
  TRY(architecture(j, {name}, name, s.architecture));
  std::string act;
  TRY(string_field(j, "hidden_act", "silu", act));
  if (act != "silu") return "config.json: \"hidden_act\" must be \"silu\" (SwiGLU), not \"" + act + "\"";
  if (const Json* r = j.get("rope_scaling"); r && !r->is(Json::Type::null))
    return "config.json: \"rope_scaling\" is not supported (it must be null)";
  bool mlp_bias;
  TRY(bool_field(j, "mlp_bias", false, mlp_bias));
  if (mlp_bias) return "config.json: \"mlp_bias\" true is not supported";
  TRY(bool_field(j, "attention_bias", s.model_type == "qwen2", s.qkv_bias));
  s.out_bias = s.model_type == "qwen2" ? false : s.qkv_bias;  // Qwen2: biases on q, k, v only
  TRY(int_field(j, "hidden_size", kMaxDim, 0, s.dim));
  TRY(int_field(j, "intermediate_size", kMaxFfn, 0, s.ffn));
  TRY(int_field(j, "num_hidden_layers", kMaxLayers, 0, s.layers));
  TRY(int_field(j, "num_attention_heads", kMaxHeads, 0, s.heads));
  TRY(int_field(j, "num_key_value_heads", kMaxHeads, s.heads, s.kv_heads));
  TRY(int_field(j, "vocab_size", kMaxVocab, 0, s.vocab));
  TRY(int_field(j, "max_position_embeddings", kMaxContext, 0, s.context));
  const Json* head_dim = j.get("head_dim");
  if ((!head_dim || head_dim->is(Json::Type::null)) && s.dim % s.heads)
    return "the model's head size must divide hidden_size (" + std::to_string(s.dim) + ") by num_attention_heads (" +
           std::to_string(s.heads) + ") (from config.json)";
  TRY(int_field(j, "head_dim", kMaxDim, s.dim / s.heads ? s.dim / s.heads : 1, s.head_dim));
  TRY(float_field(j, "rms_norm_eps", 1e-6f, s.eps));
  TRY(float_field(j, "rope_theta", 10000.0f, s.rope_theta));
  TRY(bool_field(j, "tie_word_embeddings", false, s.tied_head));
  // A sliding window changes nothing while sequences are no longer than it: keep them so.
  bool sliding = s.model_type == "mistral";
  TRY(bool_field(j, "use_sliding_window", sliding, sliding));
  if (sliding)
    if (const Json* w = j.get("sliding_window"); w && !w->is(Json::Type::null)) {
      std::size_t window = 0;
      TRY(int_field(j, "sliding_window", kMaxContext, 0, window));
      if (window < s.context) s.context = window;
    }
  s.norm = NormKind::rms, s.rope = true, s.rope_layout = RopeLayout::half, s.activation = Activation::silu;
  s.gated = true, s.causal = true, s.pre_norm = true, s.mlp_bias = false, s.head = HeadKind::causal_lm;
  return {};
}

}  // namespace

std::string spec_from_config(std::string_view text, Spec& s, std::size_t context) {
  Json json;
  std::string error = parse_json(text, json);
  if (!error.empty()) return "config.json is not valid JSON: " + error;
  if (!json.is(Json::Type::object)) return "config.json must hold a JSON object";
  s = Spec{};
  const Json* type = json.get("model_type");
  if (!type || !type->is(Json::Type::string))
    return std::string("config.json lacks \"model_type\" (a string); supported: ") + kSupportedModelTypes;
  s.model_type = type->string;
  if (s.model_type == "gpt2") error = gpt2_spec(json, s);
  else if (s.model_type == "bert") error = bert_spec(json, s, false);
  else if (s.model_type == "distilbert") error = bert_spec(json, s, true);
  else if (s.model_type == "llama" || s.model_type == "mistral" || s.model_type == "qwen2") error = llama_spec(json, s);
  else return "config.json: model_type \"" + s.model_type + "\" is not supported; supported: " + kSupportedModelTypes;
  if (!error.empty()) return error;
  if (context > 0 && context < s.context) s.context = context;
  error = check_spec(s);
  return error.empty() ? error : error + " (from config.json)";
}

TensorPlace place_tensor(const Spec& spec, const std::string& full) {
  const Table t = table_of(spec);
  std::string name = full;
  if (name.rfind(t.prefix, 0) == 0) name = name.substr(std::string_view(t.prefix).size());
  // Old BERT checkpoints: LayerNorm.gamma / .beta for .weight / .bias.
  auto ends = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends("LayerNorm.gamma")) name.replace(name.size() - 5, 5, "weight");
  else if (ends("LayerNorm.beta")) name.replace(name.size() - 4, 4, "bias");
  TensorPlace place;
  for (const Rule& r : *t.rules) {
    std::size_t layer = 0;
    if (!matches(r.pattern, name, layer)) continue;
    place.kind = r.kind;
    place.role = r.role;
    place.layer = layer;
    place.transposed = r.transposed;
    return place;
  }
  return place;
}

std::string tensor_name(const Spec& spec, Role role, std::size_t layer) {
  const Table t = table_of(spec);
  for (const Rule& r : *t.rules) {
    const bool fused = r.kind == Kind::fused_qkv &&
                       ((r.role == Role::q && (role == Role::q || role == Role::k || role == Role::v)) ||
                        (r.role == Role::q_bias && (role == Role::q_bias || role == Role::k_bias || role == Role::v_bias)));
    if (!(r.kind == Kind::role && r.role == role) && !fused) continue;
    std::string name = r.pattern;
    if (const std::size_t at = name.find("{L}"); at != std::string::npos) name.replace(at, 3, std::to_string(layer));
    return name;
  }
  return {};
}

}  // namespace attnlens::model
