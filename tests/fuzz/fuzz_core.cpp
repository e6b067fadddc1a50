// libFuzzer harness for the C++ core, through its public API only: attention() (caller-owned and
// owning forms), multi_head_attention(), matmul() (B as given and packed once) and linear()
// (weights at float32, float16 or bfloat16), with random
// shapes (0, small, huge), options, masks, buffer lengths and values (NaN, ±Inf, denormals,
// FLT_MAX, …).
//
// What counts as a finding (the harness aborts, libFuzzer saves the input):
//   - any crash or sanitizer report (built with -fsanitize=fuzzer,address,undefined);
//   - check_*() accepting a call whose buffers do not match the shape, or rejecting a valid one;
//   - a rejected call that does not throw attnlens::Error with the same message, or any other
//     exception type (std::bad_alloc, std::length_error, …) escaping the API;
//   - with bounded finite inputs: non-finite results, weights outside [0, 1], rows not summing to
//     1 (or 0 when every key is masked), masked or causally hidden weights not exactly 0, an
//     output outside the range of V, or matmul disagreeing with a float64 reference.
// Buffers are always allocated at the length their Span claims; shapes whose buffers would exceed
// kMaxFloats are given short buffers instead, so check_*() must reject them without allocating.
//
// Build: scripts/build.sh (ATTNLENS_FUZZ=ON, clang, .build/fuzz). Short run: scripts/test.sh.
// Long run: .build/fuzz/attnlens_fuzz -max_total_time=3600 -jobs=2 .build/fuzz/corpus
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnlens/attention.hpp"
#include "attnlens/error.hpp"
#include "attnlens/kernel.hpp"
#include "attnlens/linear.hpp"
#include "attnlens/multi_head.hpp"
#include "attnlens/ops.hpp"

namespace {

using attnlens::Span;

constexpr std::size_t kMaxFloats = 1 << 16;   // largest buffer the harness allocates
constexpr std::size_t kMaxWork = 1 << 21;     // multiply-adds per computed call (keeps execs fast)
constexpr float kBound = 1e3f;                // |value| ≤ kBound: result properties are checked

// Two findings of this harness, now fixed, stay checked (ATTNLENS_FUZZ_STRICT=0 steps around
// them, to bisect a regression):
//   1. attention()'s owning form sized its results before validating the inputs, so a huge
//      shape with short inputs threw std::bad_alloc instead of attnlens::Error:
//      attention({1, 1<<20, 1<<20, 1, 1}, {q, k, v}) with 1-element q, k, v.
//   2. matmul(m, n ≥ 12, k = 0, nullptr, nullptr, c) offset null pointers inside gemm
//      (UBSan: "applying non-zero offset to null pointer").
bool strict() {
  static const bool on = [] {
    const char* v = std::getenv("ATTNLENS_FUZZ_STRICT");
    return !(v && *v == '0');
  }();
  return on;
}

// How often each outcome happened; printed at exit with ATTNLENS_FUZZ_STATS=1.
enum Outcome { kRejected, kTooLarge, kComputed, kPropertiesChecked, kOutcomes };
const char* const kOutcomeNames[] = {"rejected", "valid-but-too-large", "computed",
                                     "properties-checked"};
std::size_t g_counts[5][kOutcomes];
std::size_t* g_count = g_counts[0];

void print_stats() {
  const char* apis[] = {"attention", "attention (owning)", "multi_head", "matmul", "linear"};
  for (int a = 0; a < 5; ++a) {
    std::fprintf(stderr, "%-20s", apis[a]);
    for (int o = 0; o < kOutcomes; ++o) std::fprintf(stderr, " %s=%zu", kOutcomeNames[o], g_counts[a][o]);
    std::fprintf(stderr, "\n");
  }
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* v = std::getenv("ATTNLENS_FUZZ_STATS");
  if (v && *v && *v != '0') std::atexit(print_stats);
  return 0;
}

// The call being made, printed with a finding so that it can be reproduced without the harness.
std::string g_call;

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "attnlens fuzz finding: %s %s\n  call: %s\n", what, detail.c_str(),
               g_call.c_str());
  std::fflush(stderr);
  std::abort();
}

// a·b·c, saturating at SIZE_MAX (the harness's own arithmetic must not overflow either).
std::size_t mul(std::size_t a, std::size_t b, std::size_t c = 1) {
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (a == 0 || b == 0 || c == 0) return 0;
  if (a > max / b) return max;
  if (a * b > max / c) return max;
  return a * b * c;
}

