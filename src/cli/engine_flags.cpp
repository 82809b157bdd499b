#include "cli/engine_flags.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "base/error.h"
#include "cli/model_file.h"
#include "kv/kv_groups.h"
#include "kv/kv_sizing.h"
#include "spec/draft_vocabulary.h"
#include "spec/speculative_config.h"
#include "tokenizer/vocab.h"

namespace folio::cli {

void add_engine_flags(CLI::App* sub, EngineFlags& f) {
  sub->add_option("--max-model-len", f.max_model_len,
                  "Max prompt + output tokens per request (0: the model's context)")
      ->capture_default_str();
  sub->add_option("--max-num-seqs", f.max_num_seqs, "Max sequences running at once")
      ->capture_default_str();
  sub->add_option("--max-num-batched-tokens", f.max_num_batched_tokens,
                  "Token budget of one engine step")
      ->capture_default_str();
  sub->add_option("--long-prefill-token-threshold", f.long_prefill_token_threshold,
                  "Max prompt tokens one request computes per step (0: off); lower values "
                  "trade a later first token for shorter steps beside running decodes")
      ->capture_default_str();
  sub->add_option("--block-size", f.block_size, "Tokens per KV block")->capture_default_str();
  sub->add_option("--kv-cache-memory", f.kv_cache_memory,
                  "KV cache size, e.g. 2GiB (default: min(25% of available RAM, what "
                  "max-num-seqs x max-model-len needs))");
  sub->add_option("--kv-cache-dtype", f.kv_cache_dtype, "auto (f16), f16, f32, int8 or int4")
      ->capture_default_str();
  sub->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", f.enable_prefix_caching,
                "Reuse the KV of shared prompt prefixes (default on)");
  sub->add_option("--scheduling-policy", f.scheduling_policy, "fcfs or priority")
      ->capture_default_str();
  sub->add_option("--speculative-config", f.speculative_config,
                  "Speculative decoding, one JSON object as vLLM spells it, e.g. "
                  "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
                  "\"prompt_lookup_max\": 4, \"prompt_lookup_min\": 2}' (default off)");
  add_attention_window_flags(sub, f.attention_window, f.attention_sinks);
  sub->add_option("-t,--threads", f.threads, "Kernel threads (0: all cores)")
      ->capture_default_str();
  add_activation_bits_flag(sub, f.activation_bits);
}

void add_attention_window_flags(CLI::App* sub, int& window, int& sinks) {
  sub->add_option("--attention-window", window,
                  "Sink + window attention (StreamingLLM) for any model: each query reads the "
                  "first --attention-sinks positions and the last N; KV between them is freed, "
                  "so memory stays flat on long documents. Changes outputs (0: off)")
      ->capture_default_str();
  sub->add_option("--attention-sinks", sinks,
                  "Leading positions every query keeps reading under --attention-window "
                  "(default 4, at most the window)");
}

AttentionWindow to_attention_window(int window, int sinks) {
  if (window < 0) throw Error("--attention-window must be >= 0 (0: off)");
  if (window == 0) {
    if (sinks >= 0) throw Error("--attention-sinks needs --attention-window");
    return {};
  }
  if (sinks < 0) sinks = default_sinks(window);
  if (sinks > window) {
    throw Error("--attention-sinks must be between 0 and --attention-window (" +
                std::to_string(window) + ")");
  }
  return {window, sinks};
}

void add_activation_bits_flag(CLI::App* sub, int& bits) {
  sub->add_option("--activation-bits", bits,
                  "Matmul activation width: 16 (reference-grade logits) or 8 (llama.cpp's "
                  "precision, ~1.3-1.7x faster prefill and batched decode)")
      ->capture_default_str();
}

