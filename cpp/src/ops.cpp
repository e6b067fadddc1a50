#include "attnlens/ops.hpp"

#include "dispatch.hpp"
#include "kernels/gemm.hpp"

namespace attnlens {

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
            float* c, const float* bias, Kernel kernel) {
  if (k == 0) {  // an empty sum: C is the bias (or 0), and A and B may be null
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] = bias ? bias[j] : 0.0f;
    return;
  }
  dispatch(kernel, [&](auto arch) {
    kernels::gemm<decltype(arch)>(m, n, k, a, k, b, n, c, n, bias);
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
    kernels::gemm_packed<decltype(arch)>(m, n, k, a, k, packed, c, n, bias);
  });
}

}  // namespace attnlens