std::size_t size_value(FuzzedDataProvider& fdp) {
  const std::uint8_t kind = fdp.ConsumeIntegral<std::uint8_t>();
  if (kind < 170) return kind % 9;                                    // 0 … 8
  if (kind < 225) return fdp.ConsumeIntegralInRange<std::size_t>(0, 80);
  if (kind < 240) {
    static const std::size_t huge[] = {
        (1u << 16) + 1, std::size_t(1) << 31, std::size_t(1) << 32, (std::size_t(1) << 32) + 1,
        std::numeric_limits<std::size_t>::max() / 4, std::numeric_limits<std::size_t>::max() / 4 + 1,
        std::numeric_limits<std::size_t>::max() / 2, std::numeric_limits<std::size_t>::max(),
        std::size_t(1) << 62, 100000, 1u << 20, 46341 /* ⌈√2³¹⌉ */};
    return huge[fdp.ConsumeIntegralInRange<std::size_t>(0, sizeof huge / sizeof *huge - 1)];
  }
  return fdp.ConsumeIntegral<std::size_t>();
}

float special_value(std::uint8_t which) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  static const float values[] = {
      std::numeric_limits<float>::quiet_NaN(), inf, -inf, std::numeric_limits<float>::max(),
      -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::min(), -0.0f, 0.0f, 1e30f, -1e30f, kBound, -kBound, 1e-30f,
      -std::numeric_limits<float>::signaling_NaN()};
  return values[which % (sizeof values / sizeof *values)];
}

// Values: a PRNG over small numbers (seeded by the input), plus specials at chosen positions.
struct ValueSource {
  std::uint32_t state;
  float range;
  explicit ValueSource(FuzzedDataProvider& fdp)
      : state(fdp.ConsumeIntegral<std::uint32_t>() | 1u),
        range(std::ldexp(1.0f, fdp.ConsumeIntegralInRange<int>(-8, 9))) {}
  float next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * range;
  }
};

struct Buffer {
  std::vector<float> data;
  bool null_data = false;  // a Span claiming `claimed` elements at nullptr
  std::size_t claimed = 0;
  Span<const float> in() const {
    return {null_data ? nullptr : data.data(), null_data ? claimed : data.size()};
  }
  Span<float> out() { return {null_data ? nullptr : data.data(), null_data ? claimed : data.size()}; }
};

// A buffer for `want` elements: usually exact, sometimes off by one, empty or null-with-length.
// A `want` above kMaxFloats is never allocated: the buffer is then short, so the call is invalid.
Buffer make_buffer(FuzzedDataProvider& fdp, std::size_t want, bool optional, bool* bounded,
                   ValueSource& values) {
  Buffer b;
  const std::uint8_t mode = fdp.ConsumeIntegral<std::uint8_t>();
  std::size_t length = want;
  if (optional && mode < 40) length = 0;                 // not given
  else if (mode >= 230 && mode < 240) length = want + 1;
  else if (mode >= 240 && mode < 250) length = want ? want - 1 : 1;
  else if (mode >= 250) length = fdp.ConsumeIntegralInRange<std::size_t>(0, 64);
  if (mode == 255 && length > 0) {  // a Span with a length but no data
    b.null_data = true;
    b.claimed = length;
    return b;
  }
  if (length > kMaxFloats) length = fdp.ConsumeIntegralInRange<std::size_t>(0, 16);
  b.data.resize(length);
  for (float& x : b.data) x = values.next();
  const std::size_t specials = length ? fdp.ConsumeIntegralInRange<std::size_t>(0, 3) : 0;
  for (std::size_t i = 0; i < specials; ++i) {
    const std::size_t at = fdp.ConsumeIntegralInRange<std::size_t>(0, length - 1);
    b.data[at] = special_value(fdp.ConsumeIntegral<std::uint8_t>());
  }
  for (float x : b.data)
    if (!(std::fabs(x) <= kBound)) *bounded = false;
  return b;
}

struct Mask {
  std::vector<std::uint8_t> bytes;
  bool null_data = false;
  std::size_t claimed = 0;
  Span<const std::uint8_t> span() const {
    return {null_data ? nullptr : bytes.data(), null_data ? claimed : bytes.size()};
  }
};

