// The architectures a Hugging Face config.json may name, each a config → Spec mapping and a
// table from the file's tensor names to the transformer's roles (architectures.cpp):
//   gpt2        GPT2LMHeadModel, GPT2Model (gpt2, distilgpt2, gpt2-medium/large/xl)
//   bert        BertModel, BertForMaskedLM, BertForPreTraining
//   distilbert  DistilBertModel, DistilBertForMaskedLM
//   llama, mistral, qwen2   LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attnlens/model/transformer.hpp"

namespace attnlens::model {

inline constexpr const char* kSupportedModelTypes = "gpt2, bert, distilbert, llama, mistral, qwen2";

// "" and the Spec, or a message (an unsupported model_type or option, a bad size). `context` > 0
// caps the positions kept.
std::string spec_from_config(std::string_view config_json, Spec& out, std::size_t context = 0);

// Where a tensor of the file goes.
struct TensorPlace {
  enum class Kind { role, fused_qkv, ignored, unknown } kind = Kind::unknown;
  Role role = Role::token_embedding;  // kind role; fused_qkv: Role::q (weight) or Role::q_bias
  std::size_t layer = 0;
  bool transposed = false;            // stored [in, out] (GPT-2's Conv1D)
};
TensorPlace place_tensor(const Spec& spec, const std::string& name);

// The name a file of this architecture gives a role (for "lacks" messages), e.g.
// "h.0.ln_1.weight"; "" when the table has none.
std::string tensor_name(const Spec& spec, Role role, std::size_t layer);

}  // namespace attnlens::model
