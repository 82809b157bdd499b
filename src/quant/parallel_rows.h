// quant/parallel_rows.h: the quantizers' one way to spread independent rows
// over threads: rows [0, rows) cut into `threads` contiguous ranges, each run
// as work(r0, r1) on its own std::jthread (the caller's thread takes the
// first); an exception in any range is rethrown on the caller's thread after
// all have joined. Results that are sums should be kept per row and added in
// row order by the caller, so they do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace folio::quant {

template <class F>
void parallel_rows(std::size_t rows, int threads, F&& work) {
  const std::size_t n = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1,
                                                std::max<std::size_t>(rows, 1));
  std::vector<std::exception_ptr> errors(n);
  {
    std::vector<std::jthread> pool;
    const auto run = [&](std::size_t t) {
      try {
        work(rows * t / n, rows * (t + 1) / n);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    };
    for (std::size_t t = 1; t < n; ++t) pool.emplace_back(run, t);
    run(0);
  }
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace folio::quant
