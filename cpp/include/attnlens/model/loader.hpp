// Loaders that fill a Transformer from checkpoint files, all untrusted input: every size is
// checked against the bytes present before it is read, and a model is refused (a message, never
// a crash) before its weights are allocated when they, with a KV cache for the whole context,
// would not fit `max_bytes`.
//   llama2.c .bin: the legacy header (7 int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
//     vocab_size (negative = separate classifier), seq_len) followed by float32 arrays in
//     run.c's order, or export.py's version-1 header ("ak42", version 1, the 7 int32, a shared
//     classifier byte, zero padding to 256 bytes) followed by float32 arrays in its order.
//     Version 2 (int8-quantised) files are refused with a message.
//   Hugging Face: config.json (architectures.hpp maps it to a Spec) and model.safetensors, or
//     its shards one at a time, F32/F16/BF16 tensors (the JS layer reads the shard index:
//     web/model/shards.js).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlens/model/architectures.hpp"
#include "attnlens/model/transformer.hpp"
#include "attnlens/span.hpp"

namespace attnlens::model {

// "" or a message; on success `model` holds the weights (copied: `bytes` may be freed).
std::string load_llama2c(Span<const std::uint8_t> bytes, Transformer& model, std::size_t max_bytes);

// One tensor of a safetensors file: its bytes are [begin, end) of the file, at `data` when the
// whole file was given.
struct SafeTensor {
  std::string name;
  WeightType type = WeightType::f32;
  const std::uint8_t* data = nullptr;
  std::size_t begin = 0, end = 0;
  std::vector<std::size_t> shape;
};
// "" when `bytes` are a well-formed safetensors file (every tensor's offsets inside the data,
// sizes matching shape × dtype), else a message.
std::string parse_safetensors(Span<const std::uint8_t> bytes, std::vector<SafeTensor>& out);
// The same from the file's first 8 + header-length bytes and its size alone (`data` stays null).
std::string parse_safetensors_header(Span<const std::uint8_t> head, std::size_t file_size, std::vector<SafeTensor>& out);

// A Hugging Face checkpoint loaded shard by shard: begin(), then for each file add_shard() (its
// bytes at once) or begin_shard() with its header and a tensor_buffer() / add_tensor() pair per
// planned tensor, then finish(). The weights are allocated tensor by tensor, so a caller needs
// only one shard's bytes beside them, or, tensor by tensor, none: a tensor kept as stored is
// taken over from its buffer, so the heap holds the weights plus one tensor being converted.
class HfLoader {
 public:
  // Reads config.json into the model's Spec; `context` > 0 caps the positions kept (the KV
  // cache is sized for them). "" or a message.
  std::string begin(std::string_view config_json, Transformer& model, std::size_t context = 0);
  // One safetensors file (`name` for messages). The first shard's dtype settles the memory
  // check: weights + KV cache for the context must fit `max_bytes` (what is free now).
  std::string add_shard(Span<const std::uint8_t> bytes, const std::string& name, std::size_t max_bytes);
  // Plans one file from its head (first 8 + header bytes) and size, checking names, shapes and
  // memory as add_shard() does. The planned tensors are in file order.
  std::string begin_shard(Span<const std::uint8_t> head, std::size_t file_size, const std::string& name,
                          std::size_t max_bytes);
  std::size_t planned_tensors() const { return planned_.size(); }
  // Byte range [begin, end) of planned tensor i in its file.
  std::size_t tensor_begin(std::size_t i) const { return i < planned_.size() ? planned_[i].tensor.begin : 0; }
  std::size_t tensor_end(std::size_t i) const { return i < planned_.size() ? planned_[i].tensor.end : 0; }
  // A buffer for planned tensor i's bytes (nullptr when it cannot be allocated); add_tensor(i)
  // then takes them. "" or a message.
  std::uint8_t* tensor_buffer(std::size_t i);
  std::string add_tensor(std::size_t i);
  // "" when every weight the spec needs arrived, else a message naming the first missing one.
  std::string finish();

 private:
  struct Planned {
    SafeTensor tensor;
    TensorPlace place;
  };
  std::string plan(std::vector<SafeTensor>&& tensors, const std::string& file, std::size_t max_bytes);
  std::string take(const Planned& p, const std::uint8_t* data, std::unique_ptr<std::uint8_t[]>* owned);

  Transformer* model_ = nullptr;
  std::vector<std::string> seen_;  // tensor names, to refuse one given twice
  bool checked_ = false;
  std::vector<Planned> planned_;  // the shard being loaded
  std::unique_ptr<std::uint8_t[]> buffer_;  // the tensor being given
};

// Single-file convenience: begin + add_shard + finish.
std::string load_huggingface(std::string_view config_json, Span<const std::uint8_t> safetensors,
                             Transformer& model, std::size_t max_bytes, std::size_t context = 0);

}  // namespace attnlens::model
