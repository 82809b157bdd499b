// sampling/sampler_chain.h: the ordered list of steps one request runs.
//
// Built once per request from its params, skipping steps that would be
// no-ops, in the fixed order
//
//   dense logits (by token id):  logit_bias -> min_tokens mask ->
//                                repetition_penalty -> presence/frequency
//   then greedy: argmax over those logits (one pass), or
//   candidate list:              top_k -> temperature -> top_p -> min_p -> draw
//
// Temperature is a positive scale, so running it after top-k gives exactly
// vLLM's temperature -> top-k result while scaling k values instead of the
// vocabulary. top-p and min-p see tempered probabilities, as in vLLM and
// llama.cpp; min-p runs last (llama.cpp's order).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/sampling_params.h"
#include "sampling/token_history.h"

namespace folio::sampling {

struct LogitStep {
  const char* name;
  std::function<void(std::span<float> logits, const TokenHistory& history)> apply;
};

struct CandidateStep {
  const char* name;
  std::function<void(Candidates& c)> apply;
};

struct SamplerChain {
  std::vector<LogitStep> logit_steps;
  std::vector<CandidateStep> candidate_steps;  // empty when greedy
  bool greedy = false;

  std::vector<const char*> names() const;  // for tests and debug logs
};

// `stop_ids` are the ids min_tokens hides (EOS unless ignore_eos, plus
// stop_token_ids). `params` must already be validated.
SamplerChain build_chain(const SamplingParams& params, std::vector<TokenId> stop_ids);

}  // namespace folio::sampling
