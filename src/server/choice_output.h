// server/choice_output.h: one choice's text, assembled from engine deltas.
//
// Per choice (one sample of one prompt): token ids -> StreamingDetokenizer
// (whole UTF-8 characters only) -> StopMatcher (text that could still become
// a stop string is held back, so a stream never leaks a stop-string prefix).
// A token-level stop (EOS / stop_token_ids, FinishReason::kStop from the
// engine) is counted but not rendered, as vLLM does, unless
// include_stop_str_in_output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampling/stop_matcher.h"
#include "server/engine_client.h"
#include "tokenizer/detokenizer.h"

namespace folio::server {

struct ChoiceDelta {
  std::string text;                          // safe to send now
  std::vector<TokenId> tokens;               // tokens newly counted (for logprobs)
  std::vector<sampling::Logprobs> logprobs;  // parallel to tokens when requested
  std::vector<std::size_t> text_offsets;     // completions' text_offset per token
  std::optional<std::string> finish_reason;  // set once, when the choice ends
  bool stop_string_hit = false;              // the server decided to stop this sample
};

class ChoiceOutput {
 public:
  ChoiceOutput(const tokenizer::Tokenizer& tok, const sampling::SamplingParams& params,
               bool skip_special_tokens, std::size_t text_offset_base);

  ChoiceDelta apply(const SampleDelta& delta);
  bool finished() const { return finish_reason_.has_value(); }
  std::int32_t num_tokens() const { return num_tokens_; }
  double detokenize_seconds() const { return detok_s_; }

 private:
  void emit(std::string_view piece, ChoiceDelta& out);

  const tokenizer::Tokenizer& tok_;
  tokenizer::StreamingDetokenizer detok_;
  sampling::StopMatcher stop_;
  bool include_stop_;
  std::optional<std::string> finish_reason_;
  std::int32_t num_tokens_ = 0;
  std::size_t text_offset_;  // bytes of text produced so far (plus any echoed prompt)
  double detok_s_ = 0;
};

}  // namespace folio::server
