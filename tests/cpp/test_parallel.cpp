// Threads (cpp/src/parallel.cpp): attention split by heads and query blocks, matrix products by
// column panels, across 2–4 threads must give results bit-identical to one thread, for every
// option, and the split must really happen (last_call_chunks) on shapes large enough to be worth
// it. (linear(): tests/cpp/test_linear.cpp.)
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "attnlens/attention.hpp"
#include "attnlens/multi_head.hpp"
#include "attnlens/ops.hpp"
#include "attnlens/threads.hpp"
#include "support.hpp"

using attnlens::AttentionOptions;
using attnlens::AttentionShape;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Results {
  std::vector<float> output, weights, scores;
};

struct Case {
  AttentionShape shape;
  bool causal = false, mask = false, output = true, weights = true, scores = false;
};

Results run(const Case& c, attnlens::Kernel kernel, std::uint32_t seed) {
  const auto& s = c.shape;
  const auto q = support::uniform(s.heads * s.n_q * s.d_k, seed);
  auto k = support::uniform(s.heads * s.n_k * s.d_k, seed + 1);
  const auto v = support::uniform(s.heads * s.n_k * s.d_v, seed + 2);
  k[3] = 3e38f;  // one overflowing score row: the redo path runs inside a worker too
  std::vector<std::uint8_t> mask;
  if (c.mask)
    for (std::size_t j = 0; j < s.n_k; ++j) mask.push_back(j % 5 != 2);
  AttentionOptions options;
  options.causal = c.causal;
  options.key_mask = attnlens::Span<const std::uint8_t>(mask);
  Results r;
  if (c.output) r.output.assign(s.heads * s.n_q * s.d_v, -1.0f);
  if (c.weights) r.weights.assign(s.heads * s.n_q * s.n_k, -1.0f);
  if (c.scores) r.scores.assign(s.heads * s.n_q * s.n_k, -1.0f);
  attnlens::attention(s, {q, k, v}, options,
                      {attnlens::Span<float>(r.output), attnlens::Span<float>(r.weights),
                       attnlens::Span<float>(r.scores)},
                      kernel);
  return r;
}

}  // namespace

TEST_CASE("threaded attention is bit-identical to one thread") {
  if (attnlens::max_threads() == 1) return;  // a build without threads
  const Case cases[] = {
      {{8, 256, 256, 64, 64}},
      {{8, 256, 256, 64, 64}, true},
      {{3, 401, 390, 64, 40}, false, true},
      {{2, 700, 700, 64, 64}, true, true, true, true, true},
      {{5, 300, 350, 64, 48}, false, false, false, true},  // weights only
      {{1, 1000, 700, 32, 64}, false, false, true, false},  // output only, one head
      {{4, 400, 900, 64, 64}, true, false, true, false},
  };
  for (attnlens::Kernel kernel : support::kernels()) {
    std::uint32_t seed = 900;
    for (const Case& c : cases) {
      seed += 7;
      attnlens::set_threads(1);
      const Results serial = run(c, kernel, seed);
      for (unsigned threads : {2u, 3u, 4u}) {
        attnlens::set_threads(threads);
        const Results split = run(c, kernel, seed);
        INFO(support::name(kernel), " heads=", c.shape.heads, " n_q=", c.shape.n_q,
             " n_k=", c.shape.n_k, " threads=", threads);
        CHECK(attnlens::last_call_chunks() > 1);
        CHECK(same_bits(serial.output, split.output));
        CHECK(same_bits(serial.weights, split.weights));
        CHECK(same_bits(serial.scores, split.scores));
      }
    }
  }
  attnlens::set_threads(1);
}

TEST_CASE("small calls stay on the calling thread") {
  if (attnlens::max_threads() == 1) return;
  attnlens::set_threads(2);
  const Case small{{1, 16, 16, 8, 8}};
  const Results r = run(small, attnlens::Kernel::simd, 3);
  CHECK(attnlens::last_call_chunks() == 1);
  attnlens::set_threads(1);
  CHECK(same_bits(r.weights, run(small, attnlens::Kernel::simd, 3).weights));
}

TEST_CASE("threaded multi-head attention is bit-identical to one thread") {
  if (attnlens::max_threads() == 1) return;
  const std::size_t n = 400, dm = 256, heads = 4;
  const auto x = support::uniform(n * dm, 41), wq = support::uniform(dm * dm, 42, -0.1f, 0.1f),
             wk = support::uniform(dm * dm, 43, -0.1f, 0.1f),
             wv = support::uniform(dm * dm, 44, -0.1f, 0.1f),
             wo = support::uniform(dm * dm, 45, -0.1f, 0.1f);
  auto once = [&](unsigned threads) {
    attnlens::set_threads(threads);
    attnlens::MultiHeadInputs in;
    in.x_q = x, in.w_q = wq, in.w_k = wk, in.w_v = wv, in.w_o = wo;
    Results r;
    r.output.resize(n * dm);
    r.weights.resize(heads * n * n);
    AttentionOptions options;
    options.causal = true;
    attnlens::multi_head_attention({n, n, dm, heads}, in, options,
                                   {attnlens::Span<float>(r.output), attnlens::Span<float>(r.weights)});
    return r;
  };
  const Results serial = once(1), split = once(2);
  CHECK(attnlens::last_call_chunks() > 1);
  CHECK(same_bits(serial.output, split.output));
  CHECK(same_bits(serial.weights, split.weights));
  attnlens::set_threads(1);
}

TEST_CASE("set_threads clamps and reports") {
  attnlens::set_threads(0);
  CHECK(attnlens::threads() == 1);
  attnlens::set_threads(1000);
  CHECK(attnlens::threads() == attnlens::max_threads());
  attnlens::set_threads(1);
  CHECK(attnlens::threads() == 1);
}

TEST_CASE("threaded matrix products are bit-identical to one thread") {
  if (attnlens::max_threads() == 1) return;
  struct Shape {
    std::size_t m, n, k;
  };
  // Below and above gemm's packing threshold (m ≥ 64), n off every panel width.
  const Shape shapes[] = {{12, 1001, 256}, {70, 515, 130}, {200, 333, 96}};
  for (attnlens::Kernel kernel : support::kernels())
    for (const Shape& s : shapes) {
      const auto a = support::uniform(s.m * s.k, 61), b = support::uniform(s.k * s.n, 62),
                 bias = support::uniform(s.n, 63);
      const attnlens::PackedMatrix packed(s.k, s.n, b.data());
      auto both = [&](unsigned threads) {
        attnlens::set_threads(threads);
        std::vector<float> c(s.m * s.n), p(s.m * s.n);
        attnlens::matmul(s.m, s.n, s.k, a.data(), b.data(), c.data(), bias.data(), kernel);
        const bool split_plain = attnlens::last_call_chunks() > 1;
        attnlens::matmul(s.m, a.data(), packed, p.data(), bias.data(), kernel);
        const bool split_packed = attnlens::last_call_chunks() > 1;
        return std::make_tuple(c, p, split_plain && split_packed);
      };
      const auto [c1, p1, split1] = both(1);
      CHECK_FALSE(split1);
      for (unsigned threads : {2u, 3u, 4u}) {
        const auto [c, p, split] = both(threads);
        INFO(std::string(support::name(kernel)), " m=", s.m, " n=", s.n, " k=", s.k, " threads=", threads);
        CHECK(split);
        CHECK(same_bits(c1, c));
        CHECK(same_bits(p1, p));
      }
    }
  attnlens::set_threads(1);
}
