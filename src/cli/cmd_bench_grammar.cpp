// `folio bench grammar -m MODEL CONSTRAINT --text FILE`: what constrained
// decoding costs per token.
//
// The text (a document the constraint admits, e.g. a JSON instance of the
// schema) is tokenized with the model's tokenizer; the matcher then walks
// it token by token, filling the next-token mask before each token (and
// checking the token is in it, an error otherwise), as a request would.
// Reported: the compile time (constraint -> GBNF -> grammar), the first
// walk (the mask cache fills as positions are first met) and -r warm walks
// (cache filled): the mask time per token (median, mean, p99, max) and the
// cache's size. bench/grammar_mask.py runs xgrammar on the same tokens.
//
// --decode 1,16: what constraining costs the engine. For each concurrency
// c, c requests (the prompt --prompt as a chat message, sampled at
// --decode-temperature (0.8) with seeds 1..c, --decode-output tokens each) run through
// the paged engine constrained and unconstrained (ignore_eos), alternating
// which goes first, -r times; reported: output tokens/s of each (median)
// and the ratio. Pick a constraint that cannot be complete within
// --decode-output tokens (e.g. an array with many items), so both runs
// generate the same number of tokens. The grammar's mask cache is warmed
// first by a run with the same seeds (a server keeps it across requests
// with the same schema); that first run's tokens/s is printed too.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "chat/chat_template.h"
#include "cli/commands.h"
#include "cli/count_list.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "cli/model_file.h"
#include "cli/model_template.h"
#include "cli/text_file.h"
#include "engine/llm_engine.h"
#include "grammar/compiled_grammar.h"
#include "grammar/constraint.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace folio::cli {

