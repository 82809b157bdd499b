// server/choice_output.cpp: detokenize + stop-string matching for one choice.
#include "server/choice_output.h"

#include "base/timer.h"

namespace folio::server {

ChoiceOutput::ChoiceOutput(const tokenizer::Tokenizer& tok, const sampling::SamplingParams& params,
                           bool skip_special_tokens, std::size_t text_offset_base)
    : tok_(tok),
      detok_(tok, tokenizer::DecodeOptions{.render_special = !skip_special_tokens}),
      stop_(params.stop, params.include_stop_str_in_output),
      include_stop_(params.include_stop_str_in_output),
      text_offset_(text_offset_base) {}

void ChoiceOutput::emit(std::string_view piece, ChoiceDelta& out) {
  auto r = stop_.feed(piece);
  out.text += r.text;
  text_offset_ += r.text.size();
  if (r.stop) {
    finish_reason_ = "stop";
    out.stop_string_hit = true;
  }
}

ChoiceDelta ChoiceOutput::apply(const SampleDelta& delta) {
  ChoiceDelta out;
  if (finished()) return out;  // tokens after a stop string are not ours to show
  Stopwatch sw;
  const std::size_t n = delta.tokens.size();
  for (std::size_t i = 0; i < n && !finished(); ++i) {
    const TokenId id = delta.tokens[i];
    ++num_tokens_;
    out.tokens.push_back(id);
    out.text_offsets.push_back(text_offset_);
    if (i < delta.logprobs.size()) out.logprobs.push_back(delta.logprobs[i]);
    const bool stop_token = delta.finish == FinishReason::kStop && i + 1 == n;
    if (stop_token && !include_stop_) break;
    try {
      emit(detok_.push(id), out);
    } catch (const Error&) {
      // An id outside the vocabulary is an engine bug; show nothing for it.
    }
  }
  if (!finished() && delta.finish != FinishReason::kNone) {
    emit(detok_.flush(), out);
    if (!finished()) {
      const std::string rest = stop_.flush();
      out.text += rest;
      text_offset_ += rest.size();
      finish_reason_ = sched::finish_reason_name(delta.finish);
    }
  }
  if (finished()) out.finish_reason = finish_reason_;  // finished during this call
  detok_s_ += sw.seconds();
  return out;
}

}  // namespace folio::server
