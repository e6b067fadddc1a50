// Next-token sampling as llama2.c run.c does it, with its PRNG, so that a seed reproduces the
// same text everywhere: xorshift64* (state ^= state >> 12; state ^= state << 25; state ^= state
// >> 27; u32 = (state · 0x2545F4914F6CDD1D) >> 32), a coin = (u32 >> 8) / 2^24 in [0, 1) per
// sampled token. temperature 0 is greedy (argmax, the lowest id on ties; no coin drawn); else
// p = softmax(logits / temperature) and, with 0 < topP < 1, nucleus sampling over the smallest
// set of most probable tokens whose mass exceeds topP (run.c's cutoff (1 − topP)/(V − 1) first).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlens/span.hpp"

namespace attnlens::model {

class Rng {
 public:
  // Seed 0 would stay 0 for ever; it is replaced by a fixed odd constant.
  explicit Rng(std::uint64_t seed = 1) : state_(seed ? seed : 0x9E3779B97F4A7C15ull) {}
  std::uint32_t next_u32() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<std::uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
  }
  float next_f32() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }

 private:
  std::uint64_t state_;
};

// softmax(logits / temperature) into `probs` (temperature > 0; max subtracted; sum in double).
void softmax_probs(Span<const float> logits, float temperature, std::vector<float>& probs);

// Index of the largest value (the first on ties).
std::int32_t argmax(Span<const float> values);

struct SampleOptions {
  float temperature = 1.0f;  // 0 = greedy
  float top_p = 1.0f;        // (0, 1]; 1 = no nucleus truncation
};

// Draws the next id from `logits`. `probs` receives the distribution it was drawn from before
// nucleus truncation (softmax at the temperature; at temperature 0, softmax at temperature 1).
std::int32_t sample(Span<const float> logits, const SampleOptions& options, Rng& rng,
                    std::vector<float>& probs);

// The `k` most probable ids, most probable first (lower id first on ties).
std::vector<std::int32_t> top_k(Span<const float> probs, std::size_t k);

}  // namespace attnlens::model
