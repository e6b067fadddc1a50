// The SentencePiece-BPE tokenizer of llama2.c (run.c encode()/decode()), read from its binary
// tokenizer file (tokenizer.bin, tok512.bin): int32 max_token_length, then for each id a float32
// score, an int32 byte length and the piece's bytes. Pieces use ' ' for SentencePiece's '▁';
// ids 0, 1, 2 are <unk>, BOS and EOS; byte-fallback pieces "<0xHH>" sit at id HH + 3.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnlens/span.hpp"

namespace attnlens::model {

class LlamaTokenizer {
 public:
  static constexpr std::int32_t bos_id = 1;
  static constexpr std::int32_t eos_id = 2;
  static constexpr std::int32_t byte_offset = 3;  // byte b falls back to id b + 3

  // "" when `bytes` hold exactly `vocab_size` entries in the format above (finite scores,
  // lengths within the file), else a message saying what is wrong.
  std::string load(Span<const std::uint8_t> bytes, std::size_t vocab_size);

  // run.c encode(text, bos=1, eos=0): BOS, then (for non-empty text) the piece " " (the dummy
  // prefix), then one piece per UTF-8 character (bytes grouped as run.c groups them: a lead
  // byte and up to 3 continuation bytes) or, when the character is no piece, its bytes as ids
  // byte+3; then merges, until none applies, the adjacent pair whose concatenation is the piece
  // with the highest score (the leftmost pair on ties). O(n log n) with a heap, equal to run.c's
  // O(n²) loop, except that BOS never merges (run.c would merge it with the next piece if the
  // vocabulary held the concatenation; no real vocabulary does).
  std::vector<std::int32_t> encode(std::string_view text) const;

  // The bytes run.c decode() + safe_printf() print for `id` after `previous`: a leading space is
  // dropped after BOS, "<0xHH>" is the byte HH, and a single byte that is neither printable nor
  // whitespace prints nothing. BOS and EOS print nothing here (run.c never prints them: it stops
  // at them). Ids outside the vocabulary print nothing.
  std::string decode(std::int32_t previous, std::int32_t id) const;

  // What a token shows in a figure: BOS '<s>', EOS '</s>', a byte piece the byte it stands for,
  // otherwise the piece (with its leading space).
  std::string display(std::int32_t id) const;

  std::size_t size() const { return pieces_.size(); }
  const std::string& piece(std::int32_t id) const { return pieces_[static_cast<std::size_t>(id)]; }
  float score(std::int32_t id) const { return scores_[static_cast<std::size_t>(id)]; }
  std::size_t max_token_length() const { return max_token_length_; }

 private:
  std::int32_t lookup(std::string_view piece) const;  // -1 when absent
  // The byte a "<0xHH>" piece stands for, or -1.
  static int byte_piece(std::string_view piece);

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, std::int32_t> ids_;  // views into pieces_ (first id wins)
  std::size_t max_token_length_ = 0;
};

}  // namespace attnlens::model
