#include "attnlens/ops.hpp"

#include "dispatch.hpp"
#include "kernels/gemm.hpp"

namespace attnlens {

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
            float* c, const float* bias, Kernel kernel) {
  dispatch(kernel, [&](auto arch) {
    kernels::gemm<decltype(arch)>(m, n, k, a, k, b, n, c, n, bias);
  });
}

}  // namespace attnlens
