#pragma once
#include <stdexcept>
#include <string>

namespace attnlens {

// Thrown for invalid shapes, sizes, buffers or options. The message names the argument.
class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Every public entry has a check_* twin that returns the message it would throw ("" when the call
// is valid), so that callers built without C++ exceptions (the wasm module) can validate first.
inline void throw_if(const std::string& message) {
  if (!message.empty()) throw Error(message);
}

}  // namespace attnlens
