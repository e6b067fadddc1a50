#include "attnlens/model/llama_tokenizer.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <queue>
#include <tuple>

namespace attnlens::model {

namespace {

std::int32_t read_i32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return static_cast<std::int32_t>(v);  // the files are little-endian, as are wasm and x86
}

}  // namespace

std::string LlamaTokenizer::load(Span<const std::uint8_t> bytes, std::size_t vocab_size) {
  pieces_.clear();
  scores_.clear();
  ids_.clear();
  if (bytes.size < 4) return "the tokenizer file has " + std::to_string(bytes.size) + " bytes: too short";
  const std::int32_t max_len = read_i32(bytes.data);
  if (max_len <= 0 || max_len > 1 << 16)
    return "the tokenizer file starts with max_token_length " + std::to_string(max_len) +
           ": not a llama2.c tokenizer file (tokenizer.bin as llama2.c's tokenizer.py writes it; a SentencePiece "
           "tokenizer.model or a Hugging Face tokenizer.json must be exported with it first)";
  if (vocab_size < 3)
    return "the vocabulary has " + std::to_string(vocab_size) + " pieces; a llama2.c tokenizer needs at least "
           "<unk>, BOS and EOS (ids 0, 1, 2)";
  // Each entry needs at least 8 bytes: refuse an impossible vocabulary before reserving.
  if (vocab_size == 0 || vocab_size > (bytes.size - 4) / 8)
    return "the tokenizer file (" + std::to_string(bytes.size) + " bytes) cannot hold the model's " +
           std::to_string(vocab_size) + " pieces: it is truncated or belongs to another model";
  pieces_.reserve(vocab_size);
  scores_.reserve(vocab_size);
  std::size_t at = 4;
  for (std::size_t id = 0; id < vocab_size; ++id) {
    if (at == bytes.size)  // whole pieces, too few of them: another model's file, most likely
      return "the tokenizer file holds " + std::to_string(id) + " pieces, the model's vocabulary has " +
             std::to_string(vocab_size) + ": it belongs to a model with a smaller vocabulary (or is truncated)";
    if (bytes.size - at < 8)
      return "the tokenizer file is truncated: it ends in piece " + std::to_string(id) + " of " +
             std::to_string(vocab_size);
    float score;
    std::memcpy(&score, bytes.data + at, 4);
    const std::int32_t len = read_i32(bytes.data + at + 4);
    at += 8;
    if (!std::isfinite(score))
      return "the tokenizer file gives piece " + std::to_string(id) + " a non-finite score";
    if (len < 0 || static_cast<std::size_t>(len) > bytes.size - at)
      return "the tokenizer file is truncated or corrupt: it gives piece " + std::to_string(id) + " the length " +
             std::to_string(len) + ", beyond the end of the file";
    pieces_.emplace_back(reinterpret_cast<const char*>(bytes.data + at), static_cast<std::size_t>(len));
    scores_.push_back(score);
    at += static_cast<std::size_t>(len);
  }
  if (at != bytes.size)
    return "the tokenizer file has " + std::to_string(bytes.size - at) + " bytes after its " +
           std::to_string(vocab_size) + " pieces: it belongs to a model with a larger vocabulary";
  max_token_length_ = static_cast<std::size_t>(max_len);
  ids_.reserve(vocab_size);
  for (std::size_t id = 0; id < vocab_size; ++id)
    ids_.emplace(std::string_view(pieces_[id]), static_cast<std::int32_t>(id));
  return {};
}

