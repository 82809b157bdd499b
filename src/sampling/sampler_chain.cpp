// sampling/sampler_chain.cpp: turns SamplingParams into the step list.
#include "sampling/sampler_chain.h"

#include "sampling/penalties.h"
#include "sampling/truncation.h"

namespace folio::sampling {

std::vector<const char*> SamplerChain::names() const {
  std::vector<const char*> out;
  for (const auto& s : logit_steps) out.push_back(s.name);
  out.push_back(greedy ? "greedy" : "dist");
  for (const auto& s : candidate_steps) out.insert(out.end() - 1, s.name);
  return out;
}

SamplerChain build_chain(const SamplingParams& p, std::vector<TokenId> stop_ids) {
  SamplerChain chain;
  if (!p.logit_bias.empty()) {
    chain.logit_steps.push_back(
        {"logit_bias", [bias = p.logit_bias](std::span<float> l, const TokenHistory&) {
           apply_logit_bias(l, bias);
         }});
  }
  if (p.min_tokens > 0 && !stop_ids.empty()) {
    chain.logit_steps.push_back({"min_tokens", [ids = std::move(stop_ids), n = p.min_tokens](
                                                   std::span<float> l, const TokenHistory& h) {
                                   if (h.num_generated() < n) mask_tokens(l, ids);
                                 }});
  }
  if (p.repetition_penalty != 1.0f) {
    chain.logit_steps.push_back(
        {"repetition_penalty",
         [r = p.repetition_penalty](std::span<float> l, const TokenHistory& h) {
           apply_repetition_penalty(l, h, r);
         }});
  }
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) {
    chain.logit_steps.push_back(
        {"presence_frequency", [pr = p.presence_penalty, fr = p.frequency_penalty](
                                   std::span<float> l, const TokenHistory& h) {
           apply_presence_frequency(l, h, pr, fr);
         }});
  }
  chain.greedy = p.greedy() || p.top_k == 1;
  if (chain.greedy) return chain;
  if (p.top_k > 0) {
    chain.candidate_steps.push_back({"top_k", [k = p.top_k](Candidates& c) { apply_top_k(c, k); }});
  }
  if (p.temperature != 1.0f) {
    chain.candidate_steps.push_back(
        {"temperature", [t = p.temperature](Candidates& c) { apply_temperature(c, t); }});
  }
  if (p.top_p < 1.0f) {
    chain.candidate_steps.push_back({"top_p", [v = p.top_p](Candidates& c) { apply_top_p(c, v); }});
  }
  if (p.min_p > 0.0f) {
    chain.candidate_steps.push_back({"min_p", [v = p.min_p](Candidates& c) { apply_min_p(c, v); }});
  }
  return chain;
}

}  // namespace folio::sampling
