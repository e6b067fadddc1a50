#include "attnlens/model/json.hpp"

#include <cmath>
#include <cstdlib>

#include "attnlens/model/unicode.hpp"

namespace attnlens::model {

const Json* Json::get(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& member : object)
    if (member.first == key) return &member.second;
  return nullptr;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::string document(Json& out) {
    skip_space();
    if (!value(out, 0)) return error_;
    skip_space();
    if (at_ < s_.size()) return fail("unexpected text after the JSON value"), error_;
    return {};
  }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(at_);
    return false;
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(at_, word.size()) != word) return fail("invalid literal");
    at_ += word.size();
    return true;
  }

  bool value(Json& out, std::size_t depth) {
    if (depth >= kJsonMaxDepth) return fail("JSON nested too deeply");
    if (at_ >= s_.size()) return fail("unexpected end of JSON");
    switch (s_[at_]) {
      case 'n': out.type = Json::Type::null; return literal("null");
      case 't': out.type = Json::Type::boolean; out.boolean = true; return literal("true");
      case 'f': out.type = Json::Type::boolean; out.boolean = false; return literal("false");
      case '"': out.type = Json::Type::string; return string(out.string);
      case '[': return array(out, depth);
      case '{': return object(out, depth);
      default: return number(out);
    }
  }

  bool array(Json& out, std::size_t depth) {
    out.type = Json::Type::array;
    ++at_;
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') return ++at_, true;
    for (;;) {
      out.array.emplace_back();
      skip_space();
      if (!value(out.array.back(), depth + 1)) return false;
      skip_space();
      if (at_ >= s_.size()) return fail("unterminated array");
      if (s_[at_] == ']') return ++at_, true;
      if (s_[at_] != ',') return fail("expected ',' or ']' in an array");
      ++at_;
    }
  }

  bool object(Json& out, std::size_t depth) {
    out.type = Json::Type::object;
    ++at_;
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') return ++at_, true;
    for (;;) {
      skip_space();
      if (at_ >= s_.size() || s_[at_] != '"') return fail("expected a string key in an object");
      std::string key;
      if (!string(key)) return false;
      if (out.get(key)) return fail(("repeated key '" + key + "'").c_str());
      skip_space();
      if (at_ >= s_.size() || s_[at_] != ':') return fail("expected ':' after an object key");
      ++at_;
      skip_space();
      out.object.emplace_back(std::move(key), Json{});
      if (!value(out.object.back().second, depth + 1)) return false;
      skip_space();
      if (at_ >= s_.size()) return fail("unterminated object");
      if (s_[at_] == '}') return ++at_, true;
      if (s_[at_] != ',') return fail("expected ',' or '}' in an object");
      ++at_;
    }
  }

  bool hex4(unsigned& v) {
    if (s_.size() - at_ < 4) return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[at_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    return true;
  }

  bool string(std::string& out) {
    ++at_;  // the opening quote
    for (;;) {
      if (at_ >= s_.size()) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[at_]);
      if (c == '"') return ++at_, true;
      if (c < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++at_;
        continue;
      }
      if (++at_ >= s_.size()) return fail("unterminated escape");
      const char e = s_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned v = 0;
          if (!hex4(v)) return false;
          if (v >= 0xD800 && v < 0xDC00 && s_.substr(at_, 2) == "\\u") {
            const std::size_t back = at_;
            at_ += 2;
            unsigned low = 0;
            if (!hex4(low)) return false;
            if (low >= 0xDC00 && low < 0xE000) v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
            else at_ = back;
          }
          append_utf8(out, (v >= 0xD800 && v < 0xE000) ? 0xFFFD : static_cast<char32_t>(v));
          break;
        }
        default: return fail("invalid escape in a string");
      }
    }
  }

  bool number(Json& out) {
    const std::size_t start = at_;
    auto digits = [&] {
      const std::size_t d = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ > d;
    };
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    if (at_ < s_.size() && s_[at_] == '0') ++at_;
    else if (!digits()) return fail("invalid JSON value");
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (!digits()) return fail("invalid number");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (!digits()) return fail("invalid number");
    }
    out.type = Json::Type::number;
    out.number = std::strtod(std::string(s_.substr(start, at_ - start)).c_str(), nullptr);
    return true;
  }

  std::string_view s_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::string parse_json(std::string_view text, Json& out) {
  out = Json{};
  return Reader(text).document(out);
}

}  // namespace attnlens::model
