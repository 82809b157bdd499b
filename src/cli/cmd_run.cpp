// `folio run [-m MODEL] -p TEXT [-n N] ...`: generate a continuation of one
// prompt, streamed to stdout as it is produced.
//
// By default the prompt is wrapped as one user message in the model's own
// chat template (tokenizer.chat_template), so instruct models answer it;
// --raw feeds the text as is. Generated text goes to stdout through the
// streaming detokenizer (never a broken UTF-8 sequence); logs and the
// load / prompt / generation statistics go to stderr. --json-schema,
// --grammar or --regex constrain the output (structured output); with them,
// as with --speculative-config, the prompt runs through the paged engine.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "chat/chat_template.h"
#include "cli/commands.h"
#include "cli/constraint_flags.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "cli/model_file.h"
#include "cli/model_template.h"
#include "engine/output_processor.h"
#include "gguf/gguf_file.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_error.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "sampling/stop_conditions.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

namespace {

struct RunArgs {
  std::string model;
  std::string prompt;
  int n_predict = 256;
  float temp = 0.8f;
  int top_k = 40;
  float top_p = 0.95f;
  std::optional<std::uint64_t> seed;
  int threads = 0;  // 0: all cores
  std::string precision = "fast";
  int activation_bits = 16;
  bool raw = false;
  std::string speculative_config;  // non-empty: through the engine, with drafts
  ConstraintFlags constraint;      // set: through the engine, constrained
};

int default_threads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// The prompt as the model should see it: the chat template applied unless
// --raw or the model has none.
std::vector<TokenId> prompt_tokens(const RunArgs& a, const gguf::GgufFile& file,
                                   const tokenizer::Tokenizer& tok) {
  const auto tmpl = model_chat_template(file);
  if (a.raw || !tmpl) return tok.encode(a.prompt, {.add_special = true, .parse_special = false});
  chat::RenderOptions ro;
  const auto& sp = tok.vocab().special();
  if (sp.bos) ro.bos_token = tok.vocab().text(*sp.bos);
  if (sp.eos) ro.eos_token = tok.vocab().text(*sp.eos);
  const std::vector<chat::ChatMessage> messages = {{"user", a.prompt}};
  const std::string text = chat::ChatTemplate(std::string(*tmpl)).render(messages, ro);
  // As transformers' apply_chat_template: the template places any BOS itself.
  return tok.encode(text, {.add_special = false, .parse_special = true});
}

std::vector<TokenId> eos_ids(const tokenizer::Vocab& v) {
  std::vector<TokenId> ids;
  if (v.special().eos) ids.push_back(*v.special().eos);
  if (v.special().eot && v.special().eot != v.special().eos) ids.push_back(*v.special().eot);
  return ids;
}

sampling::SamplingParams sampling_params(const RunArgs& a) {
  sampling::SamplingParams p;
  p.temperature = a.temp;
  p.top_k = a.top_k;
  p.top_p = a.top_p;
  p.seed = a.seed;
  p.max_tokens = a.n_predict;
  return p;
}

// --speculative-config: the same generation through the paged engine, whose
// step verifies the drafts (spec/), streamed by the one output processor.
int run_on_engine(const RunArgs& a) {
  if (a.precision != "fast") {
    throw Error(
        "--speculative-config and the output constraints run on the engine, which uses "
        "--precision fast");
  }
  EngineFlags f;
  f.threads = a.threads;
  f.activation_bits = a.activation_bits;
  f.speculative_config = a.speculative_config;
  f.max_num_seqs = 1;
  Stopwatch load_time;
  const std::unique_ptr<EngineModel> m = load_engine_model(resolve_model_path(a.model), f);
  const auto prompt = prompt_tokens(a, *m->file, m->tok);
  if (prompt.empty()) throw Error("the prompt is empty after tokenization");
  f.max_model_len = static_cast<int>(prompt.size()) + std::max(a.n_predict, 1);
  f.kv_cache_memory = "256MiB";
  const std::unique_ptr<EngineStack> e = make_engine(*m, f);
  std::fprintf(stderr, "folio: loaded %s in %.2f s\n", m->file->source().c_str(),
               load_time.seconds());
  print_engine_summary(*e);
  if (a.n_predict == 0) return 0;
  engine::EngineRequest r;
  r.id = engine::RequestId{1};
  r.prompt = prompt;
  r.params = sampling_params(a);
  if (const auto spec = constraint_from_flags(a.constraint)) {
    try {
      r.grammar = std::make_shared<const grammar::CompiledGrammar>(
          grammar::parse_gbnf(grammar::to_gbnf(*spec)),
          grammar::TokenVocab::from_tokenizer(m->tok));
    } catch (const grammar::GrammarError& err) {
      throw Error(std::string("the output constraint: ") + err.what());
    }
  }
  engine::OutputProcessor out(m->tok, r.params, 1);
  auto channel = e->core.add_request(std::move(r));
  Stopwatch gen_time;
  std::size_t n_gen = 0;
  while (!out.finished() && e->core.has_unfinished()) {
    e->core.step();
    for (const engine::RequestOutput& o : channel->drain()) {
      if (!o.error.empty()) throw Error(o.error);
      for (const engine::TextDelta& d : out.apply(o)) {
        n_gen += d.token_ids.size();
        std::fwrite(d.text.data(), 1, d.text.size(), stdout);
      }
    }
    std::fflush(stdout);
  }
  std::fputc('\n', stdout);
  const double gen_s = gen_time.seconds();
  std::fprintf(stderr, "folio: prompt %zu tokens; generated %zu tokens in %.3f s (%.1f t/s)\n",
               prompt.size(), n_gen, gen_s, static_cast<double>(n_gen) / std::max(gen_s, 1e-9));
  if (const std::string spec = spec_summary(e->core.stats()); !spec.empty())
    std::fprintf(stderr, "folio: %s\n", spec.c_str());
  return 0;
}

int run(const RunArgs& a) {
  if (a.n_predict < 0) throw Error("-n must be >= 0");
  if (!a.speculative_config.empty() || constraint_from_flags(a.constraint)) return run_on_engine(a);
  const int threads = a.threads > 0 ? a.threads : default_threads();
  Stopwatch load_time;
  const auto file = open_model_file(resolve_model_path(a.model));
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const model::Model m = model::Model::load(
      file,
      {model::parse_precision(a.precision), kernels::parse_activation_bits(a.activation_bits)});
  std::fprintf(stderr, "folio: loaded %s (%s, %u layers, %s precision, %zu repacked) in %.2f s\n",
               file.source().c_str(), m.config().arch.c_str(), m.config().n_layer,
               std::string(model::precision_name(m.precision())).c_str(), m.repacked(),
               load_time.seconds());

  const auto prompt = prompt_tokens(a, file, tok);
  if (prompt.empty()) throw Error("the prompt is empty after tokenization");
  const std::size_t ctx = prompt.size() + static_cast<std::size_t>(a.n_predict);
  if (ctx > m.config().n_ctx_train && m.config().n_ctx_train > 0) {
    throw Error("prompt (" + std::to_string(prompt.size()) + " tokens) + -n " +
                std::to_string(a.n_predict) + " exceeds the model's context of " +
                std::to_string(m.config().n_ctx_train) + " tokens");
  }
  kernels::ThreadPool pool(threads);
  model::ContiguousKvCache kv(m.config(), 1, ctx);
  model::Workspace ws;
  const auto eos = eos_ids(tok.vocab());
  sampling::Sampler sampler(sampling_params(a), static_cast<std::int32_t>(m.n_vocab()), eos,
                            prompt);
  tokenizer::StreamingDetokenizer detok(tok, {.render_special = false});

  model::Batch batch;
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    batch.add(prompt[i], static_cast<std::int32_t>(i), 0, i + 1 == prompt.size());
  }
  Stopwatch prompt_time;
  auto logits = m.forward(batch, kv, ws, pool);
  const double prompt_s = prompt_time.seconds();

