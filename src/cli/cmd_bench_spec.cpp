// `folio bench spec --dataset FILE --speculative-config JSON [engine flags]`:
// speculative decoding against plain decoding, in one run, on one model.
//
// Two engines over the same model and flags, one with --speculative-config
// and one without. Every prompt of the dataset (JSONL: {"category",
// "messages" (rendered with the model's chat template) or "prompt",
// "max_tokens"}) runs alone in each, alternating which goes first, -r times:
//
//  - single-stream decode tokens/s per category (median over prompts and
//    repetitions; decode = after the first token), the ratio on / off, and
//    the acceptance of the drafts: rate, mean accepted length (vLLM's
//    1 + accepted / drafts) and acceptance by position;
//  - --concurrency 8,32: that many requests (the dataset's prompts, cycled)
//    submitted at once, aggregate output tokens/s on / off (medians of -r
//    runs, alternating which goes first).
//
// Greedy with the dataset's max_tokens, so both engines do the same work;
// the outputs are compared and any difference is reported (there must be
// none: speculation is lossless).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
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
#include "cli/model_template.h"

namespace folio::cli {

namespace {

struct SpecArgs {
  std::string model, dataset, concurrency = "8,32", write_prompts;
  int repetitions = 3;
  bool json_out = false;
  EngineFlags engine;
};

struct Prompt {
  std::string category;
  std::vector<TokenId> tokens;
  std::int32_t max_tokens = 128;
};

std::vector<Prompt> read_dataset(const SpecArgs& a, const EngineModel& m) {
  std::ifstream in(a.dataset);
  if (!in) throw Error("--dataset " + a.dataset + ": cannot open");
  std::unique_ptr<chat::ChatTemplate> tmpl;
  chat::RenderOptions ro;
  const auto& sp = m.tok.vocab().special();
  if (sp.bos) ro.bos_token = m.tok.vocab().text(*sp.bos);
  if (sp.eos) ro.eos_token = m.tok.vocab().text(*sp.eos);
  std::vector<Prompt> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::string where = a.dataset + ":" + std::to_string(n) + ": ";
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + e.what());
    }
    Prompt p;
    p.category = j.value("category", std::string("all"));
    p.max_tokens = j.value("max_tokens", 128);
    if (j.contains("messages")) {
      if (!tmpl) {
        const auto src = model_chat_template(*m.file);
        if (!src) throw Error(where + "\"messages\" needs a model with a chat template");
        tmpl = std::make_unique<chat::ChatTemplate>(std::string(*src));
      }
      p.tokens = m.tok.encode(tmpl->render(j["messages"], ro),
                              {.add_special = false, .parse_special = true});
    } else if (j.contains("prompt")) {
      p.tokens = m.tok.encode(j["prompt"].get<std::string>(), {.add_special = true});
    } else {
      throw Error(where + "expected \"messages\" or \"prompt\"");
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) throw Error("--dataset " + a.dataset + ": no prompts");
  return out;
}

struct Run {
  std::vector<TokenId> tokens;
  double first = 0, end = 0;  // seconds since submission
};

// Runs `prompts` at once on `e`; per request its tokens and timings.
std::vector<Run> run(engine::LLMEngine& e, const std::vector<const Prompt*>& prompts,
                     std::uint64_t& next_id) {
  std::vector<std::shared_ptr<engine::OutputChannel>> chans;
  Stopwatch sw;
  for (const Prompt* p : prompts) {
    engine::EngineRequest r;
    r.id = engine::RequestId{next_id++};
    r.prompt = p->tokens;
    r.params.temperature = 0;
    r.params.max_tokens = p->max_tokens;
    chans.push_back(e.add_request(std::move(r)));
  }
  std::vector<Run> out(prompts.size());
  while (e.has_unfinished()) {
    e.step();
    const double now = sw.seconds();
    for (std::size_t i = 0; i < chans.size(); ++i) {
      for (const engine::RequestOutput& o : chans[i]->drain()) {
        if (!o.error.empty()) throw Error(o.error);
        for (const engine::SampleDelta& d : o.samples) {
          if (out[i].tokens.empty() && !d.token_ids.empty()) out[i].first = now;
          out[i].tokens.insert(out[i].tokens.end(), d.token_ids.begin(), d.token_ids.end());
        }
        if (o.finished) out[i].end = now;
      }
    }
  }
  return out;
}

