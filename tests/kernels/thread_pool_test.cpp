// tests/kernels/thread_pool_test.cpp: partition contract of ThreadPool.
#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "base/error.h"

namespace folio::kernels {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (std::size_t n : {0, 1, 2, 3, 7, 100, 1001}) {
      for (int rep = 0; rep < 20; ++rep) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> calls{0};
        pool.parallel_for(n, [&](std::size_t b, std::size_t e, int t) {
          EXPECT_LT(b, e);
          EXPECT_GE(t, 0);
          EXPECT_LT(t, threads);
          calls.fetch_add(1);
          for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
        EXPECT_LE(calls.load(), std::min<int>(4 * threads, static_cast<int>(n)));
      }
    }
  }
}

TEST(ThreadPool, StdFunctionAndGrainOverloads) {
  ThreadPool pool(2);
  std::atomic<std::size_t> sum{0};
  const std::function<void(std::size_t, std::size_t, int)> fn = [&](std::size_t b, std::size_t e,
                                                                    int) {
    for (std::size_t i = b; i < e; ++i) sum += i;
  };
  pool.parallel_for(100, fn);
  EXPECT_EQ(sum.load(), 4950u);
  std::vector<int> seen(50, 0);
  pool.parallel_for_grain(50, 16, [&](std::size_t b, std::size_t e, int) {
    EXPECT_EQ(b % 16, 0u);
    for (std::size_t i = b; i < e; ++i) seen[i]++;
  });
  for (int s : seen) EXPECT_EQ(s, 1);
}

// Workers fall asleep after the spin phase and must wake up for the next job.
TEST(ThreadPool, WakesAfterSleeping) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 3; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::atomic<int> n{0};
    pool.parallel_for(3, [&](std::size_t, std::size_t, int) { n++; });
    EXPECT_EQ(n.load(), 3);
  }
}

// A worker stuck in its chunk (here: sleeping, as when the OS runs another
// process on its core) holds up only that chunk: the caller runs every other
// chunk itself instead of waiting for the worker's share.
TEST(ThreadPool, CallerTakesOverChunksOfAStalledWorker) {
  ThreadPool pool(2);
  std::atomic<int> by_worker{0}, by_caller{0};
  pool.parallel_for(8, [&](std::size_t, std::size_t, int t) {
    if (t != 0) {
      by_worker++;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } else {
      by_caller++;
    }
  });
  EXPECT_LE(by_worker.load(), 1);
  EXPECT_EQ(by_worker.load() + by_caller.load(), 8);
}

// Many back-to-back jobs of changing sizes, with pauses long enough for the
// workers to fall asleep: every index is covered exactly once per job and the
// pool never stalls. (A worker that still held the previous job's exhausted
// ticket once claimed a chunk of the half-published next job: the caller then
// counted one chunk too many and waited forever.)
TEST(ThreadPool, BackToBackJobsWithSleepsNeverStall) {
  auto run = std::async(std::launch::async, [] {
    ThreadPool pool(2);
    long covered = 0, expected = 0;
    for (long it = 0; it < 300000; ++it) {
      const std::size_t n = 1 + static_cast<std::size_t>(it * 7919 % 40);
      std::atomic<long> sum{0};
      pool.parallel_for(
          n, [&](std::size_t b, std::size_t e, int) { sum += static_cast<long>(e - b); });
      covered += sum.load();
      expected += static_cast<long>(n);
      if (it % 3000 == 0) std::this_thread::sleep_for(std::chrono::microseconds(400 + it % 300));
    }
    return covered == expected;
  });
  if (run.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    ADD_FAILURE() << "ThreadPool stalled";
    std::abort();  // the stuck pool cannot be joined
  }
  EXPECT_TRUE(run.get());
}

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_THROW(ThreadPool(0), Error);
}

}  // namespace
}  // namespace folio::kernels
