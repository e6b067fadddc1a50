// Weight products at the file's precision: a matrix-vector kernel for one input row
// (decoding), packed panels of Wᵀ widened to float32 for more (prefill), both split among the
// pool's threads by output columns (kernels/linear.hpp, kernels/gemm.hpp).
#include "attnlens/linear.hpp"

#include <algorithm>
#include <cstring>

#include "dispatch.hpp"
#include "kernels/linear.hpp"
#include "parallel.hpp"

namespace attnlens {

std::size_t weight_type_size(WeightType t) { return t == WeightType::f32 ? 4 : 2; }

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^−24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  std::uint32_t bits = exponent == 31 ? sign | 0x7F800000u | (mantissa << 13)
                                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {

float element(const WeightMatrix& w, std::size_t i) {
  switch (w.type) {
    case WeightType::f32: return static_cast<const float*>(w.data)[i];
    case WeightType::f16: return f16_to_f32(static_cast<const std::uint16_t*>(w.data)[i]);
    case WeightType::bf16: return bf16_to_f32(static_cast<const std::uint16_t*>(w.data)[i]);
  }
  return 0.0f;
}

constexpr std::size_t kChunkWork = parallel::kChunkMultiplyAdds;
struct x_rows;  // x permuted for interleaved (16-bit) weights

// One input row: y = x · Wᵀ streamed row by row, split among threads by weight rows.
template <class Arch, class Weights>
void gemv(const float* x, const WeightMatrix& w, const float* bias, float* y) {
  const auto* data = static_cast<const typename Weights::elem*>(w.data);
  const float* xs = x;
  if constexpr (Weights::interleaved) {
    float* permuted = kernels::thread_scratch<x_rows>(w.in);
    kernels::permute_x<Arch>(1, w.in, x, w.in, permuted);
    xs = permuted;
  }
  const std::size_t min_rows = std::max<std::size_t>(4, kChunkWork / w.in);
  parallel::for_chunks(w.out, min_rows, [&](std::size_t begin, std::size_t end) {
    kernels::gemv_rows<Arch, Weights>(begin, end, w.in, xs, data, y, bias);
  });
}

template <class Arch, class Weights>
void gemm(std::size_t m, const float* x, const WeightMatrix& w, const float* bias, float* y) {
  constexpr std::size_t cols = kernels::gemm_shape<Arch>::cols;
  const auto* data = static_cast<const typename Weights::elem*>(w.data);
  const std::size_t k = w.in, n = w.out;
  // A's row tiles are packed once by this thread and read by every chunk.
  const kernels::packed_a_rows rows = kernels::pack_a_rows<Arch>(m, n, k, x, k);
  // Work items: whole panels of `cols` weight rows, then the last n mod cols rows as one more
  // item, so that every column is computed by the same tile whichever chunk it falls in.
  const std::size_t panels = n / cols, items = panels + (n % cols ? 1 : 0);
  const std::size_t min_items = std::max<std::size_t>(1, kChunkWork / (m * k * cols));
  parallel::for_chunks(items, min_items, [&](std::size_t begin, std::size_t end) {
    float* panel = kernels::thread_scratch<kernels::w_panel>(k * cols);
    for (std::size_t p = begin; p < end; ++p) {
      const std::size_t j = p * cols;
      const float* b = bias ? bias + j : nullptr;
      if (p < panels) {
        kernels::pack_weight_panel<Arch, Weights>(j, cols, k, data, panel);
        kernels::gemm_packed_panel<Arch>(m, k, rows, x, k, panel, nullptr, y + j, n, b);
      } else {
        kernels::pack_weight_panel<Arch, Weights>(j, n - j, k, data, panel);
        kernels::gemm_packed_tail<Arch>(m, n - j, k, x, k, panel, y + j, n, b);
      }
    }
  });
}

template <class Arch, class Weights>
void run(std::size_t m, const float* x, const WeightMatrix& w, const float* bias, float* y) {
  // One input row (decoding) streams W once; more go through packed panels (W widened once per
  // panel, then reused by every row tile). Two to four rows (a short prompt) had matrix-vector
  // kernels of their own: 9 more instantiations, 7 KB of the model add-on's gzipped wasm
  // (252.0 → 245.0 KB), for prompts that take a millisecond either way.
  if (m == 1) {
    gemv<Arch, Weights>(x, w, bias, y);
  } else {
    gemm<Arch, Weights>(m, x, w, bias, y);
  }
}

}  // namespace

void weight_row(const WeightMatrix& w, std::size_t row, float* out) {
  for (std::size_t c = 0; c < w.in; ++c) out[c] = element(w, row * w.in + c);
}

void linear(std::size_t m, const float* x, const WeightMatrix& w, const float* bias, float* y,
            Kernel kernel) {
  if (m == 0 || w.out == 0) return;
  if (w.in == 0) {  // an empty sum: y is the bias (or 0), and x and W may be null
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t o = 0; o < w.out; ++o) y[i * w.out + o] = bias ? bias[o] : 0.0f;
    return;
  }
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    switch (w.type) {
      case WeightType::f32: return run<Arch, kernels::f32_weights>(m, x, w, bias, y);
      case WeightType::f16: return run<Arch, kernels::f16_weights>(m, x, w, bias, y);
      case WeightType::bf16: return run<Arch, kernels::bf16_weights>(m, x, w, bias, y);
    }
  });
}

}  // namespace attnlens