namespace {

struct BenchGrammarArgs {
  std::string model, json_schema, gbnf, regex, text;
  bool json_object = false;
  int repetitions = 5;
  bool json_out = false;
  std::string decode;  // concurrencies, e.g. "1,16"; empty: no decode run
  int decode_output = 128;
  float decode_temperature = 0.8f;
  std::string prompt = "List people as JSON.";
  EngineFlags engine;
};

// The file's bytes; an error names the flag that gave it.
std::string read_file(const std::string& path, const char* flag) {
  try {
    return read_text_file(path);
  } catch (const Error& e) {
    throw Error(std::string(flag) + ": " + e.what());
  }
}

struct WalkStats {
  double total_s = 0, median_us = 0, mean_us = 0, p99_us = 0, max_us = 0;
};

WalkStats stats_of(std::vector<double> us) {
  WalkStats s;
  if (us.empty()) return s;
  for (const double v : us) s.total_s += v * 1e-6;
  std::ranges::sort(us);
  s.median_us = us[us.size() / 2];
  s.mean_us = s.total_s * 1e6 / static_cast<double>(us.size());
  s.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  s.max_us = us.back();
  return s;
}

// One walk over `ids`; the mask time of each step in microseconds.
std::vector<double> walk(const std::shared_ptr<const grammar::CompiledGrammar>& cg,
                         const std::vector<TokenId>& ids, const std::vector<TokenId>& stops,
                         const tokenizer::Tokenizer& tok) {
  grammar::GrammarMatcher m(cg, stops);
  std::vector<std::uint64_t> mask(m.mask_words());
  std::vector<double> us;
  for (std::size_t i = 0; i <= ids.size(); ++i) {
    Stopwatch clock;
    m.fill_mask(mask);
    us.push_back(clock.seconds() * 1e6);
    if (i == ids.size()) break;
    const auto u = static_cast<std::size_t>(ids[i]);
    if (!((mask[u / 64] >> (u % 64)) & 1) || !m.accept_token(ids[i])) {
      throw Error("--text: token " + std::to_string(i) + " ('" + tok.token_to_piece(ids[i]) +
                  "') is not allowed by the constraint there");
    }
  }
  if (!m.can_end()) throw Error("--text: the constraint cannot end after the whole text");
  return us;
}

// One run of `c` requests; output tokens/s.
double decode_run(engine::LLMEngine& e, const std::vector<TokenId>& prompt, int c, int max_tokens,
                  float temperature, const std::shared_ptr<const grammar::CompiledGrammar>& g,
                  std::uint64_t& next_id, std::size_t& short_outputs) {
  std::vector<std::shared_ptr<engine::OutputChannel>> chans;
  Stopwatch clock;
  for (int i = 0; i < c; ++i) {
    engine::EngineRequest r;
    r.id = engine::RequestId{next_id++};
    r.prompt = prompt;
    r.params.temperature = temperature;
    r.params.seed = static_cast<std::uint64_t>(i + 1);
    r.params.max_tokens = max_tokens;
    r.params.ignore_eos = g == nullptr;
    r.grammar = g;
    chans.push_back(e.add_request(std::move(r)));
  }
  e.run_until_idle();
  const double secs = clock.seconds();
  std::size_t tokens = 0;
  for (const auto& ch : chans) {
    std::size_t n = 0;
    for (const engine::RequestOutput& o : ch->drain()) {
      for (const engine::SampleDelta& d : o.samples) n += d.token_ids.size();
    }
    if (n < static_cast<std::size_t>(max_tokens)) ++short_outputs;
    tokens += n;
  }
  return static_cast<double>(tokens) / std::max(secs, 1e-9);
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v.empty() ? 0 : v[v.size() / 2];
}

void bench_decode(const BenchGrammarArgs& a, const grammar::ConstraintSpec& spec) {
  EngineFlags f = a.engine;
  const auto m = load_engine_model(resolve_model_path(a.model), f);
  const std::unique_ptr<EngineStack> stack = make_engine(*m, f);
  print_engine_summary(*stack);
  engine::LLMEngine& e = stack->core;
  const auto vocab = grammar::TokenVocab::from_tokenizer(m->tok);
  const auto g = std::make_shared<const grammar::CompiledGrammar>(
      grammar::parse_gbnf(grammar::to_gbnf(spec)), vocab);
  std::vector<TokenId> prompt = m->tok.encode(a.prompt, {.add_special = true});
  if (const auto tmpl = model_chat_template(*m->file)) {
    chat::RenderOptions ro;
    const auto& sp = m->tok.vocab().special();
    if (sp.bos) ro.bos_token = m->tok.vocab().text(*sp.bos);
    if (sp.eos) ro.eos_token = m->tok.vocab().text(*sp.eos);
    const std::vector<chat::ChatMessage> messages = {{"user", a.prompt}};
    const std::string text = chat::ChatTemplate(std::string(*tmpl)).render(messages, ro);
    prompt = m->tok.encode(text, {.add_special = false, .parse_special = true});
  }
  std::uint64_t next_id = 1;
  std::size_t short_outputs = 0;
  // The first constrained run of each concurrency fills the mask cache
  // (reported apart); the timed runs use the same seeds, so they see a warm
  // cache, as a server does once a schema has been used.
  std::vector<std::pair<int, double>> cold;
  for (const int c : parse_count_list("--decode", a.decode, "request count")) {
    cold.emplace_back(c, decode_run(e, prompt, c, a.decode_output, a.decode_temperature, g, next_id,
                                    short_outputs));
  }
  short_outputs = 0;
  std::printf(
      "decode (%d output tokens, temperature %.2f, -r %d; constrained outputs that ended "
      "early are counted below):\n",
      a.decode_output, static_cast<double>(a.decode_temperature), a.repetitions);
  std::printf("%12s %14s %14s %8s\n", "concurrency", "free tok/s", "constrained", "ratio");
  for (const int c : parse_count_list("--decode", a.decode, "request count")) {
    std::vector<double> free_tps, con_tps;
    for (int r = 0; r < a.repetitions; ++r) {
      const bool constrained_first = r % 2 == 1;
      for (int k = 0; k < 2; ++k) {
        const bool con = (k == 0) == constrained_first;
        const double tps = decode_run(e, prompt, c, a.decode_output, a.decode_temperature,
                                      con ? g : nullptr, next_id, short_outputs);
        (con ? con_tps : free_tps).push_back(tps);
      }
    }
    const double fm = median(free_tps), cm = median(con_tps);
    std::printf("%12d %14.1f %14.1f %7.3fx\n", c, fm, cm, cm / fm);
  }
  for (const auto& [c, tps] : cold) {
    std::printf("first constrained run at concurrency %d (mask cache filling): %.1f tok/s\n", c,
                tps);
  }
  std::printf("outputs shorter than %d tokens: %zu (free outputs ignore EOS)\n", a.decode_output,
              short_outputs);
}

int bench_grammar(const BenchGrammarArgs& a) {
  grammar::ConstraintSpec spec;
  int given = 0;
  if (!a.json_schema.empty()) {
    spec = {grammar::ConstraintKind::kJsonSchema, read_file(a.json_schema, "--json-schema"), {}};
    ++given;
  }
  if (!a.gbnf.empty()) {
    spec = {grammar::ConstraintKind::kGbnf, read_file(a.gbnf, "--gbnf"), {}};
    ++given;
  }
  if (!a.regex.empty()) {
    spec = {grammar::ConstraintKind::kRegex, a.regex, {}};
    ++given;
  }
  if (a.json_object) {
    spec = {grammar::ConstraintKind::kJsonObject, "", {}};
    ++given;
  }
  if (given != 1) throw Error("give one of --json-schema, --gbnf, --regex, --json-object");
  if (!a.decode.empty()) {
    bench_decode(a, spec);
    return 0;
  }
  if (a.text.empty()) throw Error("--text is required (or --decode)");
  const std::string text = read_file(a.text, "--text");

  const auto file = open_model_file(resolve_model_path(a.model));
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const std::vector<TokenId> ids = tok.encode(text);
  std::vector<TokenId> stops;
  if (const auto eos = tok.vocab().special().eos) stops.push_back(*eos);

  Stopwatch vocab_clock;
  const auto vocab = grammar::TokenVocab::from_tokenizer(tok);
  const double vocab_s = vocab_clock.seconds();
  Stopwatch compile_clock;
  auto cg = std::make_shared<const grammar::CompiledGrammar>(
      grammar::parse_gbnf(grammar::to_gbnf(spec)), vocab);
  const double compile_s = compile_clock.seconds();

  std::fprintf(stderr, "bench grammar: %zu tokens of text, vocabulary %zu, %zu rules\n", ids.size(),
               vocab->size(), cg->grammar().rules.size());
  const WalkStats cold = stats_of(walk(cg, ids, stops, tok));
  std::vector<double> warm_us;
  for (int r = 0; r < a.repetitions; ++r) {
    const std::vector<double> us = walk(cg, ids, stops, tok);
    warm_us.insert(warm_us.end(), us.begin(), us.end());
  }
  const WalkStats warm = stats_of(warm_us);
  if (a.json_out) {
    nlohmann::json j = {{"tokens", ids.size()},
                        {"vocab", vocab->size()},
                        {"vocab_s", vocab_s},
                        {"compile_s", compile_s},
                        {"cache_entries", cg->cached_entries()},
                        {"cold_total_s", cold.total_s},
                        {"cold_max_us", cold.max_us},
                        {"warm_median_us", warm.median_us},
                        {"warm_mean_us", warm.mean_us},
                        {"warm_p99_us", warm.p99_us},
                        {"warm_max_us", warm.max_us}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("vocabulary bytes: %.1f ms; compile: %.2f ms; cache entries: %zu\n", vocab_s * 1e3,
              compile_s * 1e3, cg->cached_entries());
  std::printf("first walk (cache filling): %.1f ms in all, max %.1f ms for one step\n",
              cold.total_s * 1e3, cold.max_us / 1e3);
  std::printf("warm mask per token: median %.1f us, mean %.1f us, p99 %.1f us, max %.1f us\n",
              warm.median_us, warm.mean_us, warm.p99_us, warm.max_us);
  return 0;
}

}  // namespace

Command register_bench_grammar(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto* sub = bench->add_subcommand("grammar", "Measure the constrained-decoding mask per token");
  auto a = std::make_shared<BenchGrammarArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("--json-schema", a->json_schema, "JSON Schema file");
  sub->add_option("--gbnf", a->gbnf, "GBNF grammar file (root rule `root`)");
  sub->add_option("--regex", a->regex, "Regular expression");
  sub->add_flag("--json-object", a->json_object, "Any JSON object");
  sub->add_option("--text", a->text, "A document the constraint admits (walked token by token)");
  sub->add_option("--decode", a->decode,
                  "Engine decode tokens/s constrained vs free at these concurrencies (e.g. 1,16)");
  sub->add_option("--decode-output", a->decode_output, "Output tokens per request for --decode")
      ->capture_default_str();
  sub->add_option("--prompt", a->prompt, "The chat message for --decode")->capture_default_str();
  sub->add_option("--decode-temperature", a->decode_temperature,
                  "Sampling temperature for --decode (0: greedy)")
      ->capture_default_str();
  add_engine_flags(sub, a->engine);
  sub->add_option("-r,--repetitions", a->repetitions, "Warm walks")->capture_default_str();
  sub->add_flag("--json", a->json_out, "Print the results as JSON");
  return {sub, [a]() { return bench_grammar(*a); }};
}

}  // namespace folio::cli