engine::EngineConfig to_engine_config(const EngineFlags& f) {
  engine::EngineConfig c;
  if (f.max_model_len < 0) throw Error("--max-model-len must be >= 0");
  c.max_model_len = f.max_model_len;
  c.max_num_seqs = f.max_num_seqs;
  c.max_num_batched_tokens = f.max_num_batched_tokens;
  c.long_prefill_token_threshold = f.long_prefill_token_threshold;
  c.block_size = f.block_size;
  if (!f.kv_cache_memory.empty()) c.kv_cache_memory = kv::parse_byte_size(f.kv_cache_memory);
  c.kv_cache_dtype = kernels::parse_kv_dtype(f.kv_cache_dtype);
  c.enable_prefix_caching = f.enable_prefix_caching;
  if (f.scheduling_policy == "fcfs") {
    c.scheduling_policy = sched::SchedulingPolicy::kFcfs;
  } else if (f.scheduling_policy == "priority") {
    c.scheduling_policy = sched::SchedulingPolicy::kPriority;
  } else {
    throw Error("--scheduling-policy " + f.scheduling_policy + ": expected fcfs or priority");
  }
  if (f.threads < 0) throw Error("-t/--threads must be >= 0");
  c.speculative = spec::parse_speculative_config(f.speculative_config);
  c.attention_window = to_attention_window(f.attention_window, f.attention_sinks);
  return c;
}

namespace {

// The tokenizer loads first, so that a draft whose vocabulary differs from
// `same_vocab_as` fails, named, before its weights load.
std::unique_ptr<EngineModel> load_model(const std::string& path, const EngineFlags& f,
                                        const tokenizer::Vocab* same_vocab_as) {
  model::LoadOptions options;
  options.activation_bits = kernels::parse_activation_bits(f.activation_bits);
  auto file = std::make_unique<gguf::GgufFile>(open_model_file(path));
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  if (same_vocab_as != nullptr) spec::check_draft_vocabulary(*same_vocab_as, tok.vocab());
  auto model = model::Model::load(*file, options);
  std::vector<TokenId> eos;
  const auto& sp = tok.vocab().special();
  if (sp.eos) eos.push_back(*sp.eos);
  if (sp.eot && sp.eot != sp.eos) eos.push_back(*sp.eot);
  return std::make_unique<EngineModel>(
      EngineModel{std::move(file), std::move(model), std::move(tok), std::move(eos)});
}

}  // namespace

std::unique_ptr<EngineModel> load_engine_model(const std::string& path, const EngineFlags& f) {
  return load_model(path, f, nullptr);
}

std::unique_ptr<EngineModel> load_draft_model(const EngineModel& m, const EngineFlags& f,
                                              const engine::EngineConfig& config) {
  if (config.speculative.method != spec::SpecMethod::kDraftModel) return nullptr;
  const std::string& path = config.speculative.draft_model;
  try {
    return load_model(path, f, &m.tok.vocab());
  } catch (const Error& e) {
    throw Error("--speculative-config: draft model " + path + ": " + e.what());
  }
}

namespace {

// The config with what speculative decoding needs of the runner set up
// (layer_skip and draft_model: the drafter) and resolved.
engine::EngineConfig with_drafter(engine::PagedModelRunner& runner, engine::EngineConfig c,
                                  const EngineModel* draft) {
  c.speculative = runner.configure_speculation(c.speculative, draft ? &draft->model : nullptr);
  return c;
}

}  // namespace

std::shared_ptr<kernels::ThreadPool> make_thread_pool(int threads) {
  if (threads < 0) throw Error("-t/--threads must be >= 0");
  const int n =
      threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::make_shared<kernels::ThreadPool>(n);
}

EngineStack::EngineStack(const EngineModel& m, const EngineFlags& f,
                         const engine::EngineConfig& config,
                         std::shared_ptr<kernels::ThreadPool> pool)
    : draft(load_draft_model(m, f, config)),
      runner(m.model, pool ? std::move(pool) : make_thread_pool(f.threads)),
      core(runner, m.eos, with_drafter(runner, config, draft.get())) {}

std::unique_ptr<EngineStack> make_engine(const EngineModel& m, const EngineFlags& f) {
  return std::make_unique<EngineStack>(m, f, to_engine_config(f));
}

