#include "parallel.hpp"

#include <algorithm>
#include <atomic>

#ifdef ATTNLENS_HAVE_THREADS
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attnlens::parallel {
namespace {
// Set by the last for_chunks that decided how to run (see last_call_chunks).
std::atomic<unsigned long> last_chunks{1};

void run_serially(std::size_t items, detail::ChunkFn fn, void* body) {
  if (items > 0) fn(body, 0, items);
}
}  // namespace
}  // namespace attnlens::parallel

#ifndef ATTNLENS_HAVE_THREADS

namespace attnlens::parallel {

unsigned threads() { return 1; }
namespace detail {
bool serial(std::size_t, std::size_t) { return true; }
void run(std::size_t items, std::size_t, ChunkFn fn, void* body) { run_serially(items, fn, body); }
}  // namespace detail

}  // namespace attnlens::parallel

namespace attnlens {
void set_threads(unsigned) {}
unsigned threads() { return 1; }
unsigned max_threads() { return 1; }
unsigned long last_call_chunks() { return parallel::last_chunks; }
}  // namespace attnlens

#else

namespace attnlens::parallel {
namespace {

constexpr unsigned kMaxThreads = 16;

// Set while a thread runs chunks: a for_chunks inside one runs serially on that thread.
thread_local bool in_chunk = false;

// How long a thread spins on an atomic before it sleeps on a condition variable. Decoding one
// token of a small model makes ~100–200 calls microseconds apart (every weight product of every
// layer); waking a sleeping wasm worker (a futex, Atomics.wait/notify) takes tens of
// microseconds each time, which made two threads decode SmolLM-135M slower than one. Spinning
// this long between calls keeps the worker awake through a token; idle, it sleeps.
constexpr auto kSpin = std::chrono::microseconds(300);

// Calls done() until it is true or kSpin has passed (the clock read every 64 tries: in wasm it
// is a call out to JavaScript). True when done() became true.
template <class Done>
bool spin_until(Done&& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return false;
  }
}

// Workers spin, then sleep on `wake`, between calls; a call publishes its job under the mutex
// with a new generation number, everyone (the caller included) takes chunks from `next`, and the
// caller waits (spinning first) until every worker that joined has left the job.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      stopping_.store(true, std::memory_order_relaxed);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void resize(unsigned count) {
    count = std::clamp(count, 1u, kMaxThreads);
    wanted_ = count;
    // Workers are only ever added (a wasm worker cannot be handed back cheaply); extra ones idle.
    while (workers_.size() + 1 < count) workers_.emplace_back([this] { work(); });
    // Wait until each has started, so that what starting a thread allocates happens here, not
    // during a later call (the heap-use checks of the JS tests see it otherwise).
    std::unique_lock<std::mutex> lock(mutex_);
    started_cv_.wait(lock, [this] { return started_ == workers_.size(); });
  }
  unsigned size() const { return wanted_; }

  // False when another thread's call holds the pool: the caller then runs serially.
  bool run(std::size_t items, std::size_t min_chunk, detail::ChunkFn fn, void* body) {
    std::unique_lock<std::mutex> call(call_mutex_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn, body_ = body, items_ = items, min_chunk_ = min_chunk;
      divisor_ = 2 * std::size_t{wanted_};
      next_.store(0, std::memory_order_relaxed);
      chunks_.store(0, std::memory_order_relaxed);
      seats_ = wanted_ - 1;  // how many workers may join this job
      active_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    take_chunks();
    {
      // Close the job: no worker joins after this; then wait for those that did.
      std::lock_guard<std::mutex> lock(mutex_);
      seats_ = 0;
    }
    if (!spin_until([this] { return active_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return active_.load(std::memory_order_relaxed) == 0; });
    }
    last_chunks = chunks_.load(std::memory_order_relaxed);
    return true;
  }

 private:
  void take_chunks() {
    in_chunk = true;
    std::size_t b = next_.load(std::memory_order_relaxed), e = 0;
    for (;;) {
      do {  // claim [b, e): about remaining / (2 · threads), at least min_chunk_
        if (b >= items_) {
          in_chunk = false;
          return;
        }
        const std::size_t left = items_ - b;
        e = b + std::min(left, std::max(min_chunk_, (left + divisor_ - 1) / divisor_));
      } while (!next_.compare_exchange_weak(b, e, std::memory_order_relaxed));
      chunks_.fetch_add(1, std::memory_order_relaxed);
      fn_(body_, b, e);
      b = next_.load(std::memory_order_relaxed);
    }
  }

  void work() {
    std::uint64_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++started_;
      started_cv_.notify_all();
    }
    for (;;) {
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen || stopping_.load(std::memory_order_relaxed); });
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      if (seats_ == 0) continue;  // job full or already closed
      --seats_;
      active_.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      take_chunks();
      lock.lock();
      // Under the mutex: a caller past its spin waits on done_ holding it, so no wake-up is lost.
      if (active_.fetch_sub(1, std::memory_order_release) == 1) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mutex_, mutex_;
  std::condition_variable wake_, done_, started_cv_;
  std::size_t started_ = 0;
  std::atomic<std::size_t> next_{0}, chunks_{0};
  detail::ChunkFn fn_ = nullptr;
  void* body_ = nullptr;
  std::size_t items_ = 0, min_chunk_ = 1, divisor_ = 2;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> active_{0};
  unsigned wanted_ = 1, seats_ = 0;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};  // stop_, readable while spinning
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

unsigned threads() { return pool().size(); }

namespace detail {
bool serial(std::size_t items, std::size_t min_chunk) {
  const bool serial = pool().size() == 1 || items <= min_chunk || in_chunk;
  if (serial && !in_chunk) last_chunks = 1;
  return serial;
}
void run(std::size_t items, std::size_t min_chunk, ChunkFn fn, void* body) {
  if (!pool().run(items, min_chunk, fn, body)) {
    last_chunks = 1;
    run_serially(items, fn, body);
  }
}
}  // namespace detail

}  // namespace attnlens::parallel

namespace attnlens {
void set_threads(unsigned count) { parallel::pool().resize(count); }
unsigned threads() { return parallel::pool().size(); }
unsigned max_threads() { return parallel::kMaxThreads; }
unsigned long last_call_chunks() { return parallel::last_chunks; }
}  // namespace attnlens

#endif
