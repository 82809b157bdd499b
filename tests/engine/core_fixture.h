// tests/engine/core_fixture.h: the engine core over FakeModelRunner (no
// model) and the helpers its tests share: a small chunked config, requests
// (and, from request_helpers.h, collecting a channel's samples), random prompts.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "engine/llm_engine.h"
#include "fake_model_runner.h"
#include "request_helpers.h"

namespace folio::engine::testing {

inline EngineConfig config(std::int32_t blocks, std::int32_t max_num_seqs = 16,
                           std::int32_t max_num_batched_tokens = 32) {
  EngineConfig c;
  c.max_model_len = 128;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = max_num_batched_tokens;  // prompts are chunked
  c.block_size = 4;
  c.kv_cache_memory = std::int64_t{blocks} * 4000;  // FakeModelRunner: 1000 B a position
  return c;
}

struct Fixture {
  explicit Fixture(std::int32_t blocks = 256) : engine(runner, {kFakeVocab - 1}, config(blocks)) {}
  FakeModelRunner runner;
  LLMEngine engine;
};

// A greedy request of max_tokens tokens, EOS ignored.
inline EngineRequest request(std::uint64_t id, std::vector<TokenId> prompt, std::int32_t max_tokens,
                             std::int32_t n = 1) {
  return req(id, std::move(prompt), greedy(max_tokens), n);
}

inline std::vector<TokenId> random_prompt(std::mt19937& rng, std::size_t len) {
  std::vector<TokenId> p(len);
  for (auto& t : p) t = std::uniform_int_distribution<TokenId>(1, kFakeVocab - 2)(rng);
  return p;
}

}  // namespace folio::engine::testing
