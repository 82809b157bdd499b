// kernels/thread_pool.h: a persistent pool of worker threads (no thread is
// created per operation). Kernels receive it explicitly: no global pool.
//
// Workers wait for work by spinning briefly and then blocking on a futex
// (std::atomic::wait): a decode step issues hundreds of small parallel_for
// calls a few microseconds apart, and waking a sleeping thread costs more
// than the work itself, while an idle pool must not burn a core forever.
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

namespace folio::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads >= 1; the caller counts as one of them
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // Runs fn(begin, end, thread_index) over a partition of [0, n) into at most
  // 4 * size() contiguous chunks, on the pool and the calling thread, and
  // returns when all are done. Chunks are claimed dynamically, so one thread
  // may run several (thread_index < size() names the thread, not the chunk),
  // and which thread runs which chunk varies from call to call: fn's result
  // must not depend on it. Not reentrant. `fn` must not throw.
  void parallel_for(std::size_t n,
                    const std::function<void(std::size_t begin, std::size_t end, int thread)>& fn);

  // Same contract, for any callable: no std::function is built, so a lambda
  // with a large capture costs no heap allocation per call.
  template <class F>
  requires(!std::is_same_v<
           std::remove_cvref_t<F>,
           std::function<void(std::size_t, std::size_t, int)>>) void parallel_for(std::size_t n,
                                                                                  F&& fn) {
    auto* ctx = &fn;
    run(
        n,
        [](void* c, std::size_t b, std::size_t e, int t) {
          (*static_cast<std::remove_reference_t<F>*>(c))(b, e, t);
        },
        const_cast<void*>(static_cast<const void*>(ctx)));
  }

  // Like parallel_for, but chunk boundaries are multiples of `grain` (the last
  // chunk ends at n). Kernels use it to keep row tiles whole.
  template <class F>
  void parallel_for_grain(std::size_t n, std::size_t grain, F&& fn) {
    const std::size_t units = (n + grain - 1) / grain;
    parallel_for(units, [&](std::size_t b, std::size_t e, int t) {
      const std::size_t end = e * grain < n ? e * grain : n;
      fn(b * grain, end, t);
    });
  }

 private:
  using Trampoline = void (*)(void* ctx, std::size_t begin, std::size_t end, int thread);
  void run(std::size_t n, Trampoline fn, void* ctx);

  struct Impl;
  Impl* impl_;
};

}  // namespace folio::kernels
