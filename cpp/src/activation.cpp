// Element-wise activations: items of kBlock elements split among the pool's threads; in each
// item whole vectors, and after the last whole vector of the array the scalar kernel.
#include "attnlens/activation.hpp"

#include <algorithm>

#include "dispatch.hpp"
#include "kernels/activation.hpp"
#include "parallel.hpp"

namespace attnlens {

namespace {

constexpr std::size_t kBlock = 256;
// ~16K elements per chunk at least: an exp costs ~tens of operations per vector.
constexpr std::size_t kMinBlocks = 64;

// f(first, last) over [0, count), split in kBlock items (the last may be shorter).
template <class F>
void for_blocks(std::size_t count, F&& f) {
  const std::size_t items = (count + kBlock - 1) / kBlock;
  parallel::for_chunks(items, kMinBlocks, [&](std::size_t begin, std::size_t end) {
    f(begin * kBlock, std::min(count, end * kBlock));
  });
}

// gate[i] = act(gate[i]) (· up[i] when up is not null) over [first, last), whole vectors up to
// the array's last whole vector, then one element at a time.
template <class Arch, kernels::act A>
void apply(float* x, const float* up, std::size_t first, std::size_t last, std::size_t count) {
  using V = kernels::vec<Arch>;
  using S = kernels::vec<kernels::scalar_arch>;
  constexpr std::size_t W = V::width;
  const std::size_t vector_end = std::min(last, count / W * W);
  std::size_t i = first;
  for (; i < vector_end; i += W) {
    auto y = kernels::activate<Arch, A>(V::load(x + i));
    if (up) y = y * V::load(up + i);
    V::store(x + i, y);
  }
  for (; i < last; ++i) x[i] = kernels::activate<kernels::scalar_arch, A>(S::load(x + i)) * (up ? up[i] : 1.0f);
}

template <kernels::act A>
void run(float* x, const float* up, std::size_t count, Kernel kernel) {
  dispatch(kernel, [&](auto arch) {
    using Arch = decltype(arch);
    for_blocks(count, [&](std::size_t first, std::size_t last) { apply<Arch, A>(x, up, first, last, count); });
  });
}

}  // namespace

void gelu_tanh(float* x, std::size_t count, Kernel kernel) { run<kernels::act::gelu_tanh>(x, nullptr, count, kernel); }
void gelu_erf(float* x, std::size_t count, Kernel kernel) { run<kernels::act::gelu_erf>(x, nullptr, count, kernel); }
void silu(float* x, std::size_t count, Kernel kernel) { run<kernels::act::silu>(x, nullptr, count, kernel); }
void swiglu(float* gate, const float* up, std::size_t count, Kernel kernel) {
  run<kernels::act::silu>(gate, up, count, kernel);
}

}  // namespace attnlens
