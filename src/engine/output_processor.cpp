#include "engine/output_processor.h"

#include <algorithm>

#include "base/error.h"
#include "base/timer.h"

namespace folio::engine {

namespace {

std::vector<std::string> non_empty(const std::vector<std::string>& stops) {
  std::vector<std::string> out;
  for (const std::string& s : stops)
    if (!s.empty()) out.push_back(s);  // as StopMatcher filters them
  return out;
}

}  // namespace

SampleOutput::SampleOutput(const tokenizer::Tokenizer& tok, const sampling::SamplingParams& params,
                           const OutputOptions& options)
    : tok_(tok),
      detok_(tok, tokenizer::DecodeOptions{.render_special = !options.skip_special_tokens}),
      stops_(non_empty(params.stop)),
      stop_(stops_, params.include_stop_str_in_output),
      include_stop_(params.include_stop_str_in_output),
      text_offset_(options.text_offset_base) {}

void SampleOutput::emit(std::string_view piece, TextDelta& out) {
  auto r = stop_.feed(piece);
  out.text += r.text;
  text_offset_ += r.text.size();
  if (r.stop) {
    finish_ = FinishReason::kStop;
    out.stop_reason = stops_.at(*r.stop);
    out.stop_string_hit = true;
  }
}

LogprobText SampleOutput::logprob_text(const sampling::Logprobs& lp) const {
  const auto piece = [&](TokenId id) {
    try {
      return tok_.token_to_piece(id);
    } catch (const Error&) {
      return std::string();  // an id outside the vocabulary is an engine bug: no text
    }
  };
  LogprobText t{{piece(lp.chosen.id), lp.chosen.logprob, lp.chosen.id}, {}};
  for (const auto& alt : lp.top) t.top.push_back({piece(alt.id), alt.logprob, alt.id});
  return t;
}

TextDelta SampleOutput::apply(const SampleDelta& delta) {
  TextDelta out;
  out.index = delta.index;
  if (finished()) return out;  // tokens after a stop string are not ours to show
  const std::size_t n = delta.token_ids.size();
  for (std::size_t i = 0; i < n && !finished(); ++i) {
    const TokenId id = delta.token_ids[i];
    ++num_tokens_;
    out.token_ids.push_back(id);
    out.text_offsets.push_back(text_offset_);
    if (i < delta.logprobs.size()) out.logprobs.push_back(logprob_text(delta.logprobs[i]));
    const bool stop_token = delta.finish == FinishReason::kStop && delta.stop_token && i + 1 == n;
    if (stop_token && !include_stop_) break;
    try {
      emit(detok_.push(id), out);
    } catch (const Error& e) {
      // An engine bug (an id outside the vocabulary): the sample ends here
      // with the reason, rather than a text with a silent hole.
      error_ = e.what();
      finish_ = FinishReason::kError;
      out.finish = finish_;
      return out;
    }
  }
  if (!finished() && delta.finish != FinishReason::kNone) {
    emit(detok_.flush(), out);
    if (!finished()) {
      const std::string rest = stop_.flush();
      out.text += rest;
      text_offset_ += rest.size();
      finish_ = delta.finish;
    }
  }
  if (finished()) out.finish = finish_;  // finished during this call
  return out;
}

OutputProcessor::OutputProcessor(const tokenizer::Tokenizer& tok,
                                 const sampling::SamplingParams& params, std::int32_t n,
                                 const OutputOptions& options) {
  samples_.reserve(static_cast<std::size_t>(std::max(n, 0)));
  for (std::int32_t k = 0; k < n; ++k) samples_.emplace_back(tok, params, options);
}

std::string OutputProcessor::error() const {
  for (const SampleOutput& s : samples_) {
    if (!s.error().empty()) return s.error();
  }
  return {};
}

std::vector<TextDelta> OutputProcessor::apply(const RequestOutput& out) {
  std::vector<TextDelta> deltas;
  if (finished_) return deltas;
  Stopwatch sw;
  for (const SampleDelta& d : out.samples) {
    if (d.index < 0 || d.index >= n()) continue;  // not one of ours (a broken contract)
    SampleOutput& s = samples_[static_cast<std::size_t>(d.index)];
    if (s.finished()) continue;
    deltas.push_back(s.apply(d));
  }
  if (out.finished) {
    finished_ = true;
    for (std::int32_t k = 0; k < n(); ++k) {
      SampleOutput& s = samples_[static_cast<std::size_t>(k)];
      if (s.finished()) continue;
      SampleDelta end;
      end.index = k;
      end.finish = out.error.empty() ? FinishReason::kAbort : FinishReason::kError;
      deltas.push_back(s.apply(end));
    }
  }
  seconds_ += sw.seconds();
  return deltas;
}

}  // namespace folio::engine
