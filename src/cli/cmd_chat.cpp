// `folio chat [-m MODEL]`: an interactive, multi-turn conversation on stdin/stdout.
//
// Each turn renders the whole conversation with the model's chat template and
// runs it through the engine; prefix caching makes the earlier turns' KV
// blocks hits, so a turn costs only its new tokens. Replies stream to stdout;
// an empty line or end of input ends the session, "/reset" starts over. With
// --speculative-config, the session's acceptance goes to stderr at the end.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "chat/chat_template.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "cli/model_template.h"
#include "engine/output_processor.h"

namespace folio::cli {

namespace {

struct ChatArgs {
  std::string model;
  std::string system;
  int max_tokens = 512;
  float temp = 0.7f;
  float top_p = 0.95f;
  std::optional<std::uint64_t> seed;
  EngineFlags engine;
};

int chat_loop(const ChatArgs& a) {
  std::unique_ptr<EngineModel> m = load_engine_model(resolve_model_path(a.model), a.engine);
  const auto tmpl_src = model_chat_template(*m->file);
  if (!tmpl_src) throw Error("this model has no tokenizer.chat_template; use `folio run --raw`");
  const chat::ChatTemplate tmpl{std::string(*tmpl_src)};
  const std::unique_ptr<EngineStack> stack = make_engine(*m, a.engine);
  engine::LLMEngine& eng = stack->core;
  chat::RenderOptions ro;
  const auto& sp = m->tok.vocab().special();
  if (sp.bos) ro.bos_token = m->tok.vocab().text(*sp.bos);
  if (sp.eos) ro.eos_token = m->tok.vocab().text(*sp.eos);

  std::vector<chat::ChatMessage> history;
  if (!a.system.empty()) history.push_back({"system", a.system});
  std::fprintf(stderr, "folio chat: empty line or Ctrl-D ends, /reset clears the history\n");
  std::uint64_t next_id = 1;
  std::string line;
  while (std::fprintf(stderr, "> "), std::getline(std::cin, line) && !line.empty()) {
    if (line == "/reset") {
      history.resize(a.system.empty() ? 0 : 1);
      continue;
    }
    history.push_back({"user", line});
    engine::EngineRequest r;
    r.id = engine::RequestId{next_id++};
    r.prompt =
        m->tok.encode(tmpl.render(history, ro), {.add_special = false, .parse_special = true});
    r.params.temperature = a.temp;
    r.params.top_p = a.top_p;
    r.params.seed = a.seed;
    r.params.max_tokens = a.max_tokens;
    const engine::RequestId id = r.id;
    engine::OutputProcessor out(m->tok, r.params, 1);
    auto channel = eng.add_request(std::move(r));
    std::string reply;
    while (!out.finished()) {
      eng.step();
      for (const engine::RequestOutput& o : channel->drain()) {
        if (!o.error.empty()) throw Error(o.error);
        for (const engine::TextDelta& d : out.apply(o)) {
          if (d.stop_string_hit) eng.finish_sample(id, d.index);
          std::fwrite(d.text.data(), 1, d.text.size(), stdout);
          reply += d.text;
        }
      }
      std::fflush(stdout);
    }
    // Steps run on this thread, so the final item was drained in the loop above.
    std::fputc('\n', stdout);
    history.push_back({"assistant", reply});
  }
  if (const std::string spec = spec_summary(eng.stats()); !spec.empty())
    std::fprintf(stderr, "folio chat: %s\n", spec.c_str());
  return 0;
}

}  // namespace

Command register_chat(CLI::App& app) {
  auto* sub = app.add_subcommand("chat", "Interactive multi-turn chat with the model's template");
  auto a = std::make_shared<ChatArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("--system", a->system, "System message for the conversation");
  sub->add_option("-n,--max-tokens", a->max_tokens, "Maximum tokens per reply")
      ->capture_default_str();
  sub->add_option("--temp", a->temp, "Temperature (0 = greedy)")->capture_default_str();
  sub->add_option("--top-p", a->top_p, "Top-p (1 = off)")->capture_default_str();
  sub->add_option("--seed", a->seed, "Random seed (reproducible replies)");
  add_engine_flags(sub, a->engine);
  return {sub, [a] { return chat_loop(*a); }};
}

}  // namespace folio::cli
