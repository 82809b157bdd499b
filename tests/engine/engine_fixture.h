// tests/engine/engine_fixture.h: the real SmolLM2 model, loaded once per
// test binary, and small helpers to run requests through an LLMEngine.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/llm_engine.h"
#include "engine/paged_model_runner.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "request_helpers.h"
#include "tokenizer/tokenizer.h"

namespace folio::engine::testing {

struct Loaded {
  std::unique_ptr<gguf::GgufFile> file;  // heap: the weights view its mapping
  model::Model model;
  tokenizer::Tokenizer tok;
  std::vector<TokenId> eos;
};

// Loads models/<file> (run scripts/setup to download it).
inline std::unique_ptr<Loaded> load_model(const std::string& file) {
  const char* env = std::getenv("FOLIO_SOURCE_DIR");
  const std::string dir = env != nullptr ? env : FOLIO_SOURCE_DIR;
  const std::string path = dir + "/models/" + file;
  if (!std::filesystem::exists(path))
    throw Error("test model " + path + " is missing: run scripts/setup to download it");
  auto f = std::make_unique<gguf::GgufFile>(gguf::GgufFile::open(path));
  auto model = model::Model::load(*f);
  auto tok = tokenizer::Tokenizer::from_gguf(*f);
  std::vector<TokenId> eos;
  if (tok.vocab().special().eos) eos.push_back(*tok.vocab().special().eos);
  return std::make_unique<Loaded>(Loaded{std::move(f), std::move(model), std::move(tok), eos});
}

inline const Loaded& smollm() {
  static const std::unique_ptr<Loaded> loaded = load_model("SmolLM2-135M-Instruct.Q4_1.gguf");
  return *loaded;
}

// Windows over the paged engine (the window tests): a pool of exactly
// `blocks` blocks of `block_size` positions of f32 K/V (the contiguous
// greedy references are f32), steps of `chunk` tokens, 4 sequences.
inline EngineConfig window_test_config(const model::Model& m, std::int64_t blocks,
                                       std::int32_t max_model_len, std::int32_t chunk,
                                       std::int32_t block_size) {
  EngineConfig c;
  c.max_model_len = max_model_len;
  c.max_num_seqs = 4;
  c.max_num_batched_tokens = chunk;
  c.block_size = block_size;
  c.kv_cache_dtype = kernels::KvDtype::kF32;
  PagedModelRunner probe(m, 1);
  c.kv_cache_memory = blocks * probe.kv_bytes_per_block(block_size, c.kv_cache_dtype);
  return c;
}

inline EngineConfig small_config() {
  EngineConfig c;
  c.max_model_len = 256;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = 64;
  c.block_size = 4;  // many blocks per sequence: tables, partial blocks, COW all exercised
  c.kv_cache_memory = 32ll << 20;
  return c;
}

// The real runner (2 kernel threads) and the engine core over it: the
// runner is a base so that it is built before the engine that refers to it.
struct RunnerHolder {
  PagedModelRunner runner{smollm().model, 2};
};
// What c.speculative needs of the runner is set up first (the layer_skip
// or draft_model drafter; `draft`: the draft model), as the CLI's
// EngineStack does.
struct RealEngine : RunnerHolder, LLMEngine {
  explicit RealEngine(const EngineConfig& c, const model::Model* draft = nullptr)
      : LLMEngine(runner, smollm().eos, with_drafter(runner, c, draft)) {}

 private:
  static EngineConfig with_drafter(PagedModelRunner& r, EngineConfig c, const model::Model* draft) {
    c.speculative = r.configure_speculation(c.speculative, draft);
    return c;
  }
};

inline std::unique_ptr<RealEngine> make_engine(const EngineConfig& c,
                                               const model::Model* draft = nullptr) {
  return std::make_unique<RealEngine>(c, draft);
}

inline std::vector<TokenId> random_prompt(std::uint32_t seed, std::size_t len) {
  std::vector<TokenId> p;
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < len; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    p.push_back(static_cast<TokenId>(200 + s % 20000));  // ordinary tokens, no specials
  }
  return p;
}

}  // namespace folio::engine::testing
