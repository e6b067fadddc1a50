// Calls f(arch) with the architecture tag that `Kernel` selects in this binary. The wasm engine
// modules of the SIMD builds compile the core with ATTNLENS_SIMD_ONLY (CMakeLists.txt): their
// JavaScript layer only ever asks for the SIMD kernels (scalar is a module of its own), so the
// scalar instantiation of every kernel is left out (~6 KB of gzipped wasm) and the bindings refuse
// Kernel::scalar there.
#pragma once
#include "attnlens/kernel.hpp"
#include "kernels/vec.hpp"

namespace attnlens {

template <class F>
decltype(auto) dispatch(Kernel kernel, F&& f) {
#if defined(ATTNLENS_HAVE_SIMD) && defined(ATTNLENS_SIMD_ONLY)
  (void)kernel;
  return f(kernels::simd_arch{});
#else
#ifdef ATTNLENS_HAVE_SIMD
  if (kernel == Kernel::simd) return f(kernels::simd_arch{});
#else
  (void)kernel;
#endif
  return f(kernels::scalar_arch{});
#endif
}

}  // namespace attnlens