double decode_rate(const Run& r) {
  const double secs = r.end - r.first;
  return r.tokens.size() > 1 && secs > 0 ? static_cast<double>(r.tokens.size() - 1) / secs : 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// into += after - before, for the speculative-decoding counters (`into`
// starts empty: its per-position list takes after's length); the row and
// draft costs are after's.
void add_spec_delta(engine::EngineStats& into, const engine::EngineStats& after,
                    const engine::EngineStats& before) {
  into.spec_num_drafts += after.spec_num_drafts - before.spec_num_drafts;
  into.spec_num_draft_tokens += after.spec_num_draft_tokens - before.spec_num_draft_tokens;
  into.spec_num_accepted_tokens += after.spec_num_accepted_tokens - before.spec_num_accepted_tokens;
  into.spec_accepted_per_pos.resize(after.spec_accepted_per_pos.size(), 0);
  for (std::size_t i = 0; i < after.spec_accepted_per_pos.size(); ++i)
    into.spec_accepted_per_pos[i] +=
        after.spec_accepted_per_pos[i] - before.spec_accepted_per_pos[i];
  into.spec_row_cost = after.spec_row_cost;  // estimates, not counters: the latest
  into.spec_draft_cost = after.spec_draft_cost;
}

// /proc/cpuinfo's first "model name" ("unknown" elsewhere): every figure
// is recorded with the CPU it was measured on.
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown";
}

