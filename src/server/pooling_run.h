// server/pooling_run.h: prompts pooled on one model's engine, asynchronously.
//
// Each prompt is one pooling engine request (engine::EngineRequest::pool):
// its mean hidden state comes back on its channel when its prefill is done.
// The owner submit()s, attach()es the session's wake-up and calls poll()
// whenever woken; done() then holds every mean (or the first error). Used by
// /v1/embeddings (EmbeddingJob) and by routing with a learned head
// (HeadRouteJob). Destroying a run aborts what is unfinished and frees its
// admission slots.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/server_context.h"

namespace folio::server {

class PoolingRun {
 public:
  PoolingRun(ServerContext& ctx, ServedModel& model, std::vector<std::vector<TokenId>> prompts);
  ~PoolingRun();
  PoolingRun(const PoolingRun&) = delete;
  PoolingRun& operator=(const PoolingRun&) = delete;

  // Admits every prompt (400 naming the limit), takes admission slots (429
  // when --max-queue is full; 503 while draining) and submits. Throws ApiError.
  void submit();
  void attach(const std::function<void()>& notify);
  // Takes what arrived; true once every prompt finished (or one failed).
  bool poll();
  void cancel();  // aborts what is unfinished

  bool done() const { return done_; }
  const std::string& error() const { return error_; }  // empty: every mean is in
  // Per prompt, in order: its mean hidden state (after done() without error).
  const std::vector<std::vector<float>>& means() const { return means_; }
  std::int64_t prompt_tokens() const;

 private:
  struct Item {
    RequestId id;
    std::shared_ptr<engine::OutputChannel> channel;
    bool finished = false;
  };
  void release_all(bool aborted);

  ServerContext& ctx_;
  ServedModel& model_;
  std::vector<std::vector<TokenId>> prompts_;
  std::vector<Item> items_;
  std::vector<std::vector<float>> means_;
  std::string error_;
  bool done_ = false;
  bool released_ = false;
};

}  // namespace folio::server
