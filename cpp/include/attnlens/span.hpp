// A pointer and a length: C++17 has no std::span, and every buffer we take must carry its size
// so that the core can check it before reading or writing.
#pragma once
#include <cstddef>
#include <vector>

namespace attnlens {

template <class T>
struct Span {
  T* data = nullptr;
  std::size_t size = 0;

  constexpr Span() = default;
  constexpr Span(T* d, std::size_t n) : data(d), size(n) {}
  template <class U>
  Span(std::vector<U>& v) : data(v.data()), size(v.size()) {}
  template <class U>
  Span(const std::vector<U>& v) : data(v.data()), size(v.size()) {}

  constexpr bool empty() const { return size == 0; }
  constexpr T& operator[](std::size_t i) const { return data[i]; }
};

}  // namespace attnlens
