// cli/engine_flags.h: the engine flags (vLLM names) and model loading shared
// by every command that runs the paged engine (generate, bench throughput,
// serve).
//
//   EngineFlags f;  add_engine_flags(sub, f);   ... after parsing:
//   auto m = load_engine_model(path, f);
//   auto e = make_engine(*m, f);     // e->core: the engine; e->runner: the model runner
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_config.h"
#include "engine/llm_engine.h"
#include "engine/paged_model_runner.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

struct EngineFlags {
  int max_model_len = 0;  // 0: the model's context length
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  int long_prefill_token_threshold = 0;
  int block_size = 16;
  std::string kv_cache_memory;  // "" : default (see engine/kv_budget.h)
  std::string kv_cache_dtype = "auto";
  bool enable_prefix_caching = true;
  std::string scheduling_policy = "fcfs";
  int threads = 0;                 // 0: all hardware threads
  int activation_bits = 16;        // the model's matmul activation width (16 or 8)
  std::string speculative_config;  // JSON (spec/speculative_config.h); "" : off
  int attention_window = 0;        // sink + window attention for every request; 0: off
  int attention_sinks = -1;        // -1: default_sinks(window) (base/attention_window.h)
};

// Adds --max-model-len, --max-num-seqs, --max-num-batched-tokens,
// --block-size, --kv-cache-memory, --kv-cache-dtype,
// --enable-prefix-caching / --no-enable-prefix-caching,
// --scheduling-policy, --speculative-config, --attention-window,
// --attention-sinks, -t/--threads and --activation-bits to `sub`.
void add_engine_flags(CLI::App* sub, EngineFlags& f);

// --attention-window and --attention-sinks alone (for `perplexity`), and
// their check (throws folio::Error naming the flag; sinks -1: the default).
void add_attention_window_flags(CLI::App* sub, int& window, int& sinks);
AttentionWindow to_attention_window(int window, int sinks);

// --activation-bits alone (for commands that load a model without the engine).
void add_activation_bits_flag(CLI::App* sub, int& bits);

// Throws folio::Error for values the engine cannot use (naming the flag).
engine::EngineConfig to_engine_config(const EngineFlags& f);

// A model ready for the engine: the mapped file, weights, tokenizer and the
// end-of-generation ids (EOS, and EOT when different).
struct EngineModel {
  std::unique_ptr<gguf::GgufFile> file;  // heap: the weights view its mapping
  model::Model model;
  tokenizer::Tokenizer tok;
  std::vector<TokenId> eos;
};

// The model loads with f.activation_bits (validated here).
std::unique_ptr<EngineModel> load_engine_model(const std::string& path, const EngineFlags& f);

// The draft model of `config` (method draft_model: loaded from its "model"
// path with f's activation bits, its vocabulary checked against m's); null
// for every other method. Throws folio::Error naming the path.
std::unique_ptr<EngineModel> load_draft_model(const EngineModel& m, const EngineFlags& f,
                                              const engine::EngineConfig& config);

// The model runner (f.threads kernel threads) and the engine core over it,
// with the draft model when the config names one. Not movable: the core
// refers to the runner, the runner to the draft.
struct EngineStack {
  // `pool`: kernel threads shared with other engines (null: f.threads of its own).
  EngineStack(const EngineModel& m, const EngineFlags& f, const engine::EngineConfig& config,
              std::shared_ptr<kernels::ThreadPool> pool = nullptr);
  EngineStack(const EngineStack&) = delete;
  EngineStack& operator=(const EngineStack&) = delete;

  std::unique_ptr<EngineModel> draft;  // method draft_model; else null
  engine::PagedModelRunner runner;
  engine::LLMEngine core;
};

// Throws folio::Error (naming the flag) for values the engine cannot use.
std::unique_ptr<EngineStack> make_engine(const EngineModel& m, const EngineFlags& f);

// A kernel thread pool of `threads` threads (0: every hardware thread).
std::shared_ptr<kernels::ThreadPool> make_thread_pool(int threads);

// The engine in one line: KV blocks, bytes and dtype, limits, threads,
// activation width, speculative decoding.
std::string engine_summary(const EngineStack& e);

// "folio: engine: <engine_summary>" on stderr, then the KV layer groups and
// attention window when the model or flags have them.
void print_engine_summary(const EngineStack& e);

// "speculative decoding: 120 drafts, 480 draft tokens, 301 accepted (62.7%),
// mean accepted length 3.51, by position 0.91 0.72 0.48 0.40, row cost
// 0.12[, draft cost 0.21]"; "" when off. Mean accepted length is vLLM's: 1 +
// accepted / drafts, the tokens one verification round yields; the row and
// draft costs are what the adaptive rule charges a verification row and a
// model drafter's forward (spec/row_cost.h, spec/draft_cost.h).
std::string spec_summary(const engine::EngineStats& s);

}  // namespace folio::cli
