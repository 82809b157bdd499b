// tests/engine/core_fixture.h: the engine core over FakeModelRunner (no
// model) and the helpers its tests share: a small chunked config, requests,
// collecting a channel's samples, random prompts.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "engine/llm_engine.h"
#include "fake_model_runner.h"

namespace folio::engine::testing {

inline EngineConfig config(std::int32_t blocks) {
  EngineConfig c;
  c.max_model_len = 128;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = 32;  // prompts are chunked
  c.block_size = 4;
  c.kv_cache_memory = std::int64_t{blocks} * 4000;  // FakeModelRunner: 1000 B a position
  return c;
}

struct Fixture {
  explicit Fixture(std::int32_t blocks = 256) : engine(runner, {kFakeVocab - 1}, config(blocks)) {}
  FakeModelRunner runner;
  LLMEngine engine;
};

inline EngineRequest request(std::uint64_t id, std::vector<TokenId> prompt, std::int32_t max_tokens,
                             std::int32_t n = 1) {
  EngineRequest r;
  r.id = RequestId{id};
  r.prompt = std::move(prompt);
  r.params.temperature = 0;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  r.n = n;
  return r;
}

struct Sample {
  std::vector<TokenId> tokens;
  FinishReason finish = FinishReason::kNone;
};

inline std::vector<Sample> collect(const std::vector<RequestOutput>& items, std::int32_t n) {
  std::vector<Sample> out(static_cast<std::size_t>(n));
  for (const RequestOutput& o : items)
    for (const SampleDelta& d : o.samples) {
      auto& s = out.at(static_cast<std::size_t>(d.index));
      s.tokens.insert(s.tokens.end(), d.token_ids.begin(), d.token_ids.end());
      if (d.finish != FinishReason::kNone) s.finish = d.finish;
    }
  return out;
}

inline std::vector<TokenId> random_prompt(std::mt19937& rng, std::size_t len) {
  std::vector<TokenId> p(len);
  for (auto& t : p) t = std::uniform_int_distribution<TokenId>(1, kFakeVocab - 2)(rng);
  return p;
}

}  // namespace folio::engine::testing
