// NFKC = compatibility decomposition, canonical ordering, canonical composition (UAX #15), over
// the tables generated from Python's unicodedata. Hangul syllables are decomposed and composed
// arithmetically, as the standard specifies, so they need no table.
#include <algorithm>
#include <string>

#include "attnlens/model/unicode.hpp"
#include "model/nfkc_tables.hpp"

namespace attnlens::model {

namespace {

namespace t = nfkc_tables;

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

int combining_class(char32_t c) {
  if (c < 0x300) return 0;  // nothing below U+0300 combines
  const auto* end = t::combining_classes + t::combining_class_count;
  const auto* it = std::lower_bound(t::combining_classes, end, c,
                                    [](const t::CombiningClass& e, char32_t x) { return e.code_point < x; });
  return it != end && it->code_point == c ? it->ccc : 0;
}

void decompose(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  if (c < 0xA0) {  // ASCII and C1 controls never decompose
    out += c;
    return;
  }
  const auto* end = t::decompositions + t::decomposition_count;
  const auto* it = std::lower_bound(t::decompositions, end, c,
                                    [](const t::Decomposition& e, char32_t x) { return e.code_point < x; });
  if (it != end && it->code_point == c)
    out.append(t::decomposition_data + it->offset, it->length);
  else
    out += c;
}

// The primary composite of (first, second), or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 &&
      second > kTBase && second < kTBase + kTCount)
    return first + (second - kTBase);
  const auto* end = t::compositions + t::composition_count;
  const auto* it = std::lower_bound(
      t::compositions, end, std::pair{first, second}, [](const t::Composition& e, const auto& key) {
        return e.first < key.first || (e.first == key.first && e.second < key.second);
      });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

}  // namespace

std::u32string nfkc(std::u32string_view text) {
  // Quick path: text below U+00A0 is already NFKC.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0xA0; }))
    return std::u32string(text);

  std::u32string d;
  d.reserve(text.size() + text.size() / 2);
  for (char32_t c : text) decompose(c, d);

  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (std::size_t i = 1; i < d.size(); ++i) {
    const int cc = combining_class(d[i]);
    if (cc == 0) continue;
    for (std::size_t j = i; j > 0 && combining_class(d[j - 1]) > cc; --j) std::swap(d[j - 1], d[j]);
  }

  // Canonical composition: a character joins the last starter unless something in between
  // blocks it (a starter, or a mark of the same or higher class).
  std::u32string out;
  out.reserve(d.size());
  std::size_t starter = std::u32string::npos;
  int last_class = -1;
  for (char32_t c : d) {
    const int cc = combining_class(c);
    if (starter != std::u32string::npos && (last_class < cc || last_class == 0)) {
      // last_class == 0 here means the starter is the previous character.
      if (const char32_t composite = compose(out[starter], c)) {
        out[starter] = composite;
        continue;
      }
    }
    if (cc == 0) starter = out.size();
    last_class = cc;
    out += c;
  }
  return out;
}

const char* nfkc_unicode_version() { return nfkc_tables::unicode_version; }

}  // namespace attnlens::model