std::string engine_summary(const EngineStack& e) {
  const engine::EngineConfig& c = e.core.config();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%d KV blocks x %d tokens (%.1f MiB, %s), max-model-len %d, max-num-seqs %d, "
                "max-num-batched-tokens %d, prefix caching %s, %d threads, %d-bit activations, ",
                e.core.num_kv_blocks(), c.block_size,
                static_cast<double>(e.core.kv_bytes()) / (1 << 20),
                kernels::kv_dtype_name(c.kv_cache_dtype), c.max_model_len, c.max_num_seqs,
                c.max_num_batched_tokens, c.enable_prefix_caching ? "on" : "off",
                e.runner.threads(), static_cast<int>(e.runner.model().activation_bits()));
  // The speculative part may name a draft model's path: appended, never truncated.
  return buf + ("speculative decoding " + c.speculative.describe());
}

void print_engine_summary(const EngineStack& e) {
  const engine::EngineConfig& c = e.core.config();
  std::fprintf(stderr, "folio: engine: %s\n", engine_summary(e).c_str());
  const std::vector<kv::KvGroup> groups = e.runner.kv_groups();
  const auto sliding = std::count_if(groups.begin(), groups.end(),
                                     [](const kv::KvGroup& g) { return g.window > 0; });
  const AttentionWindow& w = c.attention_window;
  if (sliding == 0 && !w.on()) return;
  // The window saving, as admission counts it (kv/kv_groups.h).
  const std::int64_t per_seq = e.core.scheduler().max_blocks(c.max_model_len, w);
  const std::int64_t all = kv::every_position_blocks(groups, c.block_size, c.max_model_len);
  const double block_mib =
      static_cast<double>(e.core.kv_bytes()) / e.core.num_kv_blocks() / (1 << 20);
  std::string what;
  if (sliding > 0) {
    what = "KV layer groups: " + std::to_string(groups.size() - static_cast<std::size_t>(sliding)) +
           " full + " + std::to_string(sliding) + " sliding (window " +
           std::to_string(groups.back().window) + "), " +
           std::to_string(e.runner.cache()->groups().slots) + " layers per block";
  }
  if (w.on()) {
    what += (what.empty() ? "" : "; ") + std::string("attention window ") +
            std::to_string(w.window) + " + " + std::to_string(w.sinks) +
            " sinks for requests that do not set one (changes outputs)";
  }
  std::fprintf(stderr,
               "folio: %s; a %d-token sequence holds at most %lld blocks (%.1f MiB; every "
               "position kept: %lld blocks, %.1f MiB): %lld such sequences fit at once (%lld "
               "without the window)\n",
               what.c_str(), c.max_model_len, static_cast<long long>(per_seq),
               block_mib * static_cast<double>(per_seq), static_cast<long long>(all),
               block_mib * static_cast<double>(all),
               static_cast<long long>(e.core.num_kv_blocks() / per_seq),
               static_cast<long long>(e.core.num_kv_blocks() / all));
}

std::string spec_summary(const engine::EngineStats& s) {
  if (s.spec_accepted_per_pos.empty()) return "";
  const auto drafts = static_cast<double>(s.spec_num_drafts);
  const auto tokens = static_cast<double>(s.spec_num_draft_tokens);
  const auto accepted = static_cast<double>(s.spec_num_accepted_tokens);
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "speculative decoding: %llu drafts, %llu draft tokens, %llu accepted (%.1f%%), mean "
      "accepted length %.2f, by position",
      static_cast<unsigned long long>(s.spec_num_drafts),
      static_cast<unsigned long long>(s.spec_num_draft_tokens),
      static_cast<unsigned long long>(s.spec_num_accepted_tokens),
      tokens > 0 ? 100.0 * accepted / tokens : 0.0, drafts > 0 ? 1.0 + accepted / drafts : 0.0);
  std::string out = buf;
  for (std::uint64_t a : s.spec_accepted_per_pos) {
    std::snprintf(buf, sizeof buf, " %.2f", drafts > 0 ? static_cast<double>(a) / drafts : 0.0);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, ", row cost %.2f", s.spec_row_cost);
  out += buf;
  if (s.spec_draft_cost > 0) {
    std::snprintf(buf, sizeof buf, ", draft cost %.2f", s.spec_draft_cost);
    out += buf;
  }
  return out;
}

}  // namespace folio::cli
