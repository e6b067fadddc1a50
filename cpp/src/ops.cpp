// Matrix products on the register tiles of kernels/gemm.hpp, split by column panels among the
// pool's threads (parallel.hpp). Chunks start at panel boundaries and the columns after the last
// whole panel are one item, so every column is computed by the same tile whatever the split:
// results are bit-identical to one thread.
#include "attnlens/ops.hpp"

#include <algorithm>

#include "dispatch.hpp"
#include "kernels/gemm.hpp"
#include "parallel.hpp"

namespace attnlens {

namespace {
// Items of `cols` columns (the last one shorter) worth at least kChunkMultiplyAdds each.
std::size_t min_items(std::size_t m, std::size_t k, std::size_t cols) {
  return std::max<std::size_t>(1, parallel::kChunkMultiplyAdds / std::max<std::size_t>(1, m * k * cols));
}
}  // namespace

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
            float* c, const float* bias, Kernel kernel) {
  if (k == 0) {  // an empty sum: C is the bias (or 0), and A and B may be null
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] = bias ? bias[j] : 0.0f;
    return;
  }
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    // gemm's widest unit: a group of packed panels (kernels::gemm); any multiple of it splits
    // the columns the way one call would.
    using S = kernels::gemm_shape<Arch>;
    constexpr std::size_t group = 64 / (S::cols * sizeof(float)) > 1 ? 64 / (S::cols * sizeof(float)) : 1;
    constexpr std::size_t unit = group * S::cols;
    const std::size_t items = (n + unit - 1) / unit;
    parallel::for_chunks(items, min_items(m, k, unit), [&](std::size_t begin, std::size_t end) {
      const std::size_t j = begin * unit, cols = std::min(n, end * unit) - j;
      kernels::gemm<Arch>(m, cols, k, a, k, b + j, n, c + j, n, bias ? bias + j : nullptr);
    });
  });
}

const float* PackedMatrix::packed(Kernel kernel) const {
  std::vector<float>& out = packed_[kernel == Kernel::simd ? 1 : 0];
  if (out.empty() && k_ * n_ > 0) {
    out.resize(k_ * n_);
    dispatch(kernel, [&](auto arch) { kernels::pack_weights<decltype(arch)>(k_, n_, b_, out.data()); });
  }
  return out.data();
}

void matmul(std::size_t m, const float* a, const PackedMatrix& b, float* c, const float* bias,
            Kernel kernel) {
  const std::size_t k = b.rows(), n = b.cols();
  if (k == 0) return matmul(m, n, k, a, nullptr, c, bias, kernel);
  const float* packed = b.packed(kernel);
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    constexpr std::size_t cols = kernels::gemm_shape<Arch>::cols;
    // gemm_packed's loop, cut into chunks: A's row tiles are packed once by this thread and read
    // by every chunk; items are the whole panels, then the last n mod cols columns.
    const kernels::packed_a_rows rows = kernels::pack_a_rows<Arch>(m, n, k, a, k);
    const std::size_t panels = n / cols, items = panels + (n % cols ? 1 : 0);
    parallel::for_chunks(items, min_items(m, k, cols), [&](std::size_t begin, std::size_t end) {
      float touched = 0;
      for (std::size_t p = begin; p < end; ++p) {
        const std::size_t j = p * cols;
        const float* panel = packed + j * k;
        const float* bj = bias ? bias + j : nullptr;
        if (p < panels) {
          const float* next = p + 1 < std::min(end, panels) ? panel + k * cols : nullptr;
          touched += kernels::gemm_packed_panel<Arch>(m, k, rows, a, k, panel, next, c + j, n, bj);
        } else {
          kernels::gemm_packed_tail<Arch>(m, n - j, k, a, k, panel, c + j, n, bj);
        }
      }
      kernels::touch_sink = touched;
    });
  });
}

}  // namespace attnlens
