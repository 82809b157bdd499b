// kernels/thread_pool.cpp: persistent workers, spin-then-block hand-off.
//
// One job at a time: the caller publishes (fn, ctx, n), bumps `generation`,
// runs chunk 0 itself, and spins until `pending` reaches zero. A worker spins
// on `generation` for a short while after each job (the next parallel_for of a
// decode step usually arrives within microseconds), then sleeps in
// std::atomic::wait (a futex). `sleepers` lets the caller skip the wake-up
// system call when every worker is still spinning.
#include "kernels/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FOLIO_CPU_RELAX() _mm_pause()
#else
#define FOLIO_CPU_RELAX() ((void)0)
#endif

namespace folio::kernels {

namespace {
// How long an idle worker keeps spinning before it blocks.
constexpr auto kSpinTime = std::chrono::microseconds(300);
}  // namespace

struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  // The published job; written by the caller before `generation` is bumped.
  Trampoline fn = nullptr;
  void* ctx = nullptr;
  std::size_t n = 0;
  std::size_t n_chunks = 0;

  alignas(64) std::atomic<std::uint64_t> generation{0};
  alignas(64) std::atomic<int> pending{0};
  alignas(64) std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};

  void run_chunk(std::size_t chunk) const {
    const std::size_t begin = n * chunk / n_chunks;
    const std::size_t end = n * (chunk + 1) / n_chunks;
    if (begin < end) fn(ctx, begin, end, static_cast<int>(chunk));
  }

  // Returns the next generation once it differs from `seen`.
  std::uint64_t wait_for_job(std::uint64_t seen) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    for (int i = 0;; ++i) {
      const std::uint64_t g = generation.load(std::memory_order_acquire);
      if (g != seen) return g;
      FOLIO_CPU_RELAX();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
    }
    for (;;) {
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      generation.wait(seen, std::memory_order_seq_cst);
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
      const std::uint64_t g = generation.load(std::memory_order_acquire);
      if (g != seen) return g;
    }
  }

  void worker_loop(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      seen = wait_for_job(seen);
      if (stop.load(std::memory_order_acquire)) return;
      if (static_cast<std::size_t>(index) < n_chunks) run_chunk(static_cast<std::size_t>(index));
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(new Impl) {
  if (n_threads < 1) {
    delete impl_;
    throw Error("thread count must be at least 1, got " + std::to_string(n_threads));
  }
  impl_->n_threads = n_threads;
  impl_->workers.reserve(static_cast<std::size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) {
    impl_->workers.emplace_back([this, i] { impl_->worker_loop(i); });
  }
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  impl_->generation.fetch_add(1, std::memory_order_seq_cst);
  impl_->generation.notify_all();
  for (std::thread& t : impl_->workers) t.join();
  delete impl_;
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::parallel_for(
    std::size_t n, const std::function<void(std::size_t, std::size_t, int)>& fn) {
  using Fn = std::function<void(std::size_t, std::size_t, int)>;
  run(n, [](void* c, std::size_t b, std::size_t e, int t) { (*static_cast<const Fn*>(c))(b, e, t); },
      const_cast<Fn*>(&fn));
}

void ThreadPool::run(std::size_t n, Trampoline fn, void* ctx) {
  if (n == 0) return;
  Impl& p = *impl_;
  const std::size_t chunks = std::min<std::size_t>(n, static_cast<std::size_t>(p.n_threads));
  if (chunks == 1) {  // nothing to share: skip the hand-off entirely
    fn(ctx, 0, n, 0);
    return;
  }
  p.fn = fn;
  p.ctx = ctx;
  p.n = n;
  p.n_chunks = chunks;
  p.pending.store(p.n_threads - 1, std::memory_order_relaxed);
  p.generation.fetch_add(1, std::memory_order_seq_cst);
  if (p.sleepers.load(std::memory_order_seq_cst) > 0) p.generation.notify_all();
  p.run_chunk(0);
  for (int i = 0; p.pending.load(std::memory_order_acquire) != 0; ++i) {
    FOLIO_CPU_RELAX();
    if (i > 4096) std::this_thread::yield();  // oversubscribed machine: let workers run
  }
}

}  // namespace folio::kernels
