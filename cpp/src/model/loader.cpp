#include "attnlens/model/loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attnlens/model/architectures.hpp"
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
std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 19)) >> 20) + " MiB"; }

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Refuses a model whose weights (matrices at `element` bytes) and full-context KV cache exceed
// `max_bytes`, with the numbers.
std::string check_fits(const Spec& s, std::size_t element, std::size_t max_bytes) {
  const std::size_t weights = weight_bytes(s, element);
  const std::size_t cache = s.causal ? cache_bytes(s, s.context) : 0;
  const std::size_t scratch = run_bytes(s, 1);
  if (weights > max_bytes || cache > max_bytes - weights || scratch > max_bytes - weights - cache)
    return "the model needs " + mib(weights) + " for its weights, " + mib(cache) + " for a KV cache of " +
           std::to_string(s.context) + " positions and " + mib(scratch) + " of scratch, more than the " +
           mib(max_bytes) + " of memory available";
  return {};
}

// llama2.c's arrays, in file order.
struct Block {
  Role role;
  const char* name;
};

}  // namespace

std::string load_llama2c(Span<const std::uint8_t> bytes, Transformer& model, std::size_t max_bytes) {
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
  Spec s;
  s.architecture = "llama2.c";
  s.model_type = "llama";
  s.dim = static_cast<std::size_t>(h[0]);
  s.ffn = static_cast<std::size_t>(h[1]);
  s.layers = static_cast<std::size_t>(h[2]);
  s.heads = static_cast<std::size_t>(h[3]);
  s.kv_heads = static_cast<std::size_t>(h[4]);
  s.vocab = static_cast<std::size_t>(h[5] < 0 ? -static_cast<std::int64_t>(h[5]) : h[5]);
  s.context = static_cast<std::size_t>(h[6]);
  s.head_dim = s.dim / s.heads;
  s.tied_head = shared;
  s.norm = NormKind::rms;
  s.eps = 1e-5f;
  s.rope = true;
  s.rope_layout = RopeLayout::interleaved;  // llama2.c's q/k rows pair up (2i, 2i+1)
  if (s.head_dim * s.heads != s.dim)
    return "the model's head size must divide dim (" + std::to_string(s.dim) + ") by n_heads (" +
           std::to_string(s.heads) + ") (from the llama2.c header)";
  std::string error = check_spec(s);
  if (!error.empty()) return error + " (from the llama2.c header)";

  const std::vector<Block> blocks =
      versioned ? std::vector<Block>{{Role::attn_norm, "rms_att"}, {Role::ffn_norm, "rms_ffn"},
                                     {Role::final_norm, "rms_final"}, {Role::token_embedding, "token_embedding"},
                                     {Role::q, "wq"}, {Role::k, "wk"}, {Role::v, "wv"}, {Role::o, "wo"},
                                     {Role::gate, "w1"}, {Role::down, "w2"}, {Role::up, "w3"}}
                : std::vector<Block>{{Role::token_embedding, "token_embedding"}, {Role::attn_norm, "rms_att"},
                                     {Role::q, "wq"}, {Role::k, "wk"}, {Role::v, "wv"}, {Role::o, "wo"},
                                     {Role::ffn_norm, "rms_ffn"}, {Role::gate, "w1"}, {Role::down, "w2"},
                                     {Role::up, "w3"}, {Role::final_norm, "rms_final"}};
  // The expected size, in double (no overflow), before anything is allocated.
  const std::size_t freq_floats = versioned ? 0 : s.context * s.head_dim;  // legacy freq_cis real + imag
  double expected_floats = static_cast<double>(freq_floats);
  for (const Block& b : blocks) {
    std::size_t out, in;
    role_shape(s, b.role, out, in);
    expected_floats += static_cast<double>(out) * static_cast<double>(in) * (per_layer(b.role) ? s.layers : 1);
  }
  if (!shared) expected_floats += static_cast<double>(s.vocab) * static_cast<double>(s.dim);
  const double expected = static_cast<double>(header) + 4 * expected_floats;
  if (static_cast<double>(bytes.size) != expected) {
    const std::string what = static_cast<double>(bytes.size) < expected ? "truncated" : "longer than its header says";
    return "the model file is " + what + ": its header (dim " + std::to_string(s.dim) + ", " +
           std::to_string(s.layers) + " layers, vocab " + std::to_string(s.vocab) + ", seq_len " +
           std::to_string(s.context) + ") needs " + std::to_string(static_cast<unsigned long long>(expected)) +
           " bytes, the file has " + std::to_string(bytes.size);
  }
  error = check_fits(s, 4, max_bytes);
  if (!error.empty()) return error;
  error = model.configure(s);
  if (!error.empty()) return error;
  const std::uint8_t* at = bytes.data + header;
  auto take = [&](Role role, std::size_t layer, const std::string& name) {
    std::size_t out, in;
    role_shape(s, role, out, in);
    SourceTensor src{at, WeightType::f32, out, in, false, 0};
    at += out * in * 4;
    return model.set(role, layer, src, name);
  };
  for (const Block& b : blocks)
    for (std::size_t l = 0; l < (per_layer(b.role) ? s.layers : 1); ++l) {
      error = take(b.role, l, per_layer(b.role) ? std::string(b.name) + " of layer " + std::to_string(l) : b.name);
      if (!error.empty()) return error;
    }
  at += freq_floats * 4;
  if (!shared && !(error = take(Role::lm_head, 0, "classifier")).empty()) return error;
  return model.finish();
}

