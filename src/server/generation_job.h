// server/generation_job.h: one completions / chat request in flight.
//
// Owns the engine requests of one HTTP request (one per prompt, each with n
// samples), their output channels and one engine::OutputProcessor per
// prompt (choice index = prompt * n + sample). The handler submit()s it
// once; the HTTP session then drives it on its strand as a Job (job.h).
// Destroying a job aborts whatever is unfinished and frees its admission
// slots, so no path leaks an engine request.
//
// poll() output: for a stream, SSE frames ("data: {...}\n\n", then
// "data: [DONE]\n\n"); otherwise nothing until done, then the JSON body.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/output_processor.h"
#include "server/confidence.h"
#include "server/job.h"
#include "server/openai_request.h"
#include "server/response_builder.h"
#include "server/server_context.h"
#include "server/tool_stream.h"

namespace folio::server {

class GenerationJob final : public Job {
 public:
  // `target`: the concrete model (of ctx) that runs the request.
  GenerationJob(ServerContext& ctx, ServedModel& target, GenerationRequest req);
  ~GenerationJob() override;
  GenerationJob(const GenerationJob&) = delete;
  GenerationJob& operator=(const GenerationJob&) = delete;

  // Admits every prompt against the engine's limits (400 naming the limit),
  // takes their admission slots (429 when --max-queue is full; 503 while
  // draining) and submits them. Throws ApiError.
  void submit();
  void attach(const std::function<void()>& notify) override;
  JobOutput poll() override;
  void cancel() override;
  bool streaming() const override { return req_.stream; }
  const std::string& id() const { return meta_.id; }

  // A cascade's first try (before submit()): the engine reports the top-2
  // logprobs of every token whatever the client asked (the client still
  // sees only what it asked for), confidence() measures each choice, and
  // poll() holds all output until the job is done, so it can be dropped.
  void probe_confidence();
  std::vector<Confidence> confidence() const;  // per choice
  std::int64_t completion_tokens() const { return usage().completion_tokens; }

 private:
  struct Engine {  // one engine request (one prompt)
    RequestId id;
    std::shared_ptr<engine::OutputChannel> channel;
    std::unique_ptr<engine::OutputProcessor> out;
    bool finished = false;
    std::int32_t prompt_tokens = 0;
    std::int32_t cached_tokens = 0;
    double first_token = 0;  // steady seconds; 0 until the first token
  };
  struct Choice {
    std::string text;
    std::vector<TextDelta> pieces;  // kept for logprobs of a non-stream response
    FinishReason finish = FinishReason::kNone;
    double last_token = 0;
    std::optional<ToolCallStream> tools;  // streamed chat with tools: held text
  };

  JobOutput poll_now();
  void start_frames(std::string& out);
  void apply(std::size_t e, const engine::RequestOutput& item, std::string& out);
  void apply_delta(std::size_t e, TextDelta d, std::string& out);
  void stream_with_tools(std::size_t ci, TextDelta d, std::string& out);
  std::vector<ToolCall> with_ids(std::vector<ToolCall> calls);
  void finish_engine(std::size_t e, const engine::RequestOutput& item);
  std::string final_frames();
  JobOutput final_body();
  // What the client gets instead of an answer: an engine error (500), or a
  // shutdown that aborted the request (503); nullopt when it finished.
  std::optional<std::pair<int, std::string>> failure() const;
  Usage usage() const;
  void release_all(bool aborted);

  ServerContext& ctx_;
  ServedModel& target_;
  GenerationRequest req_;
  ResponseMeta meta_;
  std::vector<Engine> engines_;
  std::vector<Choice> choices_;
  double arrival_ = 0;
  bool started_ = false;  // first poll emitted the opening frames
  bool done_ = false;
  bool released_ = false;
  std::string error_;                    // engine failure message
  std::mt19937_64 rng_;                  // tool-call ids
  bool probe_ = false;                   // probe_confidence()
  std::vector<ConfidenceMeter> meters_;  // per choice, when probing
  std::string held_;                     // output held back while probing
};

}  // namespace folio::server
