// Loaders for Llama-family checkpoints, all untrusted input: every size is checked against the
// bytes present before it is read, and the model is refused (a message, never a crash) before
// anything is allocated when it would not fit `max_bytes` (weights + a full-context KV cache).
//   llama2.c .bin: the legacy header (7 int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
//     vocab_size (negative = separate classifier), seq_len) followed by float32 arrays in
//     run.c's order, or export.py's version-1 header ("ak42", version 1, the 7 int32, a shared
//     classifier byte, zero padding to 256 bytes) followed by float32 arrays in its order.
//     Version 2 (int8-quantised) files are refused with a message.
//   Hugging Face: config.json (LlamaForCausalLM) + model.safetensors (F32, F16 or BF16 tensors,
//     lm_head tied or not), whose q_proj/k_proj rows pair up for rotate-half RoPE.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "attnlens/model/llama.hpp"
#include "attnlens/span.hpp"

namespace attnlens::model {

// "" or a message; on success `model` holds the weights (copied: `bytes` may be freed).
std::string load_llama2c(Span<const std::uint8_t> bytes, Llama& model, std::size_t max_bytes);
std::string load_huggingface(std::string_view config_json, Span<const std::uint8_t> safetensors,
                             Llama& model, std::size_t max_bytes);

// The configuration a config.json describes ("" or a message), without loading weights.
std::string parse_llama_config_json(std::string_view config_json, LlamaConfig& out);

}  // namespace attnlens::model
