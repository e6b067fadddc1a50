// A small strict JSON reader (RFC 8259) for model headers: Hugging Face config.json and the
// safetensors header. Untrusted input: nesting is limited and every error is a message.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::model {

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  // Object members in file order (a repeated key is an error).
  std::vector<std::pair<std::string, Json>> object;

  const Json* get(std::string_view key) const;  // nullptr unless an object with that key
  bool is(Type t) const { return type == t; }
};

inline constexpr std::size_t kJsonMaxDepth = 64;

// "" when `text` is one JSON value (surrounded by optional whitespace), else a message with the
// byte offset of the problem.
std::string parse_json(std::string_view text, Json& out);

}  // namespace attnlens::model
