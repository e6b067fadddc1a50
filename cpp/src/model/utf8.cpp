#include <string>
#include <string_view>

#include "attnlens/model/unicode.hpp"

namespace attnlens::model {

// The WHATWG UTF-8 decoder: the same replacements as TextDecoder, so that C++ and the browser
// agree on what a malformed byte sequence means.
std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  char32_t cp = 0;
  int needed = 0, seen = 0;
  unsigned lower = 0x80, upper = 0xBF;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned byte = static_cast<unsigned char>(text[i]);
    if (needed == 0) {
      ++i;
      if (byte < 0x80) {
        out.push_back(byte);
      } else if (byte >= 0xC2 && byte <= 0xDF) {
        needed = 1, cp = byte & 0x1F;
      } else if (byte >= 0xE0 && byte <= 0xEF) {
        if (byte == 0xE0) lower = 0xA0;
        if (byte == 0xED) upper = 0x9F;  // no surrogates
        needed = 2, cp = byte & 0xF;
      } else if (byte >= 0xF0 && byte <= 0xF4) {
        if (byte == 0xF0) lower = 0x90;
        if (byte == 0xF4) upper = 0x8F;
        needed = 3, cp = byte & 0x7;
      } else {
        out.push_back(0xFFFD);
      }
      continue;
    }
    if (byte < lower || byte > upper) {  // not consumed: it may start the next character
      cp = 0, needed = seen = 0, lower = 0x80, upper = 0xBF;
      out.push_back(0xFFFD);
      continue;
    }
    ++i;
    lower = 0x80, upper = 0xBF;
    cp = (cp << 6) | (byte & 0x3F);
    if (++seen == needed) {
      out.push_back(cp);
      cp = 0, needed = seen = 0;
    }
  }
  if (needed) out.push_back(0xFFFD);
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

}  // namespace attnlens::model