Mask make_mask(FuzzedDataProvider& fdp, std::size_t n_k) {
  Mask m;
  const std::uint8_t mode = fdp.ConsumeIntegral<std::uint8_t>();
  if (mode < 128) return m;  // no mask
  std::size_t length = n_k;
  if (mode >= 240 && mode < 250) length = fdp.ConsumeIntegralInRange<std::size_t>(0, 64);
  if (mode >= 250 && n_k > 0) {
    m.null_data = true;
    m.claimed = n_k;
    return m;
  }
  if (length > kMaxFloats) length = 3;
  m.bytes.resize(length);
  const std::uint8_t density = fdp.ConsumeIntegral<std::uint8_t>();
  std::uint32_t state = fdp.ConsumeIntegral<std::uint32_t>() | 1u;
  for (auto& byte : m.bytes) {
    state = state * 1664525u + 1013904223u;
    byte = (state >> 24) < density ? 0 : 1;
  }
  if (length && fdp.ConsumeBool())  // values other than 0/1 (nonzero means keep)
    m.bytes[fdp.ConsumeIntegralInRange<std::size_t>(0, length - 1)] = fdp.ConsumeIntegral<std::uint8_t>();
  return m;
}

attnlens::AttentionOptions make_options(FuzzedDataProvider& fdp, const Mask& mask) {
  attnlens::AttentionOptions o;
  const std::uint8_t scale = fdp.ConsumeIntegral<std::uint8_t>();
  if (scale >= 128 && scale < 192) o.scale = std::ldexp(1.0f, fdp.ConsumeIntegralInRange<int>(-20, 20));
  else if (scale >= 192 && scale < 224) o.scale = special_value(fdp.ConsumeIntegral<std::uint8_t>());
  else if (scale >= 224) o.scale = fdp.ConsumeFloatingPoint<float>();
  o.causal = fdp.ConsumeBool();
  o.key_mask = mask.span();
  return o;
}

std::string describe(const Buffer& b) {
  if (b.null_data) return "null[" + std::to_string(b.claimed) + "]";
  return "[" + std::to_string(b.data.size()) + "]";
}

std::string describe(const attnlens::AttentionOptions& o, const Mask& m, attnlens::Kernel k) {
  std::string s = "scale=" + (o.scale ? std::to_string(*o.scale) : std::string("default"));
  s += o.causal ? " causal" : "";
  if (m.null_data) s += " key_mask=null[" + std::to_string(m.claimed) + "]";
  else if (!m.bytes.empty()) s += " key_mask=[" + std::to_string(m.bytes.size()) + "]";
  return s + (k == attnlens::Kernel::simd ? " simd" : " scalar");
}

attnlens::Kernel kernel_of(FuzzedDataProvider& fdp) {
  return fdp.ConsumeBool() ? attnlens::Kernel::simd : attnlens::Kernel::scalar;
}

// Runs `call`; it must throw attnlens::Error whose message is `expected`.
template <class F>
void expect_error(const char* api, const std::string& expected, F&& call) {
  try {
    call();
  } catch (const attnlens::Error& e) {
    if (expected != e.what())
      fail(api, "threw \"" + std::string(e.what()) + "\" but check said \"" + expected + "\"");
    ++g_count[kRejected];
    return;
  } catch (const std::exception& e) {
    fail(api, std::string("threw a non-attnlens exception: ") + e.what());
  } catch (...) {
    fail(api, "threw something that is not a std::exception");
  }
  fail(api, "accepted a call that check rejected: " + expected);
}

template <class F>
void expect_success(const char* api, F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    fail(api, std::string("threw on a call that check accepted: ") + e.what());
  }
  ++g_count[kComputed];
}

bool is_valid(const Buffer& b, std::size_t want) {
  return !b.null_data && b.data.size() == want;
}

// Properties of softmax weights [heads, n_q, n_k] computed from bounded finite inputs.
void check_weights(const char* api, const float* w, std::size_t heads, std::size_t n_q,
                   std::size_t n_k, bool causal, const std::uint8_t* mask) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n_q; ++i) {
      const float* row = w + (h * n_q + i) * n_k;
      const std::size_t visible = causal ? std::min(i + 1, n_k) : n_k;
      bool any_kept = false;
      double sum = 0;
      for (std::size_t j = 0; j < n_k; ++j) {
        const bool hidden = j >= visible || (mask && !mask[j]);
        any_kept |= !hidden;
        if (!(row[j] >= 0.0f && row[j] <= 1.0f))
          fail(api, "weight outside [0, 1]: " + std::to_string(row[j]));
        if (hidden && row[j] != 0.0f) fail(api, "masked or causally hidden weight is not 0");
        sum += row[j];
      }
      if (any_kept ? std::fabs(sum - 1.0) > 1e-3 : sum != 0.0)
        fail(api, "weight row sums to " + std::to_string(sum));
    }
}

