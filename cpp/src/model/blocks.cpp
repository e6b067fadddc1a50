#include "attnlens/model/blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "parallel.hpp"

namespace attnlens::model {

namespace {
// Rows per chunk when a norm is split among the pool's threads: ~16K elements at least.
std::size_t min_rows(std::size_t d) { return std::max<std::size_t>(1, (std::size_t{1} << 14) / std::max<std::size_t>(1, d)); }
}  // namespace

void layer_norm(const float* x, std::size_t rows, std::size_t d, const float* scale,
                const float* bias, float eps, float* out) {
  parallel::for_chunks(rows, min_rows(d), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      const float* row = x + i * d;
      double sum = 0;
      for (std::size_t j = 0; j < d; ++j) sum += row[j];
      const float mean = static_cast<float>(sum / static_cast<double>(d));
      double squares = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const float c = row[j] - mean;
        squares += static_cast<double>(c) * c;
      }
      const float var = static_cast<float>(squares / static_cast<double>(d));
      const float rs = 1.0f / std::sqrt(var + eps);
      for (std::size_t j = 0; j < d; ++j) out[i * d + j] = scale[j] * rs * (row[j] - mean) + (bias ? bias[j] : 0.0f);
    }
  });
}

void rms_norm(const float* x, std::size_t rows, std::size_t d, const float* weight, float eps,
              float* out) {
  parallel::for_chunks(rows, min_rows(d), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      const float* row = x + i * d;
      double squares = 0;
      for (std::size_t j = 0; j < d; ++j) squares += static_cast<double>(row[j]) * row[j];
      const float rs =
          static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(d) + static_cast<double>(eps)));
      for (std::size_t j = 0; j < d; ++j) out[i * d + j] = weight[j] * (rs * row[j]);
    }
  });
}

void add_in_place(float* y, const float* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] += x[i];
}

void rope(float* x, std::size_t heads, std::size_t head_dim, std::size_t position, float theta,
          RopeLayout layout) {
  const std::size_t pairs = head_dim / 2;
  for (std::size_t i = 0; i < pairs; ++i) {
    const double freq = std::pow(static_cast<double>(theta),
                                 -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    const double angle = static_cast<double>(position) * freq;
    const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
    const std::size_t a = layout == RopeLayout::interleaved ? 2 * i : i;
    const std::size_t b = layout == RopeLayout::interleaved ? 2 * i + 1 : i + pairs;
    for (std::size_t h = 0; h < heads; ++h) {
      float* v = x + h * head_dim;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * s;
      v[b] = x0 * s + x1 * c;
    }
  }
}

void split_heads(const float* x, std::size_t n, std::size_t stride, std::size_t offset,
                 std::size_t heads, std::size_t dh, float* out) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(out + (h * n + i) * dh, x + i * stride + offset + h * dh, dh * sizeof(float));
}

void merge_heads(const float* o, std::size_t n, std::size_t heads, std::size_t dh, float* out) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(out + i * heads * dh + h * dh, o + (h * n + i) * dh, dh * sizeof(float));
}

namespace {

// attend() for one width: D > 0 fixes it at compile time (the loops over it unroll and
// vectorise), D = 0 reads it from `d`.
template <std::size_t D>
void attend_rows(const float* q, std::size_t rows, const float* keys, const float* values, std::size_t n,
                 std::size_t d, float scale, float* weights, float* out) {
  const std::size_t width = D ? D : d;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * width;
    float* w = weights + r * n;
    // Four keys at a time: independent sums instead of one long chain of dependent adds.
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float *k0 = keys + j * width, *k1 = k0 + width, *k2 = k1 + width, *k3 = k2 + width;
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (std::size_t c = 0; c < width; ++c) {
        s0 += qr[c] * k0[c];
        s1 += qr[c] * k1[c];
        s2 += qr[c] * k2[c];
        s3 += qr[c] * k3[c];
      }
      w[j] = s0 * scale, w[j + 1] = s1 * scale, w[j + 2] = s2 * scale, w[j + 3] = s3 * scale;
    }
    for (; j < n; ++j) {
      const float* k = keys + j * width;
      float dot = 0;
      for (std::size_t c = 0; c < width; ++c) dot += qr[c] * k[c];
      w[j] = dot * scale;
    }
    const float max = *std::max_element(w, w + n);
    double sum = 0;
    for (j = 0; j < n; ++j) {
      w[j] = std::exp(w[j] - max);
      sum += w[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (j = 0; j < n; ++j) w[j] *= inv;
    float* o = out + r * width;
    if constexpr (D > 0) {
      float acc[D] = {};  // in registers: `o` might alias the inputs, a local cannot
      for (j = 0; j < n; ++j) {
        const float* v = values + j * D;
        for (std::size_t c = 0; c < D; ++c) acc[c] += w[j] * v[c];
      }
      for (std::size_t c = 0; c < D; ++c) o[c] = acc[c];
    } else {
      for (std::size_t c = 0; c < width; ++c) o[c] = 0;
      for (j = 0; j < n; ++j) {
        const float* v = values + j * width;
        for (std::size_t c = 0; c < width; ++c) o[c] += w[j] * v[c];
      }
    }
  }
}

}  // namespace

void attend(const float* q, std::size_t rows, const float* keys, const float* values, std::size_t n,
            std::size_t d, float scale, float* weights, float* out) {
  switch (d) {  // the head widths of the Llama family
    case 8: return attend_rows<8>(q, rows, keys, values, n, d, scale, weights, out);
    case 16: return attend_rows<16>(q, rows, keys, values, n, d, scale, weights, out);
    case 32: return attend_rows<32>(q, rows, keys, values, n, d, scale, weights, out);
    case 64: return attend_rows<64>(q, rows, keys, values, n, d, scale, weights, out);
    case 128: return attend_rows<128>(q, rows, keys, values, n, d, scale, weights, out);
    default: return attend_rows<0>(q, rows, keys, values, n, d, scale, weights, out);
  }
}

void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace attnlens::model
