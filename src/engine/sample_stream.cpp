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
                           std::span<const TokenId> prompt)
    : sampler_(sample_params(params, index), vocab_size, eos, prompt), eos_(eos) {
  pending_.index = index;
}

SampleStream::Verified SampleStream::verify(std::span<const float> logits, TokenId draft) {
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
  // kLength is the scheduler's to decide (it counts the outputs too).
  return r == FinishReason::kStop ? r : FinishReason::kNone;
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
