// loadgen/openai_stream.h: reads one OpenAI streaming response, event by
// event, into a RequestRecord.
//
// /v1/completions chunks carry choices[0].text, /v1/chat/completions chunks
// choices[0].delta.content. As vLLM's benchmark does, a chunk counts as a
// token chunk (for TTFT and ITL) when that text is non-empty: a server may
// hold back bytes of an incomplete UTF-8 character and send empty chunks.
// With stream_options.include_usage the last chunk carries `usage`, whose
// completion_tokens is the output length; without it, the number of token
// chunks stands in (exact for servers that send one chunk per token).
#pragma once

#include <cstdint>
#include <string_view>

#include "loadgen/latency_stats.h"

namespace folio::loadgen {

class OpenAiStreamReader {
 public:
  explicit OpenAiStreamReader(RequestRecord& r) : r_(r) {}

  // One event's data received at monotonic time `t`. Returns true at the
  // "[DONE]" marker. Throws folio::Error for malformed JSON or an error object
  // (the request then counts as failed with that message).
  bool on_event(std::string_view data, double t);

  // Fills the record's output/prompt token counts; call when the response ended.
  void finish();

  bool saw_done() const { return done_; }
  std::int64_t token_chunks() const { return chunks_; }

 private:
  RequestRecord& r_;
  std::int64_t chunks_ = 0;
  std::int64_t usage_prompt_ = -1, usage_completion_ = -1;
  bool done_ = false;
};

}  // namespace folio::loadgen
