// server/embedding_job.h: one POST /v1/embeddings in flight.
//
// Every input is a pooling request on the named (concrete) model
// (server/pooling_run.h); when all are in, the reply is OpenAI's embeddings
// list: each embedding the mean of the prompt's final hidden states,
// scaled to unit length (route::l2_normalized), as floats or base64 of
// little-endian float32. A failed engine step is a 500 naming it.
#pragma once

#include <memory>

#include "server/job.h"
#include "server/openai_request.h"
#include "server/pooling_run.h"

namespace folio::server {

class EmbeddingJob final : public Job {
 public:
  EmbeddingJob(ServerContext& ctx, ServedModel& model, EmbeddingRequest req);

  void submit() { run_.submit(); }  // throws ApiError (pooling_run.h)
  void attach(const std::function<void()>& notify) override { run_.attach(notify); }
  JobOutput poll() override;
  void cancel() override { run_.cancel(); }
  bool streaming() const override { return false; }

 private:
  ServerContext& ctx_;
  EmbeddingRequest req_;
  PoolingRun run_;
};

}  // namespace folio::server
