// `folio generate --input prompts.jsonl --output out.jsonl [-m MODEL] [engine flags]`:
// offline batch generation through the paged engine (continuous batching,
// prefix caching), the same engine `folio serve` runs.
//
// Input: one JSON object per line (blank lines are skipped), with OpenAI
// completions field names:
//   {"prompt": "text" | [token ids], "max_tokens": 16, "temperature": 1.0,
//    "top_p": 1, "top_k": -1, "min_p": 0, "seed": 7, "stop": "x" | ["x", ...],
//    "n": 1, "presence_penalty": 0, "frequency_penalty": 0,
//    "repetition_penalty": 1, "min_tokens": 0, "ignore_eos": false,
//    "stop_token_ids": [...], "include_stop_str_in_output": false,
//    "attention_window": 0, "attention_sinks": 4}  (folio's sink + window attention, as
//    the server's request fields; unset: --attention-window)
//    and an output constraint as vLLM names them: "guided_json": SCHEMA,
//    "guided_regex", "guided_choice": [...], "guided_grammar": GBNF (at most
//    one; unset: --json-schema / --grammar / --regex, if given).
// Defaults follow the OpenAI completions API (max_tokens 16, temperature 1).
// A text prompt is tokenized with the vocabulary's BOS/EOS rules, as a raw
// completion (no chat template). Text comes from the engine's
// OutputProcessor, as `folio serve` renders it (skip_special_tokens on);
// a stop string ends its sample before the next engine step.
//
// Output: one line per sample, in input order:
//   {"index": i, "text": ..., "token_ids": [...], "finish_reason": "stop"|"length"}
// where i counts the input's non-blank lines from 0. With n > 1 a request
// gives n consecutive lines with the same index and "sample": 0..n-1. A
// malformed or impossible line gives {"index": i, "error": "line L: ..."}
// (also reported on stderr) and the rest still runs; the exit status is 2
// when any line failed, 0 otherwise.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/attention_window.h"
#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/constraint_flags.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "engine/output_processor.h"
#include "grammar/grammar_cache.h"

namespace folio::cli {

namespace {

using nlohmann::json;

struct GenerateArgs {
  std::string model, input, output;
  EngineFlags engine;
  ConstraintFlags constraint;
};

template <class T>
T get_field(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(std::string("field '") + key + "' has the wrong type");
  }
}

std::vector<TokenId> parse_prompt(const json& p, const tokenizer::Tokenizer& tok) {
  if (p.is_string()) return tok.encode(p.get<std::string>(), {.add_special = true});
  if (!p.is_array()) throw Error("'prompt' must be a string or an array of token ids");
  std::vector<TokenId> ids;
  for (const json& t : p) {
    if (!t.is_number_integer()) throw Error("'prompt' token ids must be integers");
    const auto v = t.get<std::int64_t>();
    if (v < 0 || v > INT32_MAX)
      throw Error("'prompt' token id " + std::to_string(v) + " is out of range");
    ids.push_back(static_cast<TokenId>(v));
  }
  return ids;
}

sampling::SamplingParams parse_params(const json& j) {
  static const char* const kKnown[] = {"prompt",
                                       "max_tokens",
                                       "temperature",
                                       "top_p",
                                       "top_k",
                                       "min_p",
                                       "seed",
                                       "stop",
                                       "n",
                                       "presence_penalty",
                                       "frequency_penalty",
                                       "repetition_penalty",
                                       "min_tokens",
                                       "ignore_eos",
                                       "stop_token_ids",
                                       "include_stop_str_in_output",
                                       "model",
                                       "user",
                                       "attention_window",
                                       "attention_sinks",
                                       "guided_json",
                                       "guided_regex",
                                       "guided_choice",
                                       "guided_grammar"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) throw Error("unknown field '" + key + "'");
  }
  sampling::SamplingParams p;
  p.max_tokens = get_field<std::int32_t>(j, "max_tokens", 16);
  p.temperature = get_field<float>(j, "temperature", 1.0f);
  p.top_p = get_field<float>(j, "top_p", 1.0f);
  p.top_k = get_field<std::int32_t>(j, "top_k", 0);
  p.min_p = get_field<float>(j, "min_p", 0.0f);
  if (j.contains("seed") && !j["seed"].is_null()) p.seed = get_field<std::uint64_t>(j, "seed", 0);
  p.presence_penalty = get_field<float>(j, "presence_penalty", 0.0f);
  p.frequency_penalty = get_field<float>(j, "frequency_penalty", 0.0f);
  p.repetition_penalty = get_field<float>(j, "repetition_penalty", 1.0f);
  p.min_tokens = get_field<std::int32_t>(j, "min_tokens", 0);
  p.ignore_eos = get_field<bool>(j, "ignore_eos", false);
  p.include_stop_str_in_output = get_field<bool>(j, "include_stop_str_in_output", false);
  p.stop_token_ids = get_field<std::vector<TokenId>>(j, "stop_token_ids", {});
  if (j.contains("stop") && j["stop"].is_string()) {
    p.stop = {j["stop"].get<std::string>()};
  } else {
    p.stop = get_field<std::vector<std::string>>(j, "stop", {});
  }
  return p;
}

