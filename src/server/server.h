// server/server.h: the OpenAI-compatible HTTP server (public API).
//
//   ServerConfig cfg = ...;                       // from CLI flags
//   ModelContext model = make_model_context(...); // tokenizer + chat template
//   engine::EngineLoop engine(llm_engine);         // an engine::EngineClient
//   return run_server(cfg, engine, model, logger); // until SIGINT / SIGTERM
//
// Several models: run_server(cfg, {ModelSpec{&ctx_a, &loop_a}, ...},
// {VirtualModelSpec{"auto", "a", "b", policy}}, logger); requests go to the
// model their `model` field names (the first when none).
//
// A small pool of IO threads (cfg.io_threads) runs every connection
// asynchronously (no thread per connection). Shutdown: stop accepting, let
// in-flight generations finish for up to cfg.shutdown_grace_s, abort the
// rest, close connections, return.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/log.h"
#include "engine/engine_client.h"
#include "server/model_context.h"
#include "server/served_model.h"
#include "server/server_config.h"

namespace folio::server {

struct ServerContext;
using engine::EngineClient;

class Server {
 public:
  // All references (and what the specs point to) must outlive the Server.
  // Throws folio::Error for an inconsistent model list (ServerContext), bad
  // API-key or CORS flags, or TLS files that cannot be used (server/tls.h).
  Server(const ServerConfig& config, const std::vector<ModelSpec>& models,
         const std::vector<VirtualModelSpec>& virtual_models, const Logger& log);
  Server(const ServerConfig& config, EngineClient& engine, const ModelContext& model,
         const Logger& log);
  ~Server();  // shutdown(0) when still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds cfg.host:cfg.port, starts the IO threads; returns the bound port.
  // Throws folio::Error when the address cannot be bound.
  std::uint16_t start();
  // Graceful stop (idempotent); returns when the IO threads have exited.
  void shutdown(double grace_s);
  // Ends a running shutdown's grace period now (any thread): what is still
  // in flight is aborted, each client getting its error.
  void hurry();
  ServerContext& context();
  bool tls() const;  // serving HTTPS (--ssl-certfile / --ssl-keyfile)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs a server until SIGINT or SIGTERM, then shuts down gracefully with
// cfg.shutdown_grace_s (a second signal ends the grace period at once) and
// returns 0. `on_listening` (optional) is called
// with the bound port once signals are being handled and the socket listens.
int run_server(const ServerConfig& config, const std::vector<ModelSpec>& models,
               const std::vector<VirtualModelSpec>& virtual_models, const Logger& log,
               const std::function<void(std::uint16_t)>& on_listening = {});
int run_server(const ServerConfig& config, EngineClient& engine, const ModelContext& model,
               const Logger& log, const std::function<void(std::uint16_t)>& on_listening = {});

}  // namespace folio::server
