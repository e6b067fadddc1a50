// Scratch buffers reused across calls so the hot path does not allocate once warmed up.
#pragma once
#include <cstddef>
#include <vector>

namespace attnlens {

class Scratch {
 public:
  float* get(std::size_t n) {
    if (buffer_.size() < n) buffer_.resize(n);
    return buffer_.data();
  }

 private:
  std::vector<float> buffer_;
};

// One set per thread; slot names say what each holds.
struct Workspace {
  Scratch key_t, scores, q_heads, k_heads, v_heads, o_heads, projected;
  static Workspace& local() {
    thread_local Workspace ws;
    return ws;
  }
};

}  // namespace attnlens