struct Line {
  std::size_t line_no = 0;
  std::string error;
  std::int32_t n = 1;
  engine::RequestId id;
  std::shared_ptr<engine::OutputChannel> channel;
  std::unique_ptr<engine::OutputProcessor> out;
  std::vector<json> samples;  // per sample: text, token_ids, finish_reason
};

// The line's output constraint (guided_*), else the flags' default.
std::optional<grammar::ConstraintSpec> line_constraint(
    const json& j, const std::optional<grammar::ConstraintSpec>& fallback) {
  std::optional<grammar::ConstraintSpec> spec;
  const auto set = [&](const char* key, grammar::ConstraintSpec s) {
    if (spec) throw Error(std::string("'") + key + "' cannot be combined with another guided_*");
    spec = std::move(s);
  };
  if (j.contains("guided_json")) {
    const json& v = j["guided_json"];
    set("guided_json", {grammar::ConstraintKind::kJsonSchema,
                        v.is_string() ? v.get<std::string>() : v.dump(),
                        {}});
  }
  if (j.contains("guided_regex")) {
    set("guided_regex",
        {grammar::ConstraintKind::kRegex, get_field<std::string>(j, "guided_regex", ""), {}});
  }
  if (j.contains("guided_choice")) {
    set("guided_choice", {grammar::ConstraintKind::kChoice, "",
                          get_field<std::vector<std::string>>(j, "guided_choice", {})});
  }
  if (j.contains("guided_grammar")) {
    set("guided_grammar",
        {grammar::ConstraintKind::kGbnf, get_field<std::string>(j, "guided_grammar", ""), {}});
  }
  return spec ? spec : fallback;
}

// Parses one input line and queues it; errors stay on the line.
void submit(engine::LLMEngine& e, const tokenizer::Tokenizer& tok, const std::string& text,
            engine::RequestId id, Line& line, grammar::GrammarCache& grammars,
            const std::optional<grammar::ConstraintSpec>& fallback) {
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error("expected a JSON object");
    if (!j.contains("prompt")) throw Error("missing 'prompt'");
    engine::EngineRequest r;
    r.id = id;
    r.params = parse_params(j);
    r.prompt = parse_prompt(j["prompt"], tok);
    r.n = get_field<std::int32_t>(j, "n", 1);
    if (const auto spec = line_constraint(j, fallback)) r.grammar = grammars.get(*spec);
    if (j.contains("attention_window") || j.contains("attention_sinks")) {
      if (!j.contains("attention_window"))
        throw Error("'attention_sinks' needs 'attention_window'");
      const auto w = get_field<std::int32_t>(j, "attention_window", 0);
      r.attention_window =
          AttentionWindow{w, get_field<std::int32_t>(j, "attention_sinks", default_sinks(w))};
    }
    auto out = std::make_unique<engine::OutputProcessor>(tok, r.params, std::max(r.n, 0));
    line.channel = e.add_request(std::move(r));  // admits: throws naming the limit
    line.n = out->n();
    line.id = id;
    line.out = std::move(out);
    line.samples.assign(static_cast<std::size_t>(line.n),
                        {{"text", ""}, {"token_ids", json::array()}, {"finish_reason", nullptr}});
  } catch (const std::exception& ex) {
    line.error = "line " + std::to_string(line.line_no) + ": " + ex.what();
    std::fprintf(stderr, "folio: %s\n", line.error.c_str());
  }
}