  Stopwatch gen_time;
  std::int32_t n_gen = 0;
  for (std::size_t pos = prompt.size(); n_gen < a.n_predict; ++pos) {
    const TokenId t = sampler.sample(logits).id;
    sampler.accept(t);
    ++n_gen;
    const auto stop = sampling::check_token_stop(sampler.params(), eos, t, n_gen);
    if (stop == FinishReason::kStop) break;  // EOS or a stop token: not rendered
    const std::string text = detok.push(t);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (stop != FinishReason::kNone) break;  // max tokens, after rendering the last
    batch.clear();
    batch.add(t, static_cast<std::int32_t>(pos), 0, true);
    logits = m.forward(batch, kv, ws, pool);
  }
  const std::string rest = detok.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  const double gen_s = gen_time.seconds();
  std::fprintf(stderr,
               "folio: prompt %zu tokens in %.3f s (%.1f t/s); generated %d tokens in "
               "%.3f s (%.1f t/s); %d threads\n",
               prompt.size(), prompt_s, static_cast<double>(prompt.size()) / prompt_s, n_gen, gen_s,
               n_gen / std::max(gen_s, 1e-9), threads);
  return 0;
}

}  // namespace

Command register_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Generate a continuation of a prompt (streams to stdout)");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-p,--prompt", a->prompt, "Prompt text")->required();
  sub->add_option("-n,--n-predict", a->n_predict, "Maximum tokens to generate")
      ->capture_default_str();
  sub->add_option("--temp", a->temp, "Temperature (0 = greedy)")->capture_default_str();
  sub->add_option("--top-k", a->top_k, "Top-k (0 = off)")->capture_default_str();
  sub->add_option("--top-p", a->top_p, "Top-p (1 = off)")->capture_default_str();
  sub->add_option("--seed", a->seed, "Random seed (reproducible sampling)");
  sub->add_option("-t,--threads", a->threads, "Threads (default: all cores)");
  sub->add_option("--precision", a->precision, "fast (quantized kernels) or ref (f32 reference)")
      ->capture_default_str();
  add_activation_bits_flag(sub, a->activation_bits);
  sub->add_flag("--raw", a->raw, "Do not apply the model's chat template to the prompt");
  sub->add_option("--speculative-config", a->speculative_config,
                  "Speculative decoding (JSON, as on serve); runs the prompt through the engine");
  add_constraint_flags(sub, a->constraint);
  return {sub, [a]() { return run(*a); }};
}

}  // namespace folio::cli
