// calib/calibration.cpp: the calibration loop (see calibration.h).
#include "calib/calibration.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "base/timer.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"

namespace folio::calib {

std::size_t calibration_chunks(std::size_t n_tokens, const CalibrationOptions& o,
                               const std::string& what) {
  std::size_t n = n_tokens / o.ctx;
  if (o.chunks > 0) n = std::min(n, o.chunks);
  if (n == 0) {
    throw Error(what + " has " + std::to_string(n_tokens) + " tokens, fewer than one chunk of " +
                std::to_string(o.ctx));
  }
  return n;
}

void run_calibration(const model::Model& m, std::span<const TokenId> tokens, TokenId bos,
                     const CalibrationOptions& o, model::LinearInputObserver& observer,
                     const std::string& label) {
  const std::size_t n_chunks = calibration_chunks(tokens.size(), o, label);
  kernels::ThreadPool pool(std::max(1, o.threads));
  model::ContiguousKvCache kv(m.config(), 1, o.ctx, kernels::KvDtype::kF32);
  model::Workspace ws;
  ws.observer = &observer;
  model::Batch b;
  const Stopwatch run;
  for (std::size_t c = 0; c < n_chunks; ++c) {
    kv.truncate(0, 0);
    for (std::size_t start = 0; start < o.ctx; start += o.batch) {
      const std::size_t end = std::min(o.ctx, start + o.batch);
      b.clear();
      for (std::size_t p = start; p < end; ++p) {
        const TokenId t = p == 0 && bos >= 0 ? bos : tokens[c * o.ctx + p];
        b.add(t, static_cast<std::int32_t>(p), 0, false);
      }
      m.forward(b, kv, ws, pool);
    }
    const double rate = static_cast<double>((c + 1) * o.ctx) / std::max(run.seconds(), 1e-9);
    std::fprintf(stderr, "\r%s: chunk %zu/%zu, %.0f tokens/s, ETA %.0f s   ", label.c_str(), c + 1,
                 n_chunks, rate, static_cast<double>((n_chunks - c - 1) * o.ctx) / rate);
  }
  std::fprintf(stderr, "\n");
}

std::uint64_t text_hash(std::string_view text) {
  return XXH64(text.data(), text.size(), 0);
}

}  // namespace folio::calib
