// sampling/sampler.cpp: runs the chain on one position's logits.
#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace folio::sampling {
namespace {

std::vector<TokenId> min_tokens_ids(const SamplingParams& p, std::span<const TokenId> eos) {
  std::vector<TokenId> ids(p.stop_token_ids.begin(), p.stop_token_ids.end());
  if (!p.ignore_eos) ids.insert(ids.end(), eos.begin(), eos.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Rng make_rng(const SamplingParams& p) {
  if (p.seed) return Rng(*p.seed);
  std::random_device rd;
  return Rng((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
}

}  // namespace

Sampler::Sampler(SamplingParams params, std::int32_t vocab_size, std::span<const TokenId> eos_ids,
                 std::span<const TokenId> prompt)
    : params_(std::move(params)),
      vocab_size_(vocab_size),
      rng_(make_rng(params_)),
      history_(prompt) {
  if (vocab_size <= 0) throw Error("sampler: vocabulary is empty");
  params_.validate(vocab_size);
  for (TokenId id : eos_ids) FOLIO_CHECK(id >= 0 && id < vocab_size, "eos id out of range");
  for (TokenId id : prompt) {
    if (id < 0 || id >= vocab_size) throw Error("sampler: prompt token id out of range");
  }
  chain_ = build_chain(params_, min_tokens_ids(params_, eos_ids));
}

const Candidates& Sampler::target(std::span<const float> logits) {
  FOLIO_CHECK(logits.size() == static_cast<std::size_t>(vocab_size_), "logits size != vocab");
  const auto k = static_cast<std::size_t>(params_.top_k);
  if (allowed_ != nullptr && chain_.logit_steps.empty() &&
      (chain_.greedy || params_.top_k <= 0 || k >= logits.size())) {
    // Constrained with nothing to edit densely: visit the allowed tokens
    // only (a few hundred), not a copy of the whole vocabulary. The same
    // result as the dense path below: the lowest id of the best logit, or
    // the finite allowed candidates in id order.
    candidates_.items.clear();
    const std::size_t words = (logits.size() + 63) / 64;
    for (std::size_t w = 0; w < words; ++w) {
      for (std::uint64_t x = allowed_[w]; x != 0; x &= x - 1) {
        const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(x));
        if (i >= logits.size()) break;
        if (chain_.greedy) {
          if (candidates_.items.empty() || logits[i] > candidates_.items.front().logit) {
            candidates_.items.assign(1, Candidate{static_cast<TokenId>(i), logits[i]});
          }
        } else if (std::isfinite(logits[i])) {
          candidates_.items.push_back(Candidate{static_cast<TokenId>(i), logits[i]});
        }
      }
    }
    if (!candidates_.items.empty()) {
      candidates_.sorted = chain_.greedy;
      if (!chain_.greedy) {
        for (const CandidateStep& s : chain_.candidate_steps) s.apply(candidates_);
      }
      return candidates_;
    }
  }
  std::span<const float> work = logits;
  if (!chain_.logit_steps.empty() || allowed_ != nullptr) {
    scratch_.assign(logits.begin(), logits.end());
    if (allowed_ != nullptr) {
      for (std::size_t i = 0; i < scratch_.size(); ++i) {
        if (((allowed_[i / 64] >> (i % 64)) & 1) == 0)
          scratch_[i] = -std::numeric_limits<float>::infinity();
      }
    }
    for (const LogitStep& s : chain_.logit_steps) s.apply(scratch_, history_);
    work = scratch_;
  }
  if (chain_.greedy) {
    const TokenId best = argmax(work);
    candidates_.items.assign(1, Candidate{best, work[static_cast<std::size_t>(best)]});
    candidates_.sorted = true;
    return candidates_;
  }
  // top_k (always the first candidate step) is fused into building the list.
  if (params_.top_k > 0 && k < work.size()) {
    candidates_.assign_top_k(work, k);
  } else if (allowed_ != nullptr) {
    candidates_.assign_finite(work);  // the same distribution over far fewer candidates
    if (candidates_.items.empty()) candidates_.assign(work);
  } else {
    candidates_.assign(work);
  }
  for (const CandidateStep& s : chain_.candidate_steps) s.apply(candidates_);
  return candidates_;
}

SampledToken Sampler::sample(std::span<const float> logits) {
  const Candidates& c = target(logits);
  SampledToken out{};
  out.id = chain_.greedy ? c.items.front().id : draw(c, rng_, weights_);
  if (params_.logprobs) out.logprobs = compute_logprobs(logits, out.id, *params_.logprobs);
  return out;
}

}  // namespace folio::sampling
