// Scratch buffers reused across calls so the hot path does not allocate once warmed up.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

namespace attnlens {

class Scratch {
 public:
  // At least n floats. Grows (and allocates) only when a call needs more than any before it.
  float* get(std::size_t n) {
    if (buffer_.size() < n) buffer_.resize(n);
    if (n > requested_) requested_ = n;
    return buffer_.data();
  }
  std::size_t requested_bytes() const { return requested_ * sizeof(float); }
  void forget_requests() { requested_ = 0; }

 private:
  std::vector<float> buffer_;
  std::size_t requested_ = 0;  // largest request since forget_requests()
};

// One set per thread; slot names say what each holds.
struct Workspace {
  // attention(): packed keys, packed values (only when dV is not whole tiles), Qᵀ of a query
  // block, the score block, the output block, per-query statistics, the 0/−inf key-mask bias,
  // one score row for rows redone after an overflow.
  Scratch key_t, values, queries, scores, out_block, stats, key_bias, row;
  // multi_head_attention(): per-head copies and projections.
  Scratch q_heads, k_heads, v_heads, o_heads, projected;

  static Workspace& local() {
    thread_local Workspace ws;
    return ws;
  }

  // Bytes of scratch requested by the last public call (see CallScope): what it needed beyond
  // its arguments and results. Benchmarks report it as the call's working memory.
  std::size_t call_bytes() {
    std::size_t total = 0;
    for (Scratch* s : all()) total += s->requested_bytes();
    return total;
  }

 private:
  friend class CallScope;
  int depth_ = 0;
  std::array<Scratch*, 13> all() {
    return {&key_t, &values, &queries, &scores, &out_block, &stats, &key_bias, &row,
            &q_heads, &k_heads, &v_heads, &o_heads, &projected};
  }
};

// Marks one public call: the outermost scope (multi-head attention around the attention it runs)
// restarts the count behind Workspace::call_bytes().
class CallScope {
 public:
  explicit CallScope(Workspace& ws) : ws_(ws) {
    if (ws_.depth_++ == 0)
      for (Scratch* s : ws_.all()) s->forget_requests();
  }
  ~CallScope() { --ws_.depth_; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  Workspace& ws_;
};

}  // namespace attnlens
