#include "attnlens/kernel.hpp"

#include "kernels/vec.hpp"

namespace attnlens {

bool simd_available() {
#ifdef ATTNLENS_HAVE_SIMD
  return true;
#else
  return false;
#endif
}

const char* simd_arch_name() {
#ifdef ATTNLENS_HAVE_SIMD
  return kernels::simd_arch::name();
#else
  return kernels::scalar_arch::name();
#endif
}

}  // namespace attnlens