std::int32_t LlamaTokenizer::lookup(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<std::int32_t> LlamaTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  if (pieces_.empty()) return ids;
  ids.push_back(bos_id);
  auto push_bytes = [&](std::string_view s) {
    for (unsigned char c : s) {
      const std::size_t id = c + static_cast<std::size_t>(byte_offset);
      if (id < pieces_.size()) ids.push_back(static_cast<std::int32_t>(id));
      else ids.push_back(0);  // a vocabulary without byte pieces: <unk>
    }
  };
  auto push = [&](std::string_view s) {
    const std::int32_t id = lookup(s);
    if (id >= 0) ids.push_back(id);
    else push_bytes(s);
  };
  if (!text.empty()) push(" ");
  // run.c's grouping: a non-continuation byte starts a character, which takes at most 3
  // continuation bytes after it (stray continuation bytes start characters of their own).
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i + 1;
    while (end < text.size() && end - i < 4 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    push(text.substr(i, end - i));
    i = end;
  }

  // Merges over a linked list; candidates in a max-heap by (score, leftmost). A candidate is
  // stale when either side has changed since it was pushed (versions).
  const std::size_t n = ids.size();
  std::vector<std::int32_t> next(n), prev(n);
  std::vector<std::uint32_t> version(n, 0);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
    prev[i] = static_cast<std::int32_t>(i) - 1;
  }
  struct Candidate {
    float score;
    std::int32_t left, right, id;
    std::uint32_t left_version, right_version;
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  std::string joined;
  auto consider = [&](std::int32_t left) {
    if (left <= 0) return;  // BOS (index 0) never merges, so ids always start with it
    const std::int32_t right = next[static_cast<std::size_t>(left)];
    if (right < 0) return;
    joined = pieces_[static_cast<std::size_t>(ids[static_cast<std::size_t>(left)])];
    joined += pieces_[static_cast<std::size_t>(ids[static_cast<std::size_t>(right)])];
    const std::int32_t id = lookup(joined);
    // run.c starts from best_score = -1e10 and takes a pair only when its score is larger.
    if (id < 0 || !(scores_[static_cast<std::size_t>(id)] > -1e10f)) return;
    heap.push({scores_[static_cast<std::size_t>(id)], left, right, id,
               version[static_cast<std::size_t>(left)], version[static_cast<std::size_t>(right)]});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) consider(static_cast<std::int32_t>(i));
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const auto l = static_cast<std::size_t>(c.left), r = static_cast<std::size_t>(c.right);
    if (!alive[l] || !alive[r] || next[l] != c.right || version[l] != c.left_version ||
        version[r] != c.right_version)
      continue;
    ids[l] = c.id;
    ++version[l];
    alive[r] = false;
    next[l] = next[r];
    if (next[r] >= 0) prev[static_cast<std::size_t>(next[r])] = c.left;
    consider(prev[l]);
    consider(c.left);
  }
  std::vector<std::int32_t> out;
  out.reserve(n);
  for (std::int32_t i = 0; i >= 0; i = next[static_cast<std::size_t>(i)]) out.push_back(ids[static_cast<std::size_t>(i)]);
  return out;
}

int LlamaTokenizer::byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int value = 0;
  for (std::size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    value <<= 4;
    if (c >= '0' && c <= '9') value |= c - '0';
    else if (c >= 'A' && c <= 'F') value |= c - 'A' + 10;
    else if (c >= 'a' && c <= 'f') value |= c - 'a' + 10;
    else return -1;
  }
  return value;
}

std::string LlamaTokenizer::decode(std::int32_t previous, std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size() || id == bos_id || id == eos_id) return {};
  std::string_view piece = pieces_[static_cast<std::size_t>(id)];
  if (previous == bos_id && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
  const int byte = byte_piece(piece);
  std::string out = byte >= 0 ? std::string(1, static_cast<char>(byte)) : std::string(piece);
  if (out.size() == 1) {
    const unsigned char c = static_cast<unsigned char>(out[0]);
    if (!(std::isprint(c) || std::isspace(c))) return {};
  }
  return out;
}

std::string LlamaTokenizer::display(std::int32_t id) const {
  if (id == bos_id) return "<s>";
  if (id == eos_id) return "</s>";
  if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return {};
  const std::string& piece = pieces_[static_cast<std::size_t>(id)];
  const int byte = byte_piece(piece);
  return byte >= 0 ? std::string(1, static_cast<char>(byte)) : piece;
}

}  // namespace attnlens::model
