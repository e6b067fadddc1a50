// Float64 scalar reference for attention and multi-head attention: textbook loops, written
// independently of the kernels (no tiling, no shared helpers), used only by the tests.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace reference {

struct Attention {
  std::vector<double> weights, output, scores;
};

inline Attention attention(std::size_t heads, std::size_t nq, std::size_t nk, std::size_t dk,
                           std::size_t dv, const std::vector<float>& q,
                           const std::vector<float>& k, const std::vector<float>& v, double scale,
                           bool causal, const std::vector<std::uint8_t>& key_mask) {
  Attention r;
  r.weights.assign(heads * nq * nk, 0.0);
  r.scores.assign(heads * nq * nk, 0.0);
  r.output.assign(heads * nq * dv, 0.0);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < nq; ++i) {
      std::vector<double> s(nk);
      std::vector<bool> keep(nk);
      double mx = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < nk; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < dk; ++c)
          dot += double(q[(h * nq + i) * dk + c]) * double(k[(h * nk + j) * dk + c]);
        r.scores[(h * nq + i) * nk + j] = dot;
        s[j] = dot * scale;
        keep[j] = (!causal || j <= i) && (key_mask.empty() || key_mask[j]);
        if (keep[j] && s[j] > mx) mx = s[j];
      }
      double sum = 0;
      for (std::size_t j = 0; j < nk; ++j) sum += keep[j] ? std::exp(s[j] - mx) : 0.0;
      for (std::size_t j = 0; j < nk; ++j) {
        const double w = keep[j] ? std::exp(s[j] - mx) / sum : 0.0;
        r.weights[(h * nq + i) * nk + j] = w;
        for (std::size_t c = 0; c < dv; ++c)
          r.output[(h * nq + i) * dv + c] += w * double(v[(h * nk + j) * dv + c]);
      }
    }
  return r;
}

// y[n, out] = x[n, in] · w[in, out] + b
inline std::vector<float> project(const std::vector<float>& x, std::size_t n, std::size_t in,
                                  const std::vector<float>& w, std::size_t out,
                                  const std::vector<float>& b) {
  std::vector<float> y(n * out);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[o];
      for (std::size_t c = 0; c < in; ++c) acc += double(x[i * in + c]) * double(w[c * out + o]);
      y[i * out + o] = float(acc);
    }
  return y;
}

}  // namespace reference
