#include "engine/sample_stream.h"

#include <utility>

#include "base/error.h"
#include "sampling/stop_conditions.h"

namespace folio::engine {

sampling::SamplingParams sample_params(const sampling::SamplingParams& p, std::int32_t k) {
  sampling::SamplingParams q = p;
  if (q.seed) q.seed = *q.seed + static_cast<std::uint64_t>(k);
  return q;
}

SampleStream::SampleStream(std::int32_t index, const sampling::SamplingParams& params,
                           std::int32_t vocab_size, std::span<const TokenId> eos,
                           std::span<const TokenId> prompt,
                           std::shared_ptr<const grammar::CompiledGrammar> grammar)
    : sampler_(sample_params(params, index), vocab_size, eos, prompt), eos_(eos) {
  pending_.index = index;
  if (grammar) {
    FOLIO_CHECK(grammar->vocab().size() <= static_cast<std::size_t>(vocab_size),
                "grammar vocabulary larger than the model's");
    stop_ids_.assign(eos.begin(), eos.end());
    stop_ids_.insert(stop_ids_.end(), params.stop_token_ids.begin(), params.stop_token_ids.end());
    matcher_ = std::make_unique<grammar::GrammarMatcher>(std::move(grammar), stop_ids_);
    mask_.assign((static_cast<std::size_t>(vocab_size) + 63) / 64, 0);
  }
}

void SampleStream::constrain() {
  if (!matcher_) return;
  matcher_->fill_mask(mask_);
  bool any = false;
  for (const std::uint64_t w : mask_) any = any || w != 0;
  if (!any) {
    // No token of the vocabulary continues the grammar here (it needs a
    // character no token spells): let the stop tokens end the sample.
    for (const TokenId id : stop_ids_) {
      const auto u = static_cast<std::size_t>(id);
      mask_[u / 64] |= std::uint64_t{1} << (u % 64);
    }
  }
  sampler_.set_allowed(mask_.data());
}

SampleStream::Verified SampleStream::verify(std::span<const float> logits, TokenId draft) {
  constrain();  // a draft the grammar forbids has probability 0: rejected
  const spec::Verdict v =
      spec::verify_one_hot(sampler_.target(logits), draft, sampler_.rng(), weights_);
  Verified out;
  out.token.id = v.token;
  out.accepted = v.accepted;
  const auto& p = sampler_.params();
  if (p.logprobs) out.token.logprobs = sampling::compute_logprobs(logits, v.token, *p.logprobs);
  return out;
}

FinishReason SampleStream::accept(const sampling::SampledToken& t) {
  sampler_.accept(t.id);
  ++generated_;
  dirty_ = true;
  pending_.token_ids.push_back(t.id);
  if (t.logprobs) pending_.logprobs.push_back(*t.logprobs);
  const FinishReason r = sampling::check_token_stop(sampler_.params(), eos_, t.id, generated_);
  if (matcher_) {
    // The draw saw the mask, so the grammar takes the token; if it does not
    // (a dead end let a stop through) or it completes the grammar, stop.
    const bool ok = matcher_->accept_token(t.id);
    if (!ok || matcher_->terminated()) return FinishReason::kStop;
    if (matcher_->must_end()) {
      grammar_complete_ = true;  // ends after a text token
      return FinishReason::kStop;
    }
  }
  // kLength is the scheduler's to decide (it counts the outputs too).
  return r == FinishReason::kStop ? r : FinishReason::kNone;
}

void SampleStream::finish(FinishReason reason) {
  if (done_) return;
  done_ = true;
  dirty_ = true;
  pending_.finish = reason;
  pending_.stop_token = !grammar_complete_;
}

SampleDelta SampleStream::take_pending() {
  SampleDelta out = std::move(pending_);
  pending_ = SampleDelta{};
  pending_.index = out.index;
  dirty_ = false;
  return out;
}

}  // namespace folio::engine
