// How many threads compute one call (attention, and the attention inside multi-head attention).
// Work is split by heads and query blocks; results are bit-identical for every thread count.
#pragma once

namespace attnlens {

// The caller plus (count − 1) pool threads, started on first need; 1 (the default) is serial.
// Clamped to [1, max_threads()]. Call it between calls, not during one.
void set_threads(unsigned count);
unsigned threads();
// 1 in a build without threads (wasm without -pthread), else the pool's cap.
unsigned max_threads();
// Chunks of work the last call that could split was cut into (1: it ran on the calling thread
// alone, e.g. a call too small to be worth waking the pool). Idle threads take chunks as they
// come, so how many threads took part is up to the scheduler.
unsigned long last_call_chunks();

}  // namespace attnlens
