// engine/output_processor.h: engine outputs -> text, the consumer's side of
// the protocol (vLLM v1's OutputProcessor), shared by serve, generate and chat.
//
// Per sample:  token ids -> StreamingDetokenizer (whole UTF-8 characters,
// special tokens skipped unless asked) -> StopMatcher (text that could still
// become a stop string is held back, so a stream never leaks a prefix of
// one) -> TextDelta. It also renders each logprob's token text. A token-level
// stop (EOS / stop_token_ids: kStop from the engine) is counted but not
// rendered, as vLLM does, unless include_stop_str_in_output. Detokenization
// runs here once per token; nothing else detokenizes generated tokens.
//
// When a stop string matches, the delta says so (stop_string_hit): the
// consumer tells the engine (EngineClient / LLMEngine::finish_sample) and
// the sample ignores whatever tokens the engine produced meanwhile.
//
//   OutputProcessor out(tok, params, n, {});
//   for (const RequestOutput& o : channel->drain())
//     for (TextDelta& d : out.apply(o)) {
//       if (d.stop_string_hit) engine.finish_sample(id, d.index);
//       show(d.index, d.text);
//     }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/protocol.h"
#include "sampling/stop_matcher.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace folio::engine {

// A token's text for logprobs: its raw bytes (token_to_piece; may be part of
// a UTF-8 character), its logprob and its id.
struct TokenText {
  std::string piece;
  float logprob = 0;
  TokenId id = 0;
};

struct LogprobText {
  TokenText chosen;
  std::vector<TokenText> top;  // by descending logprob
};

// What one sample produced since its previous delta.
struct TextDelta {
  std::int32_t index = 0;                     // the sample, in [0, n)
  std::string text;                           // safe to show now
  std::vector<TokenId> token_ids;             // tokens newly counted (usage, logprobs)
  std::vector<LogprobText> logprobs;          // parallel to token_ids when requested
  std::vector<std::size_t> text_offsets;      // completions' text_offset per token
  FinishReason finish = FinishReason::kNone;  // set once, when the sample ends
  std::string stop_reason;                    // the stop string that matched, if one did
  bool stop_string_hit = false;               // tell the engine: finish_sample(id, index)
};

struct OutputOptions {
  bool skip_special_tokens = true;
  std::size_t text_offset_base = 0;  // bytes before the first generated one (an echoed prompt)
};

// One sample's text stream.
class SampleOutput {
 public:
  // `tok` must outlive this.
  SampleOutput(const tokenizer::Tokenizer& tok, const sampling::SamplingParams& params,
               const OutputOptions& options);

  // Applies one engine delta of this sample (empty once finished).
  TextDelta apply(const SampleDelta& delta);
  bool finished() const { return finish_ != FinishReason::kNone; }
  FinishReason finish_reason() const { return finish_; }
  std::int32_t num_tokens() const { return num_tokens_; }
  // Why the sample ended with kError here ("" if it did not): a token the
  // detokenizer cannot turn into text (an id outside the vocabulary, an
  // engine bug). The sample's text stops there; nothing is silently skipped.
  const std::string& error() const { return error_; }

 private:
  void emit(std::string_view piece, TextDelta& out);
  LogprobText logprob_text(const sampling::Logprobs& lp) const;

  const tokenizer::Tokenizer& tok_;
  tokenizer::StreamingDetokenizer detok_;
  std::vector<std::string> stops_;
  sampling::StopMatcher stop_;
  bool include_stop_;
  FinishReason finish_ = FinishReason::kNone;
  std::int32_t num_tokens_ = 0;
  std::size_t text_offset_;  // bytes of text produced so far (plus the base)
  std::string error_;
};

// One engine request's n samples.
class OutputProcessor {
 public:
  OutputProcessor(const tokenizer::Tokenizer& tok, const sampling::SamplingParams& params,
                  std::int32_t n, const OutputOptions& options = {});

  // The text deltas of one engine output, one per sample that produced
  // something. On the final item every sample ends: one the engine left
  // unfinished (a broken contract) ends as kError when the item carries an
  // error, else kAbort.
  std::vector<TextDelta> apply(const RequestOutput& out);

  const SampleOutput& sample(std::int32_t index) const {
    return samples_.at(static_cast<std::size_t>(index));
  }
  std::int32_t n() const { return static_cast<std::int32_t>(samples_.size()); }
  bool finished() const { return finished_; }
  // The first sample's error (SampleOutput::error), "" when none failed. The
  // consumer should abort the engine request and report it.
  std::string error() const;
  // Seconds spent detokenizing and matching stop strings so far (/metrics).
  double detokenize_seconds() const { return seconds_; }

 private:
  std::vector<SampleOutput> samples_;
  bool finished_ = false;
  double seconds_ = 0;
};

}  // namespace folio::engine
