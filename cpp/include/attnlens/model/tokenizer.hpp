// The SentencePiece-unigram tokenizer of Universal Sentence Encoder lite, as its JavaScript
// reference implementation runs it: NFKC-normalise, mark word starts with '▁' (U+2581: one
// before the text, one for every space), then pick the segmentation with the best total score
// (Viterbi over the pieces). Ids below `reserved_ids` are never matched; a character that no
// piece starts with becomes the unknown id 0 (score 0), and runs of unknowns merge into one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlens::model {

struct Encoding {
  std::vector<std::int32_t> ids;
  // What each token stands for: its vocabulary piece, or for the unknown id 0 the (normalised)
  // text it covers, since the vocabulary's own entry for id 0 is only a placeholder.
  std::vector<std::string> tokens;
  std::size_t total = 0;  // tokens before clipping
  bool clipped = false;   // total > the limit given to encode()
};

class Tokenizer {
 public:
  static constexpr std::int32_t unknown_id = 0;
  static constexpr std::size_t reserved_ids = 6;  // unknown, <s>, </s> and three extra ids

  Tokenizer() = default;
  // One piece (UTF-8) and one score per id (a missing score counts as 0). Later duplicates of a
  // piece replace earlier ones, as in the trie of the reference implementation.
  Tokenizer(const std::vector<std::string>& pieces, const std::vector<double>& scores);

  // Tokens of `text` (UTF-8), keeping the first `limit` of them.
  Encoding encode(std::string_view text, std::size_t limit) const;

  std::size_t size() const { return pieces_.size(); }
  const std::string& piece(std::int32_t id) const { return pieces_[static_cast<std::size_t>(id)]; }

 private:
  struct Node {
    std::int32_t id = -1;  // the piece ending here, or -1
    double score = 0;
  };
  std::int32_t child(std::int32_t node, char32_t c) const;

  std::vector<std::string> pieces_;
  std::vector<std::uint32_t> utf16_lengths_;  // the backward pass steps by these, as in JS
  std::vector<Node> nodes_;                   // nodes_[0] is the root
  std::unordered_map<std::uint64_t, std::int32_t> edges_;  // (node << 21 | char) -> node
};

}  // namespace attnlens::model
