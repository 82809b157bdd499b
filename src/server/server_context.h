// server/server_context.h: what every handler shares (built once by Server).
//
// The concrete models (each with its engine and metrics) and the virtual
// models routing over them; resolve() maps a request's `model` field to one
// of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "engine/engine_client.h"
#include "server/admission.h"
#include "server/auth.h"
#include "server/cors.h"
#include "server/metrics.h"
#include "server/model_context.h"
#include "server/route_metrics.h"
#include "server/served_model.h"
#include "server/server_config.h"

namespace folio::server {

using engine::EngineClient;
using engine::RequestId;

struct ServerContext {
  // Throws folio::Error when there is no model, a name is served twice or a
  // virtual model names an unknown model.
  ServerContext(const ServerConfig& c, const std::vector<ModelSpec>& concrete,
                const std::vector<VirtualModelSpec>& virtual_models, const Logger& l);

  const ServerConfig& config;
  const Logger& log;
  std::deque<ServedModel> models;      // concrete; models[0] serves requests naming no model
  std::vector<VirtualModel> virtuals;  // routed names (`auto`)
  RouteMetrics route_metrics;
  ApiKeys api_keys;  // --api-key, --api-key-file or $FOLIO_API_KEY (server/auth.h)
  CorsPolicy cors;   // --allowed-origins (server/cors.h)
  Admission admission;
  std::atomic<bool> draining{false};         // shutting down: refuse new work with 503
  std::atomic<std::int64_t> connections{0};  // open client connections (sessions)
  std::int64_t started_unix = 0;             // reported as `created` of the model

  // What a request's `model` field names: absent or "" -> models[0]; a
  // concrete name -> that model; a virtual name -> the virtual model.
  // Anything else: ApiError 404 listing the served names.
  struct Target {
    ServedModel* model = nullptr;  // set for a concrete model
    const VirtualModel* virt = nullptr;
  };
  Target resolve(const std::optional<std::string>& name);
  // A concrete model only (tokenize, detokenize): a virtual name is a 400.
  ServedModel& concrete(const std::optional<std::string>& name);
  std::vector<std::string> names() const;  // every concrete then every virtual name
  bool healthy(std::string* why) const;    // every engine healthy
  void abort_everywhere(RequestId id);     // shutdown: ids are unique across engines

  RequestId next_request_id() { return RequestId{next_id_.fetch_add(1) + 1}; }
  // An OpenAI-style id: prefix + 32 hex digits, unique within the process.
  std::string response_id(const char* prefix);

 private:
  std::atomic<std::uint64_t> next_id_{0};
  std::atomic<std::uint64_t> next_response_{0};
  std::uint64_t salt_ = 0;
};

// Seconds since the Unix epoch (OpenAI `created`).
std::int64_t unix_now();

}  // namespace folio::server
