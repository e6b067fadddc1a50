#include "attnlens/model/tokenizer.hpp"

#include <algorithm>

#include "attnlens/model/unicode.hpp"

namespace attnlens::model {

namespace {

constexpr char32_t kWordMark = 0x2581;  // '▁'

std::uint64_t edge_key(std::int32_t node, char32_t c) {
  return (static_cast<std::uint64_t>(node) << 21) | c;
}

std::uint32_t utf16_length(std::u32string_view s) {
  std::uint32_t n = 0;
  for (char32_t c : s) n += c > 0xFFFF ? 2 : 1;
  return n;
}

}  // namespace

Tokenizer::Tokenizer(const std::vector<std::string>& pieces, const std::vector<double>& scores)
    : pieces_(pieces), nodes_(1) {
  utf16_lengths_.reserve(pieces.size());
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    const std::u32string piece = decode_utf8(pieces[id]);
    utf16_lengths_.push_back(utf16_length(piece));
    if (id < reserved_ids || piece.empty()) continue;
    std::int32_t node = 0;
    for (char32_t c : piece) {
      auto [it, added] = edges_.try_emplace(edge_key(node, c), static_cast<std::int32_t>(nodes_.size()));
      if (added) nodes_.emplace_back();
      node = it->second;
    }
    nodes_[node] = {static_cast<std::int32_t>(id), id < scores.size() ? scores[id] : 0.0};
  }
}

std::int32_t Tokenizer::child(std::int32_t node, char32_t c) const {
  const auto it = edges_.find(edge_key(node, c));
  return it == edges_.end() ? -1 : it->second;
}

Encoding Tokenizer::encode(std::string_view text, std::size_t limit) const {
  Encoding result;
  const std::u32string normalised = nfkc(decode_utf8(text));
  if (normalised.empty()) return result;
  std::u32string symbols;
  symbols.reserve(normalised.size() + 1);
  symbols += kWordMark;
  for (char32_t c : normalised) symbols += c == U' ' ? kWordMark : c;

  // Forward Viterbi. The order of updates and the tie rule (a later candidate wins ties; an
  // end position whose best is exactly 0 counts as unset) follow the reference, so that equal
  // scores break the same way. Relaxing edges start by start visits each end's candidates in
  // increasing start order, as the reference's per-end loop does.
  const std::size_t n = symbols.size();
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::int32_t> words(n + 1, unknown_id);
  auto relax = [&](std::size_t end, double score, std::int32_t id) {
    if (best[end] == 0 || score >= best[end]) {
      best[end] = score;
      words[end] = id;
    }
  };
  for (std::size_t start = 0; start < n; ++start) {
    bool matched = false;
    std::int32_t node = 0;
    for (std::size_t end = start + 1; end <= n; ++end) {
      node = child(node, symbols[end - 1]);
      if (node < 0) break;
      if (nodes_[node].id >= 0) {
        relax(end, nodes_[node].score + best[start], nodes_[node].id);
        matched = true;
      }
    }
    if (!matched) relax(start + 1, best[start], unknown_id);  // unknown: one symbol, score 0
  }

  // Backward pass, stepping by each piece's length in UTF-16 units like the reference.
  struct Step {
    std::int32_t id;
    std::size_t begin, end;
  };
  std::vector<Step> steps;
  for (std::size_t end = n; end > 0;) {
    const std::int32_t id = words[end];
    // At least one step, so that a malformed vocabulary (an empty piece 0) cannot loop forever.
    const std::size_t length = std::max<std::size_t>(utf16_lengths_[static_cast<std::size_t>(id)], 1);
    const std::size_t begin = length > end ? 0 : end - length;
    if (id == unknown_id && !steps.empty() && steps.back().id == unknown_id)
      steps.back().begin = begin;  // runs of unknowns merge into one token
    else
      steps.push_back({id, begin, end});
    end = begin;
  }

  result.total = steps.size();
  result.clipped = steps.size() > limit;
  const std::size_t kept = result.clipped ? limit : steps.size();
  result.ids.reserve(kept);
  result.tokens.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const Step& s = steps[steps.size() - 1 - i];
    result.ids.push_back(s.id);
    result.tokens.push_back(s.id == unknown_id
                                ? encode_utf8(std::u32string_view(symbols).substr(s.begin, s.end - s.begin))
                                : pieces_[static_cast<std::size_t>(s.id)]);
  }
  return result;
}

}  // namespace attnlens::model
