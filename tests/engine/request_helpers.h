// tests/engine/request_helpers.h: requests and their outputs for engine
// tests, with or without a model: a request, greedy parameters of a fixed
// length, and a channel's items gathered per sample.
#pragma once

#include <utility>
#include <vector>

#include "engine/llm_engine.h"

namespace folio::engine::testing {

inline EngineRequest req(std::uint64_t id, std::vector<TokenId> prompt, sampling::SamplingParams p,
                         std::int32_t n = 1) {
  EngineRequest r;
  r.id = RequestId{id};
  r.prompt = std::move(prompt);
  r.params = std::move(p);
  r.n = n;
  return r;
}

inline sampling::SamplingParams greedy(std::int32_t max_tokens) {
  sampling::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;  // fixed lengths: every token is compared
  return p;
}

// Everything one sample produced.
struct SampleResult {
  std::vector<TokenId> tokens;
  FinishReason finish = FinishReason::kNone;
};

// Concatenates a channel's items per sample index.
inline std::vector<SampleResult> collect(const std::vector<RequestOutput>& items, std::int32_t n) {
  std::vector<SampleResult> out(static_cast<std::size_t>(n));
  for (const RequestOutput& o : items) {
    for (const SampleDelta& d : o.samples) {
      auto& r = out.at(static_cast<std::size_t>(d.index));
      r.tokens.insert(r.tokens.end(), d.token_ids.begin(), d.token_ids.end());
      if (d.finish != FinishReason::kNone) r.finish = d.finish;
    }
  }
  return out;
}

}  // namespace folio::engine::testing
