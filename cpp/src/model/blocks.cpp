#include "attnlens/model/blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlens::model {

void layer_norm(const float* x, std::size_t rows, std::size_t d, const float* scale,
                const float* bias, float eps, float* out) {
  for (std::size_t i = 0; i < rows; ++i) {
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
    for (std::size_t j = 0; j < d; ++j) out[i * d + j] = scale[j] * rs * (row[j] - mean) + bias[j];
  }
}

void rms_norm(const float* x, std::size_t rows, std::size_t d, const float* weight, float eps,
              float* out) {
  for (std::size_t i = 0; i < rows; ++i) {
    const float* row = x + i * d;
    double squares = 0;
    for (std::size_t j = 0; j < d; ++j) squares += static_cast<double>(row[j]) * row[j];
    const float rs =
        static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(d) + static_cast<double>(eps)));
    for (std::size_t j = 0; j < d; ++j) out[i * d + j] = weight[j] * (rs * row[j]);
  }
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void swiglu(float* gate, const float* up, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) gate[i] = silu(gate[i]) * up[i];
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

void attend(const float* q, std::size_t rows, const float* keys, const float* values, std::size_t n,
            std::size_t d, float scale, float* weights, float* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * d;
    float* w = weights + r * n;
    // Four keys at a time: independent sums instead of one long chain of dependent adds.
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float *k0 = keys + j * d, *k1 = k0 + d, *k2 = k1 + d, *k3 = k2 + d;
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (std::size_t c = 0; c < d; ++c) {
        s0 += qr[c] * k0[c];
        s1 += qr[c] * k1[c];
        s2 += qr[c] * k2[c];
        s3 += qr[c] * k3[c];
      }
      w[j] = s0 * scale, w[j + 1] = s1 * scale, w[j + 2] = s2 * scale, w[j + 3] = s3 * scale;
    }
    for (; j < n; ++j) {
      const float* k = keys + j * d;
      float dot = 0;
      for (std::size_t c = 0; c < d; ++c) dot += qr[c] * k[c];
      w[j] = dot * scale;
    }
    const float max = *std::max_element(w, w + n);
    double sum = 0;
    for (j = 0; j < n; ++j) {
      w[j] = std::exp(w[j] - max);
      sum += w[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    float* o = out + r * d;
    for (std::size_t c = 0; c < d; ++c) o[c] = 0;
    for (j = 0; j < n; ++j) {
      w[j] *= inv;
      const float* v = values + j * d;
      for (std::size_t c = 0; c < d; ++c) o[c] += w[j] * v[c];
    }
  }
}

void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace attnlens::model
