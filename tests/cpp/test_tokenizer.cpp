// The unigram tokenizer on small vocabularies whose best segmentations can be worked out by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attnlens/model/tokenizer.hpp"

using attnlens::model::Tokenizer;
using Ids = std::vector<std::int32_t>;

namespace {

const std::string M = "\xE2\x96\x81";  // '▁'

// Ids 0-5 are reserved; `extra` pieces follow from id 6.
Tokenizer make(const std::vector<std::pair<std::string, double>>& extra) {
  std::vector<std::string> pieces = {"\xEF\xBF\xBD", "<s>", "</s>", "x1", "x2", "x3"};
  std::vector<double> scores(6, 0.0);
  for (const auto& [p, s] : extra) {
    pieces.push_back(p);
    scores.push_back(s);
  }
  return Tokenizer(pieces, scores);
}

Ids ids(const Tokenizer& t, const std::string& text, std::size_t limit = 128) {
  return t.encode(text, limit).ids;
}

}  // namespace

TEST_CASE("the best total score wins over the longest match") {
  // Ids: ▁a 6, ▁ab 7, b 8, ▁ 9, a 10. "▁ab" alone scores -10; "▁a" + "b" scores -5.
  const Tokenizer t = make({{M + "a", -2}, {M + "ab", -10}, {"b", -3}, {M, -1}, {"a", -4}});
  CHECK(ids(t, "ab") == Ids{6, 8});
  // Make the long piece cheaper (-4) and it wins.
  const Tokenizer u = make({{M + "a", -2}, {M + "ab", -4}, {"b", -3}, {M, -1}, {"a", -4}});
  CHECK(ids(u, "ab") == Ids{7});
  const auto e = u.encode("ab ab", 128);
  CHECK(e.ids == Ids{7, 7});  // the space became a second '▁'
  CHECK(e.tokens == std::vector<std::string>{M + "ab", M + "ab"});
  CHECK_FALSE(e.clipped);
}

TEST_CASE("ties go to the later candidate, as in the reference") {
  // "▁ab" (-4) ties with "▁a" + "b" (-1 - 3): the candidate relaxed last, "b" from position 2,
  // wins.
  const Tokenizer t = make({{M + "a", -1}, {M + "ab", -4}, {"b", -3}, {M, -1}, {"a", -1}});
  CHECK(ids(t, "ab") == Ids{6, 8});
}

TEST_CASE("unknown characters become id 0, merged in runs; reserved ids never match") {
  // Ids: ▁ 6, a 7, < 8, s 9, > 10.
  const Tokenizer t = make({{M, -1}, {"a", -1}, {"<", -1}, {"s", -1}, {">", -1}});
  CHECK(ids(t, "a") == Ids{6, 7});
  auto e = t.encode("azza", 128);  // 'z' has no piece
  CHECK(e.ids == Ids{6, 7, 0, 7});
  CHECK(e.tokens == std::vector<std::string>{M, "a", "zz", "a"});
  e = t.encode("a\xF0\x9F\x98\x80", 128);  // an emoji is one unknown symbol
  CHECK(e.ids == Ids{6, 7, 0});
  CHECK(e.tokens.back() == "\xF0\x9F\x98\x80");
  CHECK(ids(t, "<s>") == Ids{6, 8, 9, 10});  // never the reserved id 1
}

TEST_CASE("a position that no piece reaches counts as score 0, as in the reference") {
  // Only "▁" and "<s>" exist. Nothing ends after "<", so the unknown 's' and '>' start from a
  // best of 0 and beat the real piece "<s>": the reference gives ▁ + one merged unknown.
  const Tokenizer t = make({{M, -1}, {"<s>", -1}});
  const auto e = t.encode("<s>", 128);
  CHECK(e.ids == Ids{6, 0});
  CHECK(e.tokens == std::vector<std::string>{M, "<s>"});
}

TEST_CASE("text is NFKC-normalised and spaces become word marks") {
  // Ids: ▁ 6, fi 7, ▁fi 8, f 9, i 10.
  const Tokenizer t = make({{M, -1}, {"fi", -1}, {M + "fi", -1.5}, {"f", -5}, {"i", -5}});
  CHECK(ids(t, "\xEF\xAC\x81") == Ids{8});             // ﬁ → "▁fi"
  CHECK(ids(t, "\xC2\xA0" "fi") == Ids{6, 8});          // no-break space → '▁'
}

TEST_CASE("later duplicates of a piece replace earlier ones") {
  const Tokenizer t = make({{M, -1}, {"q", -1}, {"q", -2}});
  CHECK(ids(t, "q") == Ids{6, 8});
}

TEST_CASE("clipping keeps the first tokens and says so") {
  const Tokenizer t = make({{M + "a", -1}, {M, -10}, {"a", -10}});
  std::string text = "a";
  for (int i = 1; i < 10; ++i) text += " a";
  auto e = t.encode(text, 4);
  CHECK(e.ids == Ids(4, 6));
  CHECK(e.tokens.size() == 4);
  CHECK(e.total == 10);
  CHECK(e.clipped);
  e = t.encode(text, 10);
  CHECK(e.ids.size() == 10);
  CHECK_FALSE(e.clipped);
}

TEST_CASE("empty text gives no tokens; a lone space gives word marks") {
  const Tokenizer t = make({{M, -1}});
  CHECK(t.encode("", 128).ids.empty());
  CHECK(ids(t, " ") == Ids{6, 6});
}
