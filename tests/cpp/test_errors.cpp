#include <doctest/doctest.h>

#include <limits>

#include "attnlens/attention.hpp"
#include "attnlens/multi_head.hpp"
#include "support.hpp"

using attnlens::AttentionOptions;
using attnlens::AttentionShape;

namespace {

std::string attention_error(AttentionShape shape, std::size_t q_len, std::size_t k_len,
                            std::size_t v_len, AttentionOptions options = {}) {
  std::vector<float> q(q_len), k(k_len), v(v_len);
  return support::error_message(
      [&] { attnlens::attention(shape, {q, k, v}, options); });
}

}  // namespace

TEST_CASE("invalid attention arguments throw attnlens::Error naming the argument") {
  using support::contains;
  CHECK(contains(attention_error({1, 0, 2, 2, 2}, 0, 4, 4), "n_q must be a positive integer"));
  CHECK(contains(attention_error({0, 1, 2, 2, 2}, 2, 4, 4), "heads must be a positive integer"));
  CHECK(contains(attention_error({1, 2, 2, 0, 2}, 0, 0, 4), "d_k must be a positive integer"));
  CHECK(contains(attention_error({1, 2, 3, 4, 5}, 7, 12, 15), "q must have 8 elements"));
  CHECK(contains(attention_error({1, 2, 3, 4, 5}, 8, 11, 15), "k must have 12 elements"));
  CHECK(contains(attention_error({1, 2, 3, 4, 5}, 8, 12, 14), "v must have 15 elements"));
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
  CHECK(contains(attention_error({huge, huge, 2, 2, 2}, 1, 1, 1), "too large"));

  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    AttentionOptions options;
    options.scale = bad;
    CHECK(contains(attention_error({1, 2, 3, 4, 5}, 8, 12, 15, options),
                   "scale must be a finite number > 0"));
  }
  const std::vector<std::uint8_t> mask(2, 1);
  AttentionOptions options;
  options.key_mask = {mask.data(), mask.size()};
  CHECK(contains(attention_error({1, 2, 3, 4, 5}, 8, 12, 15, options),
                 "key_mask must have 3 elements"));

  std::vector<float> q(8), k(12), v(15), out(9);
  CHECK_THROWS_AS(attnlens::attention({1, 2, 3, 4, 5}, {q, k, v}, {}, {out}), attnlens::Error);

  // The library keeps working after an error.
  const auto r = attnlens::attention({1, 2, 3, 4, 5}, {q, k, v});
  CHECK(r.weights.size() == 6);
  CHECK(r.weights[0] == doctest::Approx(1.0 / 3));
}

TEST_CASE("invalid multi-head arguments throw attnlens::Error naming the argument") {
  using support::contains;
  std::vector<float> x(12), w(16), bad_w(15), b(3), out(12);
  auto error = [&](attnlens::MultiHeadShape shape, attnlens::MultiHeadInputs in) {
    return support::error_message([&] {
      attnlens::multi_head_attention(shape, in, {}, {out});
    });
  };
  attnlens::MultiHeadInputs in;
  in.x_q = x, in.w_q = w, in.w_k = w, in.w_v = w;
  CHECK(error({3, 0, 4, 3}, in) == "heads (3) must divide d_model (4)");
  CHECK(contains(error({3, 0, 4, 0}, in), "heads must be a positive integer"));
  auto bad = in;
  bad.w_k = bad_w;
  CHECK(contains(error({3, 0, 4, 2}, bad), "w_k must have 16 elements"));
  bad = in;
  bad.b_v = b;
  CHECK(contains(error({3, 0, 4, 2}, bad), "b_v must have 4 elements"));
  bad = in;
  bad.x_kv = b;
  CHECK(contains(error({3, 2, 4, 2}, bad), "x_kv must have 8 elements"));
  CHECK(error({3, 0, 4, 2}, in) == "(no exception)");
}

// Found by the fuzzer (tests/fuzz): a Span with a length but no data used to pass the checks and
// then be written through (weights, scores, multi-head buffers) or silently ignored (masks).
TEST_CASE("a buffer with a length but no data is an error, never dereferenced") {
  using support::contains;
  std::vector<float> q(8), k(12), v(15), out(10);
  auto attention_error = [&](attnlens::AttentionOutputs o, AttentionOptions options = {}) {
    return support::error_message([&] { attnlens::attention({1, 2, 3, 4, 5}, {q, k, v}, options, o); });
  };
  CHECK(contains(attention_error({out, {nullptr, 6}, {}}), "weights has 6 elements but no data"));
  CHECK(contains(attention_error({out, {}, {nullptr, 6}}), "scores has 6 elements but no data"));
  AttentionOptions null_mask;
  null_mask.key_mask = {nullptr, 3};
  CHECK(contains(attention_error({out}, null_mask), "key_mask has 3 elements but no data"));

  std::vector<float> x(12), w(16), mh_out(12);
  attnlens::MultiHeadInputs in;
  in.x_q = x, in.w_q = w, in.w_k = w, in.w_v = w;
  auto multi_head_error = [&](attnlens::MultiHeadInputs i, attnlens::MultiHeadOutputs o) {
    return support::error_message([&] { attnlens::multi_head_attention({3, 0, 4, 2}, i, {}, o); });
  };
  auto bad = in;
  bad.w_k = {nullptr, 16};
  CHECK(contains(multi_head_error(bad, {mh_out}), "w_k has 16 elements but no data"));
  bad = in;
  bad.b_o = {nullptr, 4};
  bad.w_o = w;
  CHECK(contains(multi_head_error(bad, {mh_out}), "b_o has 4 elements but no data"));
  CHECK(contains(multi_head_error(in, {{nullptr, 12}}), "output has 12 elements but no data"));
  CHECK(contains(multi_head_error(in, {mh_out, {nullptr, 18}}), "weights has 18 elements but no data"));
  CHECK(multi_head_error(in, {mh_out}) == "(no exception)");
}