std::string parse_safetensors_header(Span<const std::uint8_t> head, std::size_t file_size, std::vector<SafeTensor>& out) {
  out.clear();
  if (file_size < 8 || head.size < 8) return "the safetensors file has " + bytes_text(file_size) + ": too short";
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | head.data[i];
  if (header < 2 || header > file_size - 8 || header > kMaxSafetensorsHeader)
    return "the safetensors file gives a header length of " + std::to_string(header) + " bytes for a file of " +
           std::to_string(file_size) + ": it is truncated or not a safetensors file";
  if (head.size < 8 + header) return "the safetensors header was cut short (" + bytes_text(head.size) + " of it given)";
  Json json;
  std::string error = parse_json({reinterpret_cast<const char*>(head.data + 8), static_cast<std::size_t>(header)}, json);
  if (!error.empty()) return "the safetensors header is not valid JSON: " + error;
  if (!json.is(Json::Type::object)) return "the safetensors header must be a JSON object";
  const std::size_t data_start = 8 + static_cast<std::size_t>(header);
  const std::size_t data_size = file_size - data_start;
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
    if (dtype->string == "F32") st.type = WeightType::f32;
    else if (dtype->string == "F16") st.type = WeightType::f16;
    else if (dtype->string == "BF16") st.type = WeightType::bf16;
    else return "tensor '" + name + "' has dtype " + dtype->string + "; supported: F32, F16, BF16";
    const double element = static_cast<double>(weight_type_size(st.type));
    double count = 1;
    if (shape->array.size() > 8) return "tensor '" + name + "' has an invalid shape";
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
    if (e.number - b.number != count * element)
      return "tensor '" + name + "' " + shape_text(st.shape) + " " + dtype->string + " needs " +
             std::to_string(static_cast<unsigned long long>(count * element)) + " bytes, its data_offsets give " +
             std::to_string(static_cast<unsigned long long>(e.number - b.number));
    st.begin = data_start + static_cast<std::size_t>(b.number);
    st.end = data_start + static_cast<std::size_t>(e.number);
    out.push_back(std::move(st));
  }
  return {};
}

std::string parse_safetensors(Span<const std::uint8_t> bytes, std::vector<SafeTensor>& out) {
  std::string error = parse_safetensors_header(bytes, bytes.size, out);
  if (error.empty())
    for (SafeTensor& t : out) t.data = bytes.data + t.begin;
  return error;
}

std::string HfLoader::begin(std::string_view config_json, Transformer& model, std::size_t context) {
  model_ = nullptr;
  seen_.clear();
  checked_ = false;
  Spec s;
  std::string error = spec_from_config(config_json, s, context);
  if (error.empty()) error = model.configure(s);
  if (error.empty()) model_ = &model;
  return error;
}

std::string HfLoader::plan(std::vector<SafeTensor>&& tensors, const std::string& file, std::size_t max_bytes) {
  planned_.clear();
  if (!model_) return "no load is in progress";
  const Spec& s = model_->spec();
  std::size_t added = 0;
  // The first shard's first matrix says the precision: refuse a model that cannot fit before
  // looking further (a 7B config with a small file is a memory problem first).
  if (!checked_)
    for (const SafeTensor& t : tensors) {
      const TensorPlace place = place_tensor(s, t.name);
      if ((place.kind != TensorPlace::Kind::role && place.kind != TensorPlace::Kind::fused_qkv) || !role_is_matrix(place.role))
        continue;
      std::string error = check_fits(s, weight_type_size(t.type), max_bytes);
      if (!error.empty()) return error;
      checked_ = true;
      break;
    }
  // Placed and shape-checked before anything is copied.
  for (SafeTensor& t : tensors) {
    const TensorPlace place = place_tensor(s, t.name);
    if (place.kind == TensorPlace::Kind::ignored || place.kind == TensorPlace::Kind::unknown) continue;
    if (place.layer >= s.layers && per_layer(place.role))
      return "tensor '" + t.name + "' is for layer " + std::to_string(place.layer) + ", but config.json has " +
             std::to_string(s.layers) + " layers";
    if (std::find(seen_.begin(), seen_.end(), t.name) != seen_.end())
      return "tensor '" + t.name + "' appears in two shards (again in " + file + ")";
    std::size_t out, in;
    role_shape(s, place.role, out, in);
    if (place.kind == TensorPlace::Kind::fused_qkv) out = s.q_dim() + 2 * s.kv_dim();
    const bool matrix = role_is_matrix(place.role);
    std::vector<std::size_t> want = !matrix ? std::vector<std::size_t>{out}
                                    : place.transposed ? std::vector<std::size_t>{in, out}
                                                       : std::vector<std::size_t>{out, in};
    if (t.shape != want)
      return "tensor '" + t.name + "' has shape " + shape_text(t.shape) + ", expected " + shape_text(want) +
             " from config.json";
    if (!role_used(s, place.role)) continue;  // e.g. a tied lm_head
    added += out * in * (matrix ? weight_type_size(t.type) : 4);
    seen_.push_back(t.name);
    planned_.push_back({std::move(t), place});
  }
  if (added > max_bytes) {
    planned_.clear();
    return "the tensors of " + file + " need " + mib(added) + ", more than the " + mib(max_bytes) + " of memory available";
  }
  // In file order, so that a caller reading the file front to back never goes back.
  std::sort(planned_.begin(), planned_.end(), [](const Planned& a, const Planned& b) { return a.tensor.begin < b.tensor.begin; });
  return {};
}