void fuzz_attention(FuzzedDataProvider& fdp, bool owning) {
  attnlens::AttentionShape s;
  s.heads = size_value(fdp);
  s.n_q = size_value(fdp);
  s.n_k = size_value(fdp);
  s.d_k = size_value(fdp);
  s.d_v = size_value(fdp);
  ValueSource values(fdp);
  bool bounded = true;
  const std::size_t q_len = mul(s.heads, s.n_q, s.d_k), k_len = mul(s.heads, s.n_k, s.d_k),
                    v_len = mul(s.heads, s.n_k, s.d_v), o_len = mul(s.heads, s.n_q, s.d_v),
                    w_len = mul(s.heads, s.n_q, s.n_k);
  Buffer q = make_buffer(fdp, q_len, false, &bounded, values);
  Buffer k = make_buffer(fdp, k_len, false, &bounded, values);
  // Optional: a weights-only call (no output) does not read v.
  Buffer v = make_buffer(fdp, v_len, true, &bounded, values);
  const Mask mask = make_mask(fdp, s.n_k);
  const attnlens::AttentionOptions options = make_options(fdp, mask);
  const attnlens::Kernel kernel = kernel_of(fdp);
  const attnlens::AttentionInputs in{q.in(), k.in(), v.in()};
  g_call = std::string(owning ? "attention (owning)" : "attention") + " shape{heads=" +
           std::to_string(s.heads) + " n_q=" + std::to_string(s.n_q) + " n_k=" +
           std::to_string(s.n_k) + " d_k=" + std::to_string(s.d_k) + " d_v=" +
           std::to_string(s.d_v) + "} q" + describe(q) + " k" + describe(k) + " v" + describe(v) +
           " " + describe(options, mask, kernel);
  // The engine refuses a shape any of whose five buffers could not be addressed (more than
  // SIZE_MAX / sizeof(float) floats), even one the call leaves unused (v or output when only
  // weights are asked for): such a shape cannot describe real data.
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / sizeof(float);
  bool addressable = true;
  for (std::size_t len : {q_len, k_len, v_len, o_len, w_len})
    addressable &= len != 0 && len <= limit;
  const bool qk_ok = addressable && is_valid(q, q_len) && is_valid(k, k_len);
  const bool inputs_ok = qk_ok && is_valid(v, v_len);
  const bool mask_ok = mask.span().empty() || (!mask.null_data && mask.bytes.size() == s.n_k);
  const bool scale_ok = !options.scale || (std::isfinite(*options.scale) && *options.scale > 0);
  const std::size_t work = mul(w_len, std::max(s.d_k, s.d_v));

  if (owning) {
    const bool return_scores = fdp.ConsumeBool();
    const std::string expected = attnlens::check_attention(s, in, options, {});
    // With no output buffers given, check_attention reports at least "output".
    if (expected.empty()) fail("check_attention", "accepted an empty output buffer");
    const bool valid = inputs_ok && mask_ok && scale_ok && o_len <= kMaxFloats && w_len <= kMaxFloats;
    const bool results_fit = o_len <= kMaxFloats && w_len <= kMaxFloats;  // known finding 1
    if (!valid && !(inputs_ok && mask_ok && scale_ok) && (results_fit || strict())) {
      // Invalid inputs: the owning form must reject them before allocating its results.
      try {
        (void)attnlens::attention(s, in, options, return_scores, kernel);
      } catch (const attnlens::Error&) {
        ++g_count[kRejected];
        return;
      } catch (const std::exception& e) {
        fail("attention (owning)", std::string("threw a non-attnlens exception: ") + e.what());
      }
      fail("attention (owning)", "accepted invalid inputs");
    }
    if (!valid || work > kMaxWork) {  // valid but larger than the harness computes
      ++g_count[kTooLarge];
      return;
    }
    attnlens::AttentionResult r;
    expect_success("attention (owning)",
                   [&] { r = attnlens::attention(s, in, options, return_scores, kernel); });
    if (r.output.size() != o_len || r.weights.size() != w_len ||
        r.scores.size() != (return_scores ? w_len : 0))
      fail("attention (owning)", "result sizes do not match the shape");
    if (bounded && scale_ok) {
      check_weights("attention (owning)", r.weights.data(), s.heads, s.n_q, s.n_k, options.causal,
                    mask.bytes.empty() ? nullptr : mask.bytes.data());
      ++g_count[kPropertiesChecked];
    }
    return;
  }

  Buffer output = make_buffer(fdp, o_len, true, &bounded, values);
  Buffer weights = make_buffer(fdp, w_len, true, &bounded, values);
  Buffer scores = make_buffer(fdp, w_len, true, &bounded, values);
  const attnlens::AttentionOutputs out{output.out(), weights.out(), scores.out()};
  g_call += " output" + describe(output) + " weights" + describe(weights) + " scores" +
            describe(scores);
  // Every result buffer is optional (without output, v is optional too), but one is needed.
  const bool outputs_ok = o_len && (output.out().empty() || is_valid(output, o_len)) &&
                          (weights.out().empty() || is_valid(weights, w_len)) &&
                          (scores.out().empty() || is_valid(scores, w_len)) &&
                          !(output.out().empty() && weights.out().empty() && scores.out().empty());
  const bool v_ok = is_valid(v, v_len) || (output.out().empty() && v.in().empty());
  const bool valid = qk_ok && v_ok && outputs_ok && mask_ok && scale_ok;
  const std::string expected = attnlens::check_attention(s, in, options, out);
  if (valid != expected.empty())
    fail("check_attention", valid ? "rejected a valid call: " + expected
                                  : std::string("accepted an invalid call"));
  if (!valid) {
    expect_error("attention", expected, [&] { attnlens::attention(s, in, options, out, kernel); });
    return;
  }
  if (work > kMaxWork) {
    ++g_count[kTooLarge];
    return;
  }
  // Bounded inputs (outputs are overwritten, so their garbage does not count).
  bounded = true;
  for (const Buffer* b : {&q, &k, &v})
    for (float x : b->data) bounded &= std::fabs(x) <= kBound;
  expect_success("attention", [&] { attnlens::attention(s, in, options, out, kernel); });
  if (!bounded) return;
  const std::uint8_t* m = mask.bytes.empty() ? nullptr : mask.bytes.data();
  if (!weights.data.empty())
    check_weights("attention", weights.data.data(), s.heads, s.n_q, s.n_k, options.causal, m);
  float v_max = 0;
  for (float x : v.data) v_max = std::max(v_max, std::fabs(x));
  for (float x : output.data)
    if (!(std::fabs(x) <= v_max * (1 + 1e-3f) + 1e-30f))
      fail("attention", "output outside the range of V: " + std::to_string(x));
  ++g_count[kPropertiesChecked];
}

