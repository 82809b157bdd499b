// `folio serve [MODEL]`: the OpenAI-compatible HTTP server (flags follow `vllm serve`).
//
// Loads the model(s) (cli/serve_plan.h: from flags or --config), starts one
// engine thread (EngineLoop) per model over one shared kernel thread pool,
// and serves until SIGINT/SIGTERM. Start-up logs say what was chosen and
// why: each KV pool (blocks, bytes, dtype), how many max-model-len sequences
// it holds, the memory of all models together and each virtual model's rule.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fd_limit.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/serve_models.h"
#include "cli/serve_plan.h"
#include "engine/engine_loop.h"
#include "engine/step_gate.h"
#include "server/server.h"

namespace folio::cli {

namespace {

struct ServeArgs {
  server::ServerConfig cfg;
  EngineFlags engine;
  std::vector<std::string> model_opts;  // each -m/--model
  std::string config_file;              // --config
  std::string route_policy;             // --route-policy (JSON)
  std::string route_cascade;            // --route-cascade (JSON)
};

void add_server_flags(CLI::App* sub, ServeArgs& a) {
  server::ServerConfig& c = a.cfg;
  sub->add_option("model", c.model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-m,--model", a.model_opts,
                  "GGUF file or HF checkpoint directory; repeat to serve several models");
  sub->add_option("--config", a.config_file,
                  "JSON file of models (names, per-model engine settings) and virtual models");
  sub->add_option("--route-policy", a.route_policy,
                  "JSON routing policy of `auto` when several models are served "
                  "(e.g. '{\"large_share\": 0.3}')");
  sub->add_option("--route-cascade", a.route_cascade,
                  "JSON cascade of `auto`: rerun unsure small answers on the large model "
                  "(e.g. '{\"min_mean_logprob\": -1.0}')");
  sub->add_option("--host", c.host, "Address to listen on")->capture_default_str();
  sub->add_option("--port", c.port, "Port to listen on (0: any free port)")->capture_default_str();
  sub->add_option("--served-model-name", c.served_model_name,
                  "Model name(s) clients use (default: the model file's name); with several "
                  "models, one per model");
  sub->add_option("--api-key", c.api_keys,
                  "Require 'Authorization: Bearer KEY' on every route but /health, /livez, "
                  "the chat page (/, /ui/*) and /metrics; repeat for several keys (none "
                  "given: $FOLIO_API_KEY)");
  sub->add_option("--api-key-file", c.api_key_file,
                  "File of API keys, one per line ('#' comments); adds to --api-key")
      ->check(CLI::ExistingFile);
  sub->add_flag("--metrics-require-key", c.metrics_require_key,
                "/metrics needs an API key too (default: open, for Prometheus)");
  sub->add_flag("--no-webui", c.no_webui,
                "Serve no chat page: / and /ui/* become unknown routes (401 without a key, "
                "else 404), for a server that exposes only the API");
  sub->add_option("--allowed-origins", c.allowed_origins,
                  "CORS: origins browser pages may call from (scheme://host[:port], a "
                  "comma-separated or JSON list, or *); default: none (CORS off)");
  sub->add_option("--ssl-keyfile", c.ssl_keyfile, "HTTPS: the PEM private key")
      ->check(CLI::ExistingFile);
  sub->add_option("--ssl-certfile", c.ssl_certfile, "HTTPS: the PEM certificate chain")
      ->check(CLI::ExistingFile);
  sub->add_option("--ssl-ca-certs", c.ssl_ca_certs,
                  "HTTPS: PEM CA certificates that client certificates are checked against")
      ->check(CLI::ExistingFile);
  sub->add_option("--ssl-cert-reqs", c.ssl_cert_reqs,
                  "HTTPS: client certificate 0 not asked, 1 optional, 2 required")
      ->check(CLI::Range(0, 2))
      ->capture_default_str();
  sub->add_option("--max-logprobs", c.max_logprobs, "Largest logprobs / top_logprobs accepted")
      ->capture_default_str();
  sub->add_option("--chat-template", c.chat_template,
                  "Chat template (file path or Jinja text) overriding the model's");
  sub->add_option("--max-queue", c.max_queue,
                  "Requests admitted at once (running + waiting); beyond: 429")
      ->capture_default_str();
  sub->add_option("--max-waiting-requests", c.max_waiting_requests,
                  "Requests that may wait for a model beyond those it runs; beyond: 503 with "
                  "Retry-After, so admitted requests keep their latency (-1: unbounded)")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  sub->add_option("--max-connections", c.max_connections,
                  "Open connections at once; beyond: 503 and close (default: the open-file "
                  "limit less 64)")
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--max-n", c.max_n, "Largest n (samples per prompt) a request may ask")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  sub->add_option("--max-prompts", c.max_prompts,
                  "Largest list of prompts in one completions / embeddings request")
      ->check(CLI::Range(1, 1 << 16))
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
  sub->add_option("--shutdown-grace,--shutdown-timeout", c.shutdown_grace_s,
                  "Seconds in-flight requests may finish after SIGINT/SIGTERM (a second "
                  "signal aborts them at once)")
      ->capture_default_str();
  add_engine_flags(sub, a.engine);
}

ServePlan make_plan(const ServeArgs& a) {
  std::vector<std::string> models;
  if (!a.cfg.model.empty()) models.push_back(a.cfg.model);
  models.insert(models.end(), a.model_opts.begin(), a.model_opts.end());
  if (a.config_file.empty()) {
    return plan_from_flags(models, a.cfg.served_model_name, a.cfg.chat_template, a.engine,
                           a.route_policy, a.route_cascade);
  }
  if (!models.empty() || !a.cfg.served_model_name.empty() || !a.route_policy.empty()) {
    throw Error(
        "--config lists the models: give MODEL, -m, --served-model-name and "
        "--route-policy there, not on the command line");
  }
  return plan_from_config(a.config_file, a.engine, a.cfg.chat_template);
}

int serve(ServeArgs& a) {
  Logger log;
  const ServePlan plan = make_plan(a);
  const KvSplit kv = split_kv_budget(plan);
  const bool several = plan.models.size() > 1;
  // One kernel thread pool for every model; engines take steps in turn.
  const std::shared_ptr<kernels::ThreadPool> pool = make_thread_pool(a.engine.threads);
  engine::StepGate gate;
  std::vector<LoadedModel> loaded;
  loaded.reserve(plan.models.size());
  for (std::size_t i = 0; i < plan.models.size(); ++i) {
    loaded.push_back(load_served_model(plan.models[i], kv.caps[i], pool, log));
  }
  if (several) print_memory_summary(loaded, plan, kv.total);
  const std::uint64_t fds = raise_open_file_limit();
  // Default connection cap: what the open-file limit allows, less a reserve
  // for model files, the listener and logs.
  constexpr std::uint64_t kReservedFds = 64;
  if (a.cfg.max_connections < 0) {
    const std::uint64_t cap = fds > 2 * kReservedFds ? fds - kReservedFds : kReservedFds;
    a.cfg.max_connections = static_cast<std::int32_t>(std::min<std::uint64_t>(cap, 1u << 30));
  }
  if (fds < 1100) {
    log.info("open-file limit is " + std::to_string(fds) + ": at most " +
             std::to_string(a.cfg.max_connections) + " concurrent connections (raise `ulimit -n`)");
  }
  std::deque<engine::EngineLoop> loops;  // the server's EngineClients
  std::vector<server::ModelSpec> specs;
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    loops.emplace_back(loaded[i].engine->core, several ? &gate : nullptr);
    specs.push_back(server::ModelSpec{
        .model = loaded[i].context.get(), .engine = &loops.back(), .lacks = plan.models[i].lacks});
  }
  const std::vector<server::VirtualModelSpec> virtuals = virtual_specs(plan, loaded, log);
  return server::run_server(a.cfg, specs, virtuals, log, [&](std::uint16_t port) {
    std::string names;
    for (const auto& m : loaded) names += (names.empty() ? "" : ", ") + m.context->name();
    for (const auto& v : virtuals) names += ", " + v.name;
    const bool tls = !a.cfg.ssl_certfile.empty();
    std::fprintf(stderr, "folio: serving %s on %s://%s:%u (OpenAI API under /v1)\n", names.c_str(),
                 tls ? "https" : "http", a.cfg.host.c_str(), port);
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
