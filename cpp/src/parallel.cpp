#include "parallel.hpp"

#include <algorithm>
#include <atomic>

#ifdef ATTNLENS_HAVE_THREADS
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

void run_serially(std::size_t items, std::size_t chunk, detail::ChunkFn fn, void* body) {
  for (std::size_t b = 0; b < items; b += chunk) fn(body, b, std::min(items, b + chunk));
}
}  // namespace
}  // namespace attnlens::parallel

#ifndef ATTNLENS_HAVE_THREADS

namespace attnlens::parallel {

unsigned threads() { return 1; }
namespace detail {
bool serial(std::size_t, std::size_t) { return true; }
void run(std::size_t items, std::size_t chunk, ChunkFn fn, void* body) {
  run_serially(items, chunk, fn, body);
}
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

// Workers sleep on `wake` between calls; a call publishes its job under the mutex with a new
// generation number, everyone (the caller included) takes chunks from `next`, and the caller
// waits until every worker that joined has left the job.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
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
  bool run(std::size_t items, std::size_t chunk, detail::ChunkFn fn, void* body) {
    std::unique_lock<std::mutex> call(call_mutex_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn, body_ = body, items_ = items, chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      seats_ = wanted_ - 1;  // how many workers may join this job
      active_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    take_chunks();
    std::unique_lock<std::mutex> lock(mutex_);
    // Close the job: no worker joins after this; wait for those that did.
    seats_ = 0;
    done_.wait(lock, [this] { return active_ == 0; });
    return true;
  }

 private:
  void take_chunks() {
    in_chunk = true;
    for (;;) {
      const std::size_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (b >= items_) break;
      fn_(body_, b, std::min(items_, b + chunk_));
    }
    in_chunk = false;
  }

  void work() {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    ++started_;
    started_cv_.notify_all();
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (seats_ == 0) continue;  // job full or already closed
      --seats_, ++active_;
      lock.unlock();
      take_chunks();
      lock.lock();
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mutex_, mutex_;
  std::condition_variable wake_, done_, started_cv_;
  std::size_t started_ = 0;
  std::atomic<std::size_t> next_{0};
  detail::ChunkFn fn_ = nullptr;
  void* body_ = nullptr;
  std::size_t items_ = 0, chunk_ = 1;
  std::uint64_t generation_ = 0;
  unsigned wanted_ = 1, seats_ = 0, active_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

unsigned threads() { return pool().size(); }

namespace detail {
bool serial(std::size_t items, std::size_t chunk) {
  const bool serial = pool().size() == 1 || items <= chunk || in_chunk;
  if (serial && !in_chunk) last_chunks = 1;
  return serial;
}
void run(std::size_t items, std::size_t chunk, ChunkFn fn, void* body) {
  last_chunks = (items + chunk - 1) / chunk;
  if (!pool().run(items, chunk, fn, body)) run_serially(items, chunk, fn, body);
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
