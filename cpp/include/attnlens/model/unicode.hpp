// Text handling for the tokenizer: UTF-8 <-> code points and Unicode NFKC normalisation, the
// normalisation the model's tokenizer applies (JavaScript's String.prototype.normalize('NFKC')).
#pragma once
#include <string>
#include <string_view>

namespace attnlens::model {

// Invalid or truncated UTF-8 sequences (and encoded surrogates) become U+FFFD, as in
// TextDecoder, one replacement per maximal invalid subpart.
std::u32string decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t code_point);
std::string encode_utf8(std::u32string_view text);

// Compatibility decomposition, canonical ordering, canonical composition (UAX #15).
std::u32string nfkc(std::u32string_view text);

// The Unicode version of the tables nfkc() was built with.
const char* nfkc_unicode_version();

}  // namespace attnlens::model