int bench_spec(const SpecArgs& a) {
  EngineFlags off_flags = a.engine;
  if (off_flags.kv_cache_memory.empty()) off_flags.kv_cache_memory = "1GiB";  // two engines
  EngineFlags on_flags = off_flags;
  off_flags.speculative_config.clear();
  if (on_flags.speculative_config.empty())
    throw Error(
        "bench spec needs --speculative-config (the engine to compare with plain decoding)");
  const std::vector<int> concurrency =
      a.concurrency.empty() ? std::vector<int>{}
                            : parse_count_list("--concurrency", a.concurrency, "request count");
  if (a.repetitions < 1) throw Error("-r/--repetitions must be >= 1");
  std::unique_ptr<EngineModel> m = load_engine_model(resolve_model_path(a.model), a.engine);
  const auto prompts = read_dataset(a, *m);
  if (!a.write_prompts.empty()) {  // the rendered prompts, for other engines' tools
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const std::string path =
          a.write_prompts + "/" + std::to_string(i) + "." + prompts[i].category + ".txt";
      std::ofstream f(path, std::ios::binary);
      if (!f) throw Error("--write-prompts: cannot write " + path);
      f << m->tok.decode(prompts[i].tokens, {.render_special = true});
    }
    std::printf("wrote %zu prompts to %s\n", prompts.size(), a.write_prompts.c_str());
    return 0;
  }
  auto off = make_engine(*m, off_flags);
  auto on = make_engine(*m, on_flags);
  print_engine_summary(*on);
  std::printf("cpu: %s\n", cpu_model_name().c_str());
  std::printf("speculative: %s\n", on->core.config().speculative.describe().c_str());

  std::map<std::string, std::vector<double>> rate_off, rate_on;
  std::map<std::string, engine::EngineStats> spec_by_cat;
  std::uint64_t next_id = 1;
  int mismatches = 0;
  for (int rep = 0; rep < a.repetitions; ++rep) {
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const Prompt& p = prompts[i];
      std::fprintf(stderr, "\rfolio bench spec: repetition %d/%d, prompt %zu/%zu   ", rep + 1,
                   a.repetitions, i + 1, prompts.size());
      const bool on_first = (rep + static_cast<int>(i)) % 2 == 1;
      Run r_off, r_on;
      const engine::EngineStats before = on->core.stats();
      for (int k = 0; k < 2; ++k) {
        if ((k == 0) == on_first)
          r_on = run(on->core, {&p}, next_id)[0];
        else
          r_off = run(off->core, {&p}, next_id)[0];
      }
      add_spec_delta(spec_by_cat[p.category], on->core.stats(), before);
      if (r_on.tokens != r_off.tokens) ++mismatches;
      rate_off[p.category].push_back(decode_rate(r_off));
      rate_on[p.category].push_back(decode_rate(r_on));
    }
  }
  std::fprintf(stderr, "\n");
  nlohmann::ordered_json js;
  js["speculative"] = on->core.config().speculative.describe();
  std::printf("\n== single-stream decode (tokens/s after the first token, median of %d runs) ==\n",
              a.repetitions);
  std::printf("%-10s %8s %10s %10s %8s\n", "category", "prompts", "plain t/s", "spec t/s", "ratio");
  for (const auto& [cat, v] : rate_off) {
    const double mo = median(v), mn = median(rate_on[cat]);
    std::printf("%-10s %8zu %10.1f %10.1f %7.2fx\n", cat.c_str(),
                v.size() / static_cast<std::size_t>(a.repetitions), mo, mn, mo > 0 ? mn / mo : 0);
    std::printf("           %s\n", spec_summary(spec_by_cat[cat]).c_str());
    const engine::EngineStats& sc = spec_by_cat[cat];
    js["single"][cat] = {{"plain_tps", mo},
                         {"spec_tps", mn},
                         {"ratio", mo > 0 ? mn / mo : 0},
                         {"drafts", sc.spec_num_drafts},
                         {"draft_tokens", sc.spec_num_draft_tokens},
                         {"accepted", sc.spec_num_accepted_tokens},
                         {"accepted_per_pos", sc.spec_accepted_per_pos},
                         {"row_cost", sc.spec_row_cost},
                         {"draft_cost", sc.spec_draft_cost}};
  }
  std::printf("outputs differing between plain and speculative: %d (must be 0)\n", mismatches);

  std::printf("\n== concurrent requests: aggregate output tokens/s ==\n");
  std::printf("%-12s %10s %10s %8s\n", "concurrency", "plain t/s", "spec t/s", "ratio");
  for (int c : concurrency) {
    std::vector<const Prompt*> batch;
    for (int i = 0; i < c; ++i)
      batch.push_back(&prompts[static_cast<std::size_t>(i) % prompts.size()]);
    // Repetitions alternate which engine goes first, as the single-stream
    // runs do, so the machine's drift falls on both.
    std::vector<double> reps[2];
    for (int rep = 0; rep < a.repetitions; ++rep) {
      for (int turn = 0; turn < 2; ++turn) {
        const int side = rep % 2 == 0 ? turn : 1 - turn;
        Stopwatch sw;
        const auto runs = run(side == 0 ? off->core : on->core, batch, next_id);
        std::size_t tokens = 0;
        for (const Run& r : runs) tokens += r.tokens.size();
        reps[side].push_back(static_cast<double>(tokens) / std::max(sw.seconds(), 1e-9));
      }
    }
    const double tps[2] = {median(reps[0]), median(reps[1])};
    std::printf("%-12d %10.1f %10.1f %7.2fx\n", c, tps[0], tps[1],
                tps[0] > 0 ? tps[1] / tps[0] : 0);
    js["concurrent"][std::to_string(c)] = {
        {"plain_tps", tps[0]}, {"spec_tps", tps[1]}, {"ratio", tps[0] > 0 ? tps[1] / tps[0] : 0}};
  }
  if (a.json_out) std::printf("%s\n", js.dump().c_str());
  return mismatches == 0 ? 0 : 3;
}

}  // namespace

Command register_bench_spec(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto* sub = bench->add_subcommand(
      "spec",
      "Speculative decoding vs plain decoding: single-stream speed-up by prompt category, "
      "acceptance, aggregate throughput under concurrency");
  auto a = std::make_shared<SpecArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("--dataset", a->dataset,
                  "JSONL prompts: {\"category\", \"messages\" or \"prompt\", \"max_tokens\"}")
      ->required();
  sub->add_option("-r,--repetitions", a->repetitions, "Runs of each prompt per engine")
      ->capture_default_str();
  sub->add_option("--concurrency", a->concurrency,
                  "Comma list of concurrent requests for aggregate throughput ('' skips)")
      ->capture_default_str();
  sub->add_option("--write-prompts", a->write_prompts,
                  "Write each rendered prompt to DIR/<i>.<category>.txt and exit (for other "
                  "engines' tools, bench/spec_decode.sh)");
  sub->add_flag("--json", a->json_out, "Also print the results as JSON");
  add_engine_flags(sub, a->engine);
  return {sub, [a]() { return bench_spec(*a); }};
}

}  // namespace folio::cli
