// Calls f(arch) with the architecture tag that `Kernel` selects in this binary.
#pragma once
#include "attnlens/kernel.hpp"
#include "kernels/vec.hpp"

namespace attnlens {

template <class F>
decltype(auto) dispatch(Kernel kernel, F&& f) {
#ifdef ATTNLENS_HAVE_SIMD
  if (kernel == Kernel::simd) return f(kernels::simd_arch{});
#else
  (void)kernel;
#endif
  return f(kernels::scalar_arch{});
}

}  // namespace attnlens