void fuzz_multi_head(FuzzedDataProvider& fdp) {
  attnlens::MultiHeadShape s;
  s.n_q = size_value(fdp);
  s.n_k = size_value(fdp);
  s.d_model = size_value(fdp);
  s.heads = fdp.ConsumeBool() ? size_value(fdp) : (fdp.ConsumeBool() ? 1 : 2);
  const bool cross = fdp.ConsumeBool();
  const std::size_t n_k = cross ? s.n_k : s.n_q;
  ValueSource values(fdp);
  bool bounded = true;
  const std::size_t xq_len = mul(s.n_q, s.d_model), xkv_len = mul(n_k, s.d_model),
                    w_len = mul(s.d_model, s.d_model), a_len = mul(s.heads, s.n_q, n_k);
  Buffer x_q = make_buffer(fdp, xq_len, false, &bounded, values);
  Buffer x_kv = cross ? make_buffer(fdp, xkv_len, false, &bounded, values) : Buffer{};
  Buffer w_q = make_buffer(fdp, w_len, false, &bounded, values);
  Buffer w_k = make_buffer(fdp, w_len, false, &bounded, values);
  Buffer w_v = make_buffer(fdp, w_len, true, &bounded, values);  // optional without output
  Buffer w_o = make_buffer(fdp, w_len, true, &bounded, values);
  Buffer b_q = make_buffer(fdp, s.d_model, true, &bounded, values);
  Buffer b_k = make_buffer(fdp, s.d_model, true, &bounded, values);
  Buffer b_v = make_buffer(fdp, s.d_model, true, &bounded, values);
  Buffer b_o = make_buffer(fdp, s.d_model, true, &bounded, values);
  const Mask mask = make_mask(fdp, n_k);
  const attnlens::AttentionOptions options = make_options(fdp, mask);
  const attnlens::Kernel kernel = kernel_of(fdp);
  Buffer output = make_buffer(fdp, xq_len, true, &bounded, values);
  Buffer weights = make_buffer(fdp, a_len, true, &bounded, values);

  attnlens::MultiHeadInputs in;
  in.x_q = x_q.in();
  in.x_kv = x_kv.in();
  in.w_q = w_q.in();
  in.w_k = w_k.in();
  in.w_v = w_v.in();
  in.w_o = w_o.in();
  in.b_q = b_q.in();
  in.b_k = b_k.in();
  in.b_v = b_v.in();
  in.b_o = b_o.in();
  const attnlens::MultiHeadOutputs out{output.out(), weights.out()};
  g_call = "multi_head_attention shape{n_q=" + std::to_string(s.n_q) + " n_k=" +
           std::to_string(s.n_k) + " d_model=" + std::to_string(s.d_model) + " heads=" +
           std::to_string(s.heads) + "} x_q" + describe(x_q) + " x_kv" + describe(x_kv) + " w_q" +
           describe(w_q) + " w_k" + describe(w_k) + " w_v" + describe(w_v) + " w_o" +
           describe(w_o) + " b_q" + describe(b_q) + " b_k" + describe(b_k) + " b_v" +
           describe(b_v) + " b_o" + describe(b_o) + " output" + describe(output) + " weights" +
           describe(weights) + " " + describe(options, mask, kernel);

  auto optional_ok = [](const Buffer& b, std::size_t want) {
    return b.in().empty() || is_valid(b, want);
  };
  const bool cross_given = !in.x_kv.empty();
  const std::size_t keys = cross_given ? s.n_k : s.n_q;
  const std::size_t a_want = mul(s.heads, s.n_q, keys), xkv_want = mul(keys, s.d_model);
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / sizeof(float);
  const bool shape_ok = s.n_q && keys && s.d_model && s.heads && s.d_model % s.heads == 0 &&
                        xq_len <= limit && xkv_want <= limit && w_len <= limit && a_want <= limit;
  const bool valid =
      shape_ok && is_valid(x_q, xq_len) && (!cross_given || is_valid(x_kv, xkv_want)) &&
      is_valid(w_q, w_len) && is_valid(w_k, w_len) &&
      (is_valid(w_v, w_len) || (output.out().empty() && w_v.in().empty())) &&
      optional_ok(w_o, w_len) && optional_ok(b_q, s.d_model) && optional_ok(b_k, s.d_model) &&
      optional_ok(b_v, s.d_model) && optional_ok(b_o, s.d_model) &&
      (in.b_o.empty() || !in.w_o.empty()) &&
      (is_valid(output, xq_len) || (output.out().empty() && !weights.out().empty())) &&
      (weights.out().empty() || is_valid(weights, a_want)) &&
      (mask.span().empty() || (!mask.null_data && mask.bytes.size() == keys)) &&
      (!options.scale || (std::isfinite(*options.scale) && *options.scale > 0));
  const std::string expected = attnlens::check_multi_head(s, in, options, out);
  if (valid != expected.empty())
    fail("check_multi_head", valid ? "rejected a valid call: " + expected
                                   : std::string("accepted an invalid call"));
  if (!valid) {
    expect_error("multi_head_attention", expected,
                 [&] { attnlens::multi_head_attention(s, in, options, out, kernel); });
    return;
  }
  const std::size_t n = std::max(s.n_q, keys);
  if (mul(n, s.d_model, s.d_model) > kMaxWork || mul(a_want, s.d_model) > kMaxWork) {
    ++g_count[kTooLarge];
    return;
  }
  bounded = true;
  for (const Buffer* b : {&x_q, &x_kv, &w_q, &w_k, &w_v, &w_o, &b_q, &b_k, &b_v, &b_o})
    for (float x : b->data) bounded &= std::fabs(x) <= kBound;
  expect_success("multi_head_attention",
                 [&] { attnlens::multi_head_attention(s, in, options, out, kernel); });
  if (!bounded) return;
  if (!weights.data.empty())
    check_weights("multi_head_attention", weights.data.data(), s.heads, s.n_q, keys,
                  options.causal, mask.bytes.empty() ? nullptr : mask.bytes.data());
  for (float x : output.data)
    if (!std::isfinite(x)) fail("multi_head_attention", "non-finite output from bounded inputs");
  ++g_count[kPropertiesChecked];
}

