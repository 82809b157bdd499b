// engine/protocol.h: the one protocol between the engine and its consumers.
//
// Everything that crosses the engine boundary is one of these types, for
// every consumer alike: `folio serve` (through EngineLoop), `generate`,
// `chat`, `bench` and the server's test fake.
//
//   consumer                                   engine core (one thread)
//   --------                                   ------------------------
//   RequestLimits::admit(EngineRequest) ──AdmittedRequest──▶ add_request
//                                              │ step(): schedule, run, sample
//   OutputProcessor (text, stop strings) ◀──RequestOutput── per-request OutputChannel
//        │ a stop string matched
//        └───────── finish_sample(id, index) ──▶ frees that sample's blocks
//
// The engine core emits token ids, logprobs and finish reasons only (vLLM
// v1's EngineCoreOutput); text, stop strings and response shapes are the
// consumer's, in one output processor (engine/output_processor.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/attention_window.h"
#include "base/finish_reason.h"
#include "base/notify_queue.h"
#include "base/strong_id.h"
#include "base/token_id.h"
#include "grammar/compiled_grammar.h"
#include "sampling/logprobs.h"
#include "sampling/sampling_params.h"

namespace folio::engine {

// One engine request (n samples of one prompt). Distinct from the
// scheduler's sequence ids (sched::SeqId): mixing them does not compile.
using RequestId = StrongId<struct RequestTag>;

struct EngineRequest {
  RequestId id;                     // chosen by the consumer; unique among live requests
  std::vector<TokenId> prompt;      // tokenized (chat template applied)
  sampling::SamplingParams params;  // max_tokens unset: up to --max-model-len (RequestLimits)
  std::int32_t n = 1;               // independent samples of the prompt
  std::int32_t priority = 0;        // lower = served first (--scheduling-policy priority)
  double arrival_time = 0;          // monotonic seconds (base/timer.h); 0: when admitted
  // Sink + window attention (base/attention_window.h); unset: the engine's
  // --attention-window default (RequestLimits resolves it).
  std::optional<AttentionWindow> attention_window;
  // Structured output: every sample's tokens are constrained to this
  // grammar (grammar/compiled_grammar.h, compiled by the consumer, cached
  // and shared); null: free text. The sample ends with kStop where the
  // grammar is complete and nothing may follow, or on a stop token where it
  // may end.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  // Mean pooling: the request also returns the mean of its prompt tokens'
  // final hidden states after the output norm (RequestOutput::pooled, on the
  // last item): what a routing head and /v1/embeddings read. It must be
  // n == 1 with max_tokens 1 (unset: 1), and it takes no prefix-cache hit,
  // since every prompt position must be computed to be pooled; its blocks
  // still enter the cache, so a generation of the same prompt that follows
  // hits them.
  bool pool = false;
};

// New output of one sample (index in [0, n)) since the previous item.
struct SampleDelta {
  std::int32_t index = 0;
  std::vector<TokenId> token_ids;            // new tokens, in order
  std::vector<sampling::Logprobs> logprobs;  // one per token when params.logprobs is set
  // Set on the sample's last delta. A token-level stop (EOS, stop_token_ids)
  // is kStop with that token as the last of token_ids (stop_token); a
  // grammar that is complete is kStop after its last text token.
  FinishReason finish = FinishReason::kNone;
  bool stop_token = true;  // with kStop: the last token is a stop token (not shown)
};

// Engine-measured phases of a finished request (seconds; 0 when unknown).
struct RequestTiming {
  double queued_s = 0;   // arrival -> first scheduled
  double prefill_s = 0;  // first scheduled -> first token
  double decode_s = 0;   // first token -> finished
};

// One item on a request's channel: pushed after each step in which the
// request advanced or finished. The last item has finished == true (also
// after an abort: every unfinished sample then carries kAbort); nothing
// follows it.
struct RequestOutput {
  RequestId request_id;
  std::vector<SampleDelta> samples;    // only the samples that changed
  std::int32_t num_prompt_tokens = 0;  // on every item, so any one suffices
  std::int32_t num_cached_tokens = 0;  // prefix-cache hit at admission
  bool finished = false;
  std::string error;                    // the engine step failed (samples finish kError)
  std::optional<RequestTiming> timing;  // on the last item
  // A pooling request's last item (not after an abort or error): the mean
  // hidden state of its prompt [hidden size].
  std::vector<float> pooled;
};

// One request's channel: its own mutex and wake-up, so a step wakes only the
// consumers whose requests advanced. Contract: base/notify_queue.h.
using OutputChannel = NotifyQueue<RequestOutput>;

}  // namespace folio::engine
