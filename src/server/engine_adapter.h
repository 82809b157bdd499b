// server/engine_adapter.h: the server's EngineClient port implemented over
// the real engine (engine::EngineLoop, which owns the engine thread).
//
// Each submitted request gets the engine's own OutputChannel; the adapter
// hooks that channel's edge-triggered notification and translates every
// engine RequestOutput into a server StreamItem on the request's
// RequestStream, on the engine thread, without waking anyone else.
// Stop strings are the server's job (it matches them on detokenized text and
// calls finish_sample), so they are not passed to the engine.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "engine/engine_loop.h"
#include "server/engine_client.h"

namespace folio::server {

class EngineAdapter final : public EngineClient {
 public:
  // `loop` must outlive the adapter. `model_load_s` is reported as the
  // "model_load" stage in /metrics.
  EngineAdapter(engine::EngineLoop& loop, double model_load_s);

  std::shared_ptr<RequestStream> submit(EngineRequest request) override;
  void abort(RequestId id) override { loop_.abort(id); }
  void finish_sample(RequestId id, std::int32_t sample_index) override {
    loop_.finish_sample(id, sample_index);
  }
  EngineStats stats() const override;
  // Unhealthy when work is pending but the engine has not completed a step
  // for kStallSeconds, or when its last step failed.
  bool healthy() const override;

  static constexpr double kStallSeconds = 30;

 private:
  engine::EngineLoop& loop_;
  double model_load_s_;
  mutable std::mutex mu_;  // guards the progress watch below
  mutable std::uint64_t last_steps_ = 0;
  mutable double last_progress_ = 0;
};

}  // namespace folio::server
