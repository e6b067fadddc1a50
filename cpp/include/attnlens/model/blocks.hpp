// Building blocks shared by the model forward passes (USE-lite's encoder, the Llama decoder):
// norms, rotary position embeddings and head reshaping. Matrix products come from
// attnlens/linear.hpp and attnlens/ops.hpp, activations from attnlens/activation.hpp and attention
// from attnlens/attention.hpp. Row-major float32; no checks:
// callers validate shapes.
#pragma once
#include <cstddef>

namespace attnlens::model {

// (x − mean)·rsqrt(var + ε)·scale + bias over each of `rows` rows of width d (sums in double;
// bias may be nullptr: none). `out` may be `x`.
void layer_norm(const float* x, std::size_t rows, std::size_t d, const float* scale,
                const float* bias, float eps, float* out);

// x·rsqrt(mean(x²) + ε)·weight over each row (Llama's RMSNorm; sum of squares in double).
void rms_norm(const float* x, std::size_t rows, std::size_t d, const float* weight, float eps,
              float* out);

void add_in_place(float* y, const float* x, std::size_t count);

// How a head's width is split into the pairs that rotary embeddings rotate.
enum class RopeLayout {
  interleaved,  // pairs (2i, 2i+1): llama2.c, Meta's reference code
  half,         // pairs (i, i + d/2), "rotate_half": Hugging Face transformers
};

// Rotates `heads` consecutive heads of width `head_dim` (even) of one token at `position`: pair i
// turns by position·θ^(−2i/head_dim). The angles are computed in double.
void rope(float* x, std::size_t heads, std::size_t head_dim, std::size_t position, float theta,
          RopeLayout layout);

// Columns [offset + h·dh, offset + (h+1)·dh) of each of n rows (row stride `stride`) →
// head-major [heads, n, dh], and back.
void split_heads(const float* x, std::size_t n, std::size_t stride, std::size_t offset,
                 std::size_t heads, std::size_t dh, float* out);
void merge_heads(const float* o, std::size_t n, std::size_t heads, std::size_t dh, float* out);

// Decoding attention: `rows` query rows q [rows, d] against n cached keys and values [n, d], all
// visible (the cache holds only the past): weights [rows, n] = softmax(scale · q·kᵀ) and out
// [rows, d] = weights·v. A direct loop: for one new token it beats the tiled core kernel, whose
// packing pays off only for many queries.
void attend(const float* q, std::size_t rows, const float* keys, const float* values, std::size_t n,
            std::size_t d, float scale, float* weights, float* out);

// out[c, r] = in[r, c] for a rows × cols matrix.
void transpose(const float* in, std::size_t rows, std::size_t cols, float* out);

}  // namespace attnlens::model
