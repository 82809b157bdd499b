// kernels/thread_pool.cpp: persistent workers, spin-then-block hand-off,
// chunks claimed dynamically from per-thread home ranges.
//
// One job at a time. The caller publishes (fn, ctx, n, n_chunks), then one
// claim counter per participant (its `slot`: job generation << 32 | next
// chunk of its home range), then `ticket` = job generation << 32, wakes
// sleeping workers, and claims chunks itself like any worker. Participant i's
// home range is chunks [i * n_chunks / T, (i + 1) * n_chunks / T): it claims
// them in order with a compare-exchange on its own slot, a cache line no one
// else touches until it runs dry, and then steals what is left of the other
// ranges the same way. Each participant adds its count of finished chunks to
// `done` once; the caller returns when done == n_chunks.
//
// Why dynamic: with static shares, a worker that the OS has not scheduled yet
// (another process on its core) held every parallel_for until it ran, and a
// decode step issues hundreds of them. Now the caller takes over unclaimed
// chunks and waits only for chunks already running (measured: 0-20 % faster
// decode next to other busy processes, docs/PERFORMANCE.md). Why home ranges:
// when every claim was a compare-exchange on one shared counter, each claim
// moved that cache line between cores (~0.15 us a chunk, 1.2 us for an empty
// job of 8 chunks on 2 threads; decode issues ~150 jobs a token).
//
// Before rewriting the job's fields the caller closes the old slots (no
// chunk left), so a late worker still holding one cannot claim a chunk of a
// half-published job.
//
// Idle workers spin on `ticket` for a short while after each job (the next
// parallel_for of a decode step usually arrives within microseconds), then
// sleep in std::atomic::wait (a futex); `sleepers` lets the caller skip the
// wake-up system call when every worker is still spinning.
#include "kernels/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
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
// Chunks per participant: enough for the caller to absorb a late worker's
// share, few enough that claiming (one compare-exchange each) stays negligible.
constexpr std::size_t kChunksPerThread = 4;
}  // namespace

struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  // The published job; written by the caller before `ticket` moves to its generation.
  Trampoline fn = nullptr;
  void* ctx = nullptr;
  std::size_t n = 0;
  std::atomic<std::uint32_t> n_chunks{0};  // atomic: stale workers read it before claiming

  // Participant i's claim counter: generation << 32 | next chunk of its home range.
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> next{0};
  };
  std::unique_ptr<Slot[]> slots;

  alignas(64) std::atomic<std::uint64_t> ticket{0};  // generation << 32 (wakes the workers)
  alignas(64) std::atomic<std::uint32_t> done{0};    // chunks finished in this generation
  alignas(64) std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};

  static std::uint64_t generation_of(std::uint64_t t) { return t >> 32; }
  // Low half of a closed slot: no chunk index reaches it, so nothing can be claimed.
  static constexpr std::uint64_t kClosed = 0xFFFFFFFFu;

  // First chunk of participant i's home range (i == n_threads: the end).
  std::uint32_t home_begin(int i, std::uint32_t chunks) const {
    return static_cast<std::uint32_t>(std::uint64_t{chunks} * static_cast<std::uint64_t>(i) /
                                      static_cast<std::uint64_t>(n_threads));
  }

  // Claims and runs chunks of generation `gen` from slot `owner` until its
  // range is empty; returns how many it ran.
  std::uint32_t drain(std::uint64_t gen, int owner, int thread) {
    std::atomic<std::uint64_t>& slot = slots[static_cast<std::size_t>(owner)].next;
    std::uint32_t ran = 0;
    std::uint64_t t = slot.load(std::memory_order_acquire);
    for (;;) {
      if (generation_of(t) != gen) return ran;
      const auto chunk = static_cast<std::uint32_t>(t);
      const std::uint32_t chunks = n_chunks.load(std::memory_order_relaxed);
      if (chunk >= home_begin(owner + 1, chunks)) return ran;
      if (!slot.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        continue;  // t now holds the current value
      }
      // The claim succeeded against the published slot: the job's fields are visible.
      const std::size_t begin = n * chunk / chunks;
      const std::size_t end = n * (chunk + 1) / chunks;
      if (begin < end) fn(ctx, begin, end, thread);
      ++ran;
      t = slot.load(std::memory_order_acquire);
    }
  }

  // Runs chunks of generation `gen`: its own home range, then the others'.
  void work(std::uint64_t gen, int thread) {
    std::uint32_t ran = drain(gen, thread, thread);
    for (int k = 1; k < n_threads; ++k) ran += drain(gen, (thread + k) % n_threads, thread);
    if (ran > 0) done.fetch_add(ran, std::memory_order_acq_rel);
  }

  // Returns the generation of the next job once `ticket` leaves generation `seen`.
  std::uint64_t wait_for_job(std::uint64_t seen) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    for (int i = 0;; ++i) {
      const std::uint64_t g = generation_of(ticket.load(std::memory_order_acquire));
      if (g != seen) return g;
      FOLIO_CPU_RELAX();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
    }
    for (;;) {
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      std::uint64_t t = ticket.load(std::memory_order_seq_cst);
      if (generation_of(t) == seen) ticket.wait(t, std::memory_order_seq_cst);
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
      const std::uint64_t g = generation_of(ticket.load(std::memory_order_acquire));
      if (g != seen) return g;
    }
  }

  void worker_loop(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      seen = wait_for_job(seen);
      if (stop.load(std::memory_order_acquire)) return;
      work(seen, index);
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(new Impl) {
  if (n_threads < 1) {
    delete impl_;
    throw Error("thread count must be at least 1, got " + std::to_string(n_threads));
  }
  impl_->n_threads = n_threads;
  impl_->slots = std::make_unique<Impl::Slot[]>(static_cast<std::size_t>(n_threads));
  impl_->workers.reserve(static_cast<std::size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) {
    impl_->workers.emplace_back([this, i] { impl_->worker_loop(i); });
  }
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  impl_->ticket.fetch_add(std::uint64_t{1} << 32, std::memory_order_seq_cst);
  impl_->ticket.notify_all();
  for (std::thread& t : impl_->workers) t.join();
  delete impl_;
}

int ThreadPool::size() const {
  return impl_->n_threads;
}

void ThreadPool::parallel_for(std::size_t n,
                              const std::function<void(std::size_t, std::size_t, int)>& fn) {
  using Fn = std::function<void(std::size_t, std::size_t, int)>;
  run(
      n,
      [](void* c, std::size_t b, std::size_t e, int t) { (*static_cast<const Fn*>(c))(b, e, t); },
      const_cast<Fn*>(&fn));
}

void ThreadPool::run(std::size_t n, Trampoline fn, void* ctx) {
  if (n == 0) return;
  Impl& p = *impl_;
  const std::size_t chunks =
      std::min<std::size_t>(n, static_cast<std::size_t>(p.n_threads) * kChunksPerThread);
  if (p.n_threads == 1 || n == 1) {  // nothing to share: skip the hand-off entirely
    fn(ctx, 0, n, 0);
    return;
  }
  // Close the previous job's slots before touching the fields: a late worker
  // still holding an exhausted slot could otherwise claim a "chunk" against
  // the new n_chunks and run the half-written job.
  const std::uint64_t old = p.ticket.load(std::memory_order_relaxed);
  for (int i = 0; i < p.n_threads; ++i) {
    p.slots[static_cast<std::size_t>(i)].next.store((old & ~Impl::kClosed) | Impl::kClosed,
                                                    std::memory_order_seq_cst);
  }
  p.fn = fn;
  p.ctx = ctx;
  p.n = n;
  const auto n_chunks = static_cast<std::uint32_t>(chunks);
  p.n_chunks.store(n_chunks, std::memory_order_relaxed);
  p.done.store(0, std::memory_order_relaxed);
  const std::uint64_t gen = Impl::generation_of(old) + 1;
  for (int i = 0; i < p.n_threads; ++i) {  // publishes the fields above
    p.slots[static_cast<std::size_t>(i)].next.store(gen << 32 | p.home_begin(i, n_chunks),
                                                    std::memory_order_seq_cst);
  }
  p.ticket.store(gen << 32, std::memory_order_seq_cst);
  if (p.sleepers.load(std::memory_order_seq_cst) > 0) p.ticket.notify_all();
  p.work(gen, 0);
  for (int i = 0; p.done.load(std::memory_order_acquire) != chunks; ++i) {
    FOLIO_CPU_RELAX();
    if (i > 4096) std::this_thread::yield();  // a claimed chunk's thread was descheduled
  }
}

}  // namespace folio::kernels
