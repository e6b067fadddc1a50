// A small pool of worker threads for splitting one call's independent work items (heads × query
// blocks of attention). Items are handed out in contiguous chunks; each item is computed the same
// way whichever thread runs it, so results are bit-identical to a serial run. Built without
// ATTNLENS_HAVE_THREADS (a wasm build without -pthread) everything runs on the calling thread.
#pragma once
#include <cstddef>
#include <type_traits>

#include "attnlens/threads.hpp"

namespace attnlens::parallel {

// The pool's size: set by attnlens::set_threads (threads.hpp).
unsigned threads();

// The least work worth handing a thread, in multiply-adds (matrix products, linear()): waking a
// worker and joining it costs tens of microseconds in wasm; 2^18 multiply-adds take ~10–20 µs
// on one thread.
inline constexpr std::size_t kChunkMultiplyAdds = std::size_t{1} << 18;

// Calls body(begin, end) over [0, items) in chunks of at least `min_chunk` items (the last may be
// shorter); several chunks may run at once on different threads, each thread's chunks in
// increasing order. Chunks are guided: a thread takes about remaining / (2 · threads) items, so
// early chunks are large (few boundaries, where a thread re-packs a head's keys) and the last
// ones small (threads finish together even when one ran slower, e.g. under other processes).
// remaining / (4 · threads) was tried: in Chromium (h = 8, n = 256 and 512, three interleaved
// trials) it was no better at 512, and slower than one thread at 256 in two of three (0.69×, 0.79×).
// Serial (one body(0, items) call) when threads() == 1, items ≤ min_chunk, or called from inside a
// running for_chunks. `body` must not throw.
template <class Body>
void for_chunks(std::size_t items, std::size_t min_chunk, Body&& body);

namespace detail {
using ChunkFn = void (*)(void* body, std::size_t begin, std::size_t end);
void run(std::size_t items, std::size_t min_chunk, ChunkFn fn, void* body);
bool serial(std::size_t items, std::size_t min_chunk);
}  // namespace detail

template <class Body>
void for_chunks(std::size_t items, std::size_t min_chunk, Body&& body) {
  if (min_chunk == 0) min_chunk = 1;
  if (detail::serial(items, min_chunk)) {
    if (items > 0) body(std::size_t{0}, items);
    return;
  }
  using B = std::remove_reference_t<Body>;
  detail::run(items, min_chunk,
              [](void* p, std::size_t b, std::size_t e) { (*static_cast<B*>(p))(b, e); },
              static_cast<void*>(&body));
}

}  // namespace attnlens::parallel
