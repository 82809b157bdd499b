#include "engine/sample_stream.h"

#include <utility>

#include "sampling/stop_conditions.h"

namespace folio::engine {

sampling::SamplingParams sample_params(const sampling::SamplingParams& p, std::int32_t k) {
  sampling::SamplingParams q = p;
  if (q.seed) q.seed = *q.seed + static_cast<std::uint64_t>(k);
  return q;
}

SampleStream::SampleStream(std::int32_t index, const sampling::SamplingParams& params,
                           std::int32_t vocab_size, std::span<const TokenId> eos,
                           std::span<const TokenId> prompt, const tokenizer::Tokenizer* tok)
    : sampler_(sample_params(params, index), vocab_size, eos, prompt), eos_(eos) {
  pending_.index = index;
  if (tok != nullptr) {
    detok_.emplace(*tok, tokenizer::DecodeOptions{.render_special = false});
    for (const std::string& st : params.stop)
      if (!st.empty()) stop_strings_.push_back(st);  // as StopMatcher filters them
    stops_.emplace(stop_strings_, params.include_stop_str_in_output);
  }
}

void SampleStream::flush_text() {
  if (!detok_) return;
  auto r = stops_->feed(detok_->flush());
  pending_.text += r.text;
  pending_.text += stops_->flush();
}

FinishReason SampleStream::accept(const sampling::SampledToken& t) {
  sampler_.accept(t.id);
  ++generated_;
  dirty_ = true;
  pending_.token_ids.push_back(t.id);
  if (t.logprobs) pending_.logprobs.push_back(*t.logprobs);
  const auto reason = sampling::check_token_stop(sampler_.params(), eos_, t.id, generated_);
  if (reason == sampling::StopReason::kEos || reason == sampling::StopReason::kStopToken) {
    flush_text();
    return FinishReason::kStop;
  }
  if (detok_) {
    auto r = stops_->feed(detok_->push(t.id));
    pending_.text += r.text;
    if (r.stop) {
      pending_.stop_reason = stop_strings_[*r.stop];
      return FinishReason::kStop;
    }
  }
  if (reason == sampling::StopReason::kMaxTokens) flush_text();
  return FinishReason::kNone;
}

void SampleStream::finish(FinishReason reason) {
  if (done_) return;
  done_ = true;
  dirty_ = true;
  pending_.finish = reason;
}

SampleDelta SampleStream::take_pending() {
  SampleDelta out = std::move(pending_);
  pending_ = SampleDelta{};
  pending_.index = out.index;
  dirty_ = false;
  return out;
}

}  // namespace folio::engine