// matmul has no checks (callers validate): fuzz shapes within bounds against a float64 reference.
void fuzz_matmul(FuzzedDataProvider& fdp) {
  const std::size_t m = fdp.ConsumeIntegralInRange<std::size_t>(0, 40);
  const std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 70);
  const std::size_t k = fdp.ConsumeIntegralInRange<std::size_t>(0, 70);
  const bool with_bias = fdp.ConsumeBool();
  const attnlens::Kernel kernel = kernel_of(fdp);
  ValueSource values(fdp);
  bool bounded = true;
  Buffer a, b, bias;
  a.data.resize(m * k);
  b.data.resize(k * n);
  bias.data.resize(with_bias ? n : 0);
  // Known finding 2: empty matrices get a real address unless strict (the library's own callers
  // never pass k = 0).
  float dummy[1] = {0};
  auto address = [&](Buffer& buf) {
    return buf.data.empty() && !strict() ? dummy : buf.data.data();
  };
  for (Buffer* buf : {&a, &b, &bias}) {
    for (float& x : buf->data) x = values.next();
    if (!buf->data.empty() && fdp.ConsumeBool())
      buf->data[fdp.ConsumeIntegralInRange<std::size_t>(0, buf->data.size() - 1)] =
          special_value(fdp.ConsumeIntegral<std::uint8_t>());
    for (float x : buf->data) bounded &= std::fabs(x) <= kBound;
  }
  g_call = "matmul m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
           std::to_string(k) + (with_bias ? " bias" : "") +
           (kernel == attnlens::Kernel::simd ? " simd" : " scalar");
  // Guard cells around C catch writes outside [m, n].
  constexpr float guard = -12345.5f;
  std::vector<float> c(m * n + 32, guard);
  attnlens::matmul(m, n, k, address(a), address(b), c.data() + 16,
                   with_bias ? bias.data.data() : nullptr, kernel);
  // The same product with B packed once (PackedMatrix: the model layers' path, with A's rows
  // packed into tiles); k = 0 falls back to the call above.
  std::vector<float> packed_c(m * n + 32, guard);
  std::vector<std::pair<const char*, const std::vector<float>*>> outputs = {{"matmul", &c}};
  if (k > 0) {
    attnlens::matmul(m, address(a), attnlens::PackedMatrix(k, n, address(b)), packed_c.data() + 16,
                     with_bias ? bias.data.data() : nullptr, kernel);
    outputs.emplace_back("matmul (packed B)", &packed_c);
  }
  for (const auto& [what, out] : outputs) {
    for (std::size_t i = 0; i < 16; ++i)
      if ((*out)[i] != guard || (*out)[16 + m * n + i] != guard) fail(what, "wrote outside C");
  }
  ++g_count[kComputed];
  if (!bounded) return;
  for (const auto& [what, out] : outputs) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double want = with_bias ? bias.data[j] : 0.0, magnitude = std::fabs(want);
        for (std::size_t p = 0; p < k; ++p) {
          want += double(a.data[i * k + p]) * b.data[p * n + j];
          magnitude += std::fabs(double(a.data[i * k + p]) * b.data[p * n + j]);
        }
        const double got = (*out)[16 + i * n + j];
        if (!(std::fabs(got - want) <= 1e-5 * magnitude + 1e-30))
          fail(what, "differs from the float64 reference at (" + std::to_string(i) + ", " +
                         std::to_string(j) + "): " + std::to_string(got) + " vs " +
                         std::to_string(want));
      }
  }
  ++g_count[kPropertiesChecked];
}