// Renders what the engine produced for one line; a stop string finishes its
// sample in the engine before the next step.
void process(engine::LLMEngine& e, Line& line) {
  if (!line.channel || line.out->finished()) return;
  for (const engine::RequestOutput& o : line.channel->drain()) {
    for (const engine::TextDelta& d : line.out->apply(o)) {
      if (d.stop_string_hit) e.finish_sample(line.id, d.index);
      json& s = line.samples.at(static_cast<std::size_t>(d.index));
      s["text"] = s["text"].get<std::string>() + d.text;
      for (TokenId t : d.token_ids) s["token_ids"].push_back(t);
      if (d.finish != FinishReason::kNone) s["finish_reason"] = finish_reason_name(d.finish);
    }
  }
}

void write_results(std::ostream& out, std::size_t index, const Line& line) {
  if (!line.error.empty()) {
    out << json{{"index", index}, {"error", line.error}}.dump() << '\n';
    return;
  }
  const std::vector<json>& samples = line.samples;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    json row = {{"index", index}};
    if (line.n > 1) row["sample"] = k;
    row.update(samples[k]);
    out << row.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  }
}

int generate(const GenerateArgs& a) {
  std::ifstream in(a.input);
  if (!in) throw Error("cannot open --input " + a.input);
  std::ofstream out(a.output);
  if (!out) throw Error("cannot open --output " + a.output + " for writing");
  Stopwatch load_time;
  const auto m = load_engine_model(resolve_model_path(a.model), a.engine);
  const std::unique_ptr<EngineStack> stack = make_engine(*m, a.engine);
  engine::LLMEngine& e = stack->core;
  std::fprintf(stderr, "folio: loaded %s in %.2f s\n", m->file->source().c_str(),
               load_time.seconds());
  print_engine_summary(*stack);
  grammar::GrammarCache grammars(grammar::TokenVocab::from_tokenizer(m->tok));
  const std::optional<grammar::ConstraintSpec> fallback = constraint_from_flags(a.constraint);
  if (fallback) grammars.get(*fallback);  // a constraint that does not compile fails here, once

  Stopwatch run_time;
  std::vector<Line> lines;
  std::string text;
  for (std::size_t line_no = 1; std::getline(in, text); ++line_no) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Line& line = lines.emplace_back();
    line.line_no = line_no;
    submit(e, m->tok, text, engine::RequestId{lines.size()}, line, grammars, fallback);
  }
  // Only lines still producing are visited after each step (not every line of the file).
  std::vector<Line*> open;
  for (Line& line : lines)
    if (line.channel) open.push_back(&line);
  const auto process_open = [&] {
    std::erase_if(open, [&](Line* line) {
      process(e, *line);
      return line->out->finished();
    });
  };
  while (e.has_unfinished()) {
    e.step();
    process_open();
  }
  process_open();  // finishes pushed by the last step
  const double secs = run_time.seconds();
  std::size_t failed = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    write_results(out, i, lines[i]);
    failed += lines[i].error.empty() ? 0 : 1;
  }
  const engine::EngineStats s = e.stats();
  std::fprintf(stderr,
               "folio: %zu requests (%zu failed) in %.2f s: %llu tokens forwarded, %llu generated "
               "(%.1f t/s), %lld preemptions, prefix cache %lld/%lld tokens hit\n",
               lines.size(), failed, secs, static_cast<unsigned long long>(s.num_batched_tokens),
               static_cast<unsigned long long>(s.num_generated_tokens),
               static_cast<double>(s.num_generated_tokens) / std::max(secs, 1e-9),
               static_cast<long long>(s.num_preemptions),
               static_cast<long long>(s.prefix_cache_hits),
               static_cast<long long>(s.prefix_cache_queries));
  if (const std::string spec = spec_summary(s); !spec.empty())
    std::fprintf(stderr, "folio: %s\n", spec.c_str());
  return failed == 0 ? 0 : 2;
}

}  // namespace

Command register_generate(CLI::App& app) {
  auto* sub =
      app.add_subcommand("generate", "Offline batch generation: JSONL prompts in, JSONL out");
  auto a = std::make_shared<GenerateArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("--input", a->input, "Input JSONL: one request object per line")->required();
  sub->add_option("--output", a->output, "Output JSONL: one line per sample, input order")
      ->required();
  add_engine_flags(sub, a->engine);
  add_constraint_flags(sub, a->constraint);
  return {sub, [a]() { return generate(*a); }};
}

}  // namespace folio::cli
