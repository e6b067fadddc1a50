// NFKC and UTF-8 handling. The JavaScript tests compare whole tokenisations with
// String.prototype.normalize; these pin the individual steps.
#include <doctest/doctest.h>

#include <string>

#include "attnlens/model/unicode.hpp"

using attnlens::model::decode_utf8;
using attnlens::model::encode_utf8;
using attnlens::model::nfkc;

namespace {
std::string norm(const std::string& utf8) { return encode_utf8(nfkc(decode_utf8(utf8))); }
}  // namespace

TEST_CASE("NFKC: compatibility mappings") {
  CHECK(norm("plain ASCII, unchanged!") == "plain ASCII, unchanged!");
  CHECK(norm("\xEF\xAC\x81") == "fi");                // U+FB01 ligature
  CHECK(norm("\xE2\x91\xA0") == "1");                 // ① circled one
  CHECK(norm("\xC2\xBD") == "1\xE2\x81\x84" "2");     // ½ → 1⁄2
  CHECK(norm("\xEF\xBC\xA1\xEF\xBC\x91") == "A1");    // fullwidth Ａ１
  CHECK(norm("\xC2\xA0") == " ");                     // no-break space → space
  CHECK(norm("\xE3\x8D\xBF") == "\xE6\xA0\xAA\xE5\xBC\x8F\xE4\xBC\x9A\xE7\xA4\xBE");  // ㍿ → 株式会社
  CHECK(norm("\xE2\x84\xAB") == "\xC3\x85");          // Å angstrom sign → Å
  CHECK(norm("\xF0\x9D\x90\x80") == "A");             // 𝐀 mathematical bold (astral)
}

TEST_CASE("NFKC: canonical ordering and composition") {
  CHECK(norm("e\xCC\x81") == "\xC3\xA9");  // e + combining acute → é
  // Dot below (class 220) and acute (230) compose the same whichever order they come in.
  CHECK(norm("a\xCC\x81\xCC\xA3") == norm("a\xCC\xA3\xCC\x81"));
  CHECK(norm("a\xCC\xA3\xCC\x81") == "\xE1\xBA\xA1\xCC\x81");  // ạ + acute
  CHECK(norm("\xC3\x87\xCC\x81") == "\xE1\xB8\x88");             // Ç + acute → Ḉ
  // A mark after a blocking mark of the same class does not compose.
  CHECK(norm("a\xCC\x88\xCC\x88") == "\xC3\xA4\xCC\x88");
  // A leading combining mark has no starter to join.
  CHECK(norm("\xCC\x81" "a") == "\xCC\x81" "a");
  // Composition exclusion: U+0958 stays decomposed.
  CHECK(norm("\xE0\xA5\x98") == "\xE0\xA4\x95\xE0\xA4\xBC");
}

TEST_CASE("NFKC: Hangul is decomposed and recomposed arithmetically") {
  const std::string han = "\xED\x95\x9C";  // 한 U+D55C
  CHECK(norm(han) == han);
  CHECK(norm("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB") == han);  // ᄒ ᅡ ᆫ → 한
  CHECK(norm("\xE3\x84\xB1") == "\xE1\x84\x80");               // ㄱ compatibility jamo → ᄀ
}

TEST_CASE("UTF-8 decoding replaces malformed sequences like TextDecoder") {
  CHECK(decode_utf8("a\xC3\xA9z") == U"a\u00E9z");
  CHECK(decode_utf8("\xF0\x9F\x98\x80") == U"\U0001F600");
  CHECK(decode_utf8("\xFF") == U"\uFFFD");
  CHECK(decode_utf8("\xC3") == U"\uFFFD");              // truncated at the end
  CHECK(decode_utf8("\xE2\x82z") == U"\uFFFDz");        // one replacement per maximal subpart
  CHECK(decode_utf8("\xED\xA0\x80") == U"\uFFFD\uFFFD\uFFFD");  // an encoded surrogate
  CHECK(decode_utf8("\xC0\xAF") == U"\uFFFD\uFFFD");    // overlong
  CHECK(encode_utf8(U"\u00E9\U0001F600") == "\xC3\xA9\xF0\x9F\x98\x80");
}