std::string HfLoader::take(const Planned& p, const std::uint8_t* data, std::unique_ptr<std::uint8_t[]>* owned) {
  const Spec& s = model_->spec();
  const SafeTensor& t = p.tensor;
  std::size_t out, in;
  role_shape(s, p.place.role, out, in);
  if (p.place.kind == TensorPlace::Kind::fused_qkv) {
    // q, k and v side by side: rows [0, q_dim), [q_dim, q_dim + kv_dim), then the rest.
    const bool bias = p.place.role == Role::q_bias;
    const std::size_t total = s.q_dim() + 2 * s.kv_dim();
    const Role roles[3] = {bias ? Role::q_bias : Role::q, bias ? Role::k_bias : Role::k, bias ? Role::v_bias : Role::v};
    const std::size_t offsets[3] = {0, s.q_dim(), s.q_dim() + s.kv_dim()};
    for (int i = 0; i < 3; ++i) {
      const SourceTensor src{data, t.type, total, bias ? 1 : s.dim, p.place.transposed, offsets[i]};
      std::string error = model_->set(roles[i], p.place.layer, src, t.name);
      if (!error.empty()) return error;
    }
    return {};
  }
  return model_->set(p.place.role, p.place.layer, {data, t.type, out, in, p.place.transposed, 0}, t.name, owned);
}

std::string HfLoader::add_shard(Span<const std::uint8_t> bytes, const std::string& file, std::size_t max_bytes) {
  if (!model_) return "no load is in progress";
  std::vector<SafeTensor> tensors;
  std::string error = parse_safetensors(bytes, tensors);
  if (error.empty()) error = plan(std::move(tensors), file, max_bytes);
  for (std::size_t i = 0; error.empty() && i < planned_.size(); ++i) error = take(planned_[i], planned_[i].tensor.data, nullptr);
  planned_.clear();
  return error;
}

std::string HfLoader::begin_shard(Span<const std::uint8_t> head, std::size_t file_size, const std::string& file,
                                  std::size_t max_bytes) {
  planned_.clear();
  buffer_.reset();
  if (!model_) return "no load is in progress";
  std::vector<SafeTensor> tensors;
  std::string error = parse_safetensors_header(head, file_size, tensors);
  return error.empty() ? plan(std::move(tensors), file, max_bytes) : error;
}

std::uint8_t* HfLoader::tensor_buffer(std::size_t i) {
  buffer_.reset();
  if (!model_ || i >= planned_.size()) return nullptr;
  const SafeTensor& t = planned_[i].tensor;
  buffer_.reset(new (std::nothrow) std::uint8_t[std::max<std::size_t>(t.end - t.begin, 1)]);
  return buffer_.get();
}

std::string HfLoader::add_tensor(std::size_t i) {
  if (!model_) return "no load is in progress";
  if (i >= planned_.size() || !buffer_) return "tensor " + std::to_string(i) + " of the shard was not given";
  std::string error = take(planned_[i], buffer_.get(), &buffer_);
  buffer_.reset();  // taken over by the model, or a copy was made
  return error;
}

std::string HfLoader::finish() {
  if (!model_) return "no load is in progress";
  const Spec& s = model_->spec();
  for (std::size_t r = 0; r < kRoles; ++r) {
    const Role role = static_cast<Role>(r);
    if (!role_used(s, role)) continue;
    for (std::size_t l = 0; l < (per_layer(role) ? s.layers : 1); ++l)
      if (!model_->has(role, l)) {
        const std::string name = tensor_name(s, role, l);
        std::string why = std::string("the model file lacks the ") + role_name(role) +
                          (per_layer(role) ? " of layer " + std::to_string(l) : std::string());
        if (!name.empty()) why += " ('" + name + "')";
        if (role == Role::lm_head) why += ": config.json says tie_word_embeddings is false";
        model_ = nullptr;
        return why;
      }
  }
  std::string error = model_->finish();
  model_ = nullptr;
  return error;
}

std::string load_huggingface(std::string_view config_json, Span<const std::uint8_t> safetensors, Transformer& model,
                             std::size_t max_bytes, std::size_t context) {
  HfLoader loader;
  std::string error = loader.begin(config_json, model, context);
  if (error.empty()) error = loader.add_shard(safetensors, "model.safetensors", max_bytes);
  if (error.empty()) error = loader.finish();
  return error;
}

}  // namespace attnlens::model