// linear() has no checks either: weight type, shape and values from the input (16-bit weights as
// raw bits: subnormals, zeros, both signs; infinities and NaN too, where only the guard cells
// are checked, as the loaders reject non-finite weights), against a float64 reference.
void fuzz_linear(FuzzedDataProvider& fdp) {
  const auto type = static_cast<attnlens::WeightType>(fdp.ConsumeIntegralInRange<int>(0, 2));
  const std::size_t m = fdp.ConsumeIntegralInRange<std::size_t>(0, 70);
  const std::size_t out = fdp.ConsumeIntegralInRange<std::size_t>(0, 90);
  const std::size_t in = fdp.ConsumeIntegralInRange<std::size_t>(0, 90);
  const bool with_bias = fdp.ConsumeBool();
  const attnlens::Kernel kernel = kernel_of(fdp);
  ValueSource values(fdp);
  bool bounded = true;
  std::vector<float> x(m * in), bias(with_bias ? out : 0), f32(type == attnlens::WeightType::f32 ? out * in : 0);
  std::vector<std::uint16_t> bits(type == attnlens::WeightType::f32 ? 0 : out * in);
  std::vector<double> w(out * in);  // every weight's value
  for (float& v : x) v = values.next();
  for (float& v : bias) v = values.next();
  for (float& v : f32) v = values.next();
  if (!x.empty() && fdp.ConsumeBool())
    x[fdp.ConsumeIntegralInRange<std::size_t>(0, x.size() - 1)] = special_value(fdp.ConsumeIntegral<std::uint8_t>());
  // 16-bit weights: random bits (ValueSource's generator), the exponent kept small (float16:
  // 0–23, subnormals included; bfloat16: 2^−7 … 2^9) unless the input asks for the whole range.
  const bool any_bits = fdp.ConsumeBool();
  for (std::uint16_t& h : bits) {
    values.next();
    const std::uint32_t r = values.state >> 8;
    std::uint32_t b = r & 0xFFFFu;
    if (!any_bits && type == attnlens::WeightType::f16)
      b = (r & 0x83FFu) | ((r >> 16) % 24) << 10;
    else if (!any_bits)
      b = (r & 0x807Fu) | (120 + (r >> 16) % 16) << 7;
    h = static_cast<std::uint16_t>(b);
  }
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = type == attnlens::WeightType::f32 ? f32[i]
           : type == attnlens::WeightType::f16 ? attnlens::f16_to_f32(bits[i])
                                               : attnlens::bf16_to_f32(bits[i]);
  for (float v : x) bounded &= std::fabs(v) <= kBound;
  for (float v : bias) bounded &= std::fabs(v) <= kBound;
  for (double v : w) bounded &= std::fabs(v) <= 1e6;
  const char* names[] = {"f32", "f16", "bf16"};
  g_call = std::string("linear ") + names[int(type)] + " m=" + std::to_string(m) + " out=" +
           std::to_string(out) + " in=" + std::to_string(in) + (with_bias ? " bias" : "") +
           (kernel == attnlens::Kernel::simd ? " simd" : " scalar");
  const void* data = type == attnlens::WeightType::f32 ? static_cast<const void*>(f32.data()) : bits.data();
  constexpr float guard = -12345.5f;
  std::vector<float> y(m * out + 32, guard);
  attnlens::linear(m, x.data(), {data, type, out, in}, with_bias ? bias.data() : nullptr,
                   y.data() + 16, kernel);
  for (std::size_t i = 0; i < 16; ++i)
    if (y[i] != guard || y[16 + m * out + i] != guard) fail("linear", "wrote outside y");
  ++g_count[kComputed];
  if (!bounded) return;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t o = 0; o < out; ++o) {
      double want = with_bias ? bias[o] : 0.0, magnitude = std::fabs(want);
      for (std::size_t c = 0; c < in; ++c) {
        want += double(x[i * in + c]) * w[o * in + c];
        magnitude += std::fabs(double(x[i * in + c]) * w[o * in + c]);
      }
      const double got = y[16 + i * out + o];
      if (!(std::fabs(got - want) <= 1e-5 * magnitude + 1e-30))
        fail("linear", "differs from the float64 reference at (" + std::to_string(i) + ", " +
                           std::to_string(o) + "): " + std::to_string(got) + " vs " +
                           std::to_string(want));
    }
  ++g_count[kPropertiesChecked];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int api = fdp.ConsumeIntegralInRange<int>(0, 4);
  g_count = g_counts[api];
  switch (api) {
    case 0: fuzz_attention(fdp, false); break;
    case 1: fuzz_attention(fdp, true); break;
    case 2: fuzz_multi_head(fdp); break;
    case 3: fuzz_matmul(fdp); break;
    default: fuzz_linear(fdp); break;
  }
  return 0;
}
