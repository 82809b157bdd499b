// `folio serve [MODEL]`: the OpenAI-compatible HTTP server (flags follow `vllm serve`).
//
// Loads the model, starts the engine thread (EngineLoop) and serves until
// SIGINT/SIGTERM. Start-up logs say what was chosen and why: the KV pool
// (blocks, bytes, dtype) and how many max-model-len sequences it holds.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/fd_limit.h"
#include "base/log.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "cli/model_template.h"
#include "engine/engine_loop.h"
#include "server/server.h"

namespace folio::cli {

namespace {

struct ServeArgs {
  server::ServerConfig cfg;
  EngineFlags engine;
  std::string model_opt;
};

void add_server_flags(CLI::App* sub, ServeArgs& a) {
  server::ServerConfig& c = a.cfg;
  sub->add_option("model", c.model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-m,--model", a.model_opt,
                  "GGUF file or HF checkpoint directory (same as the positional argument)");
  sub->add_option("--host", c.host, "Address to listen on")->capture_default_str();
  sub->add_option("--port", c.port, "Port to listen on (0: any free port)")->capture_default_str();
  sub->add_option("--served-model-name", c.served_model_name,
                  "Model name(s) clients use (default: the model file's name)");
  sub->add_option("--api-key", c.api_key,
                  "Require 'Authorization: Bearer KEY' on /v1 routes (or $FOLIO_API_KEY)");
  sub->add_option("--max-logprobs", c.max_logprobs, "Largest logprobs / top_logprobs accepted")
      ->capture_default_str();
  sub->add_option("--chat-template", c.chat_template,
                  "Chat template (file path or Jinja text) overriding the model's");
  sub->add_option("--max-queue", c.max_queue,
                  "Requests admitted at once (running + waiting); beyond: 429")
      ->capture_default_str();
  sub->add_option("--io-threads", c.io_threads, "HTTP IO threads")->capture_default_str();
  sub->add_option("--max-body-bytes", c.max_body_bytes, "Largest request body; beyond: 413")
      ->capture_default_str();
  sub->add_option("--max-header-bytes", c.max_header_bytes, "Largest request head; beyond: 431")
      ->capture_default_str();
  sub->add_option("--idle-timeout", c.idle_timeout_s, "Seconds a keep-alive connection may idle")
      ->capture_default_str();
  sub->add_option("--request-timeout", c.request_timeout_s, "Seconds to receive one whole request")
      ->capture_default_str();
  sub->add_option("--shutdown-grace", c.shutdown_grace_s,
                  "Seconds in-flight requests may finish after SIGINT/SIGTERM")
      ->capture_default_str();
  add_engine_flags(sub, a.engine);
}

int serve(ServeArgs& a) {
  Logger log;
  if (!a.model_opt.empty()) a.cfg.model = a.model_opt;
  const std::string path = resolve_model_path(a.cfg.model);
  log.info("folio serve: loading " + path);
  Stopwatch load;
  std::unique_ptr<EngineModel> m = load_engine_model(path, a.engine);
  const double load_s = load.seconds();
  const std::unique_ptr<EngineStack> eng = make_engine(*m, a.engine);
  print_engine_summary(*eng);
  const engine::EngineConfig& ec = eng->core.config();
  const std::int64_t blocks_per_seq = (ec.max_model_len + ec.block_size - 1) / ec.block_size;
  std::fprintf(
      stderr,
      "folio: model loaded in %.2f s; the KV pool holds %lld sequences at the full "
      "max-model-len (%d tokens) and more when they are shorter\n",
      load_s,
      static_cast<long long>(eng->core.num_kv_blocks() / std::max<std::int64_t>(blocks_per_seq, 1)),
      ec.max_model_len);
  const auto tmpl = model_chat_template(*m->file);
  server::ModelContext ctx =
      server::make_model_context(m->tok, a.cfg.served_model_name, path, ec.max_model_len,
                                 server::chat_template_source(a.cfg.chat_template, tmpl));
  ctx.load_seconds = load_s;
  const std::uint64_t fds = raise_open_file_limit();
  if (fds < 1100) {
    log.info("open-file limit is " + std::to_string(fds) +
             ": at most about that many concurrent connections (raise `ulimit -n`)");
  }
  engine::EngineLoop loop(eng->core);  // the server's EngineClient
  return server::run_server(a.cfg, loop, ctx, log, [&](std::uint16_t port) {
    std::fprintf(stderr, "folio: serving %s on http://%s:%u (OpenAI API under /v1)\n",
                 ctx.names.front().c_str(), a.cfg.host.c_str(), port);
  });
}

}  // namespace

Command register_serve(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "OpenAI-compatible HTTP server (vLLM-style flags)");
  auto args = std::make_shared<ServeArgs>();
  add_server_flags(sub, *args);
  return {sub, [args] { return serve(*args); }};
}

}  // namespace folio::cli
