// server/server_context.h: what every handler shares (built once by Server).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/log.h"
#include "engine/engine_client.h"
#include "server/admission.h"
#include "server/metrics.h"
#include "server/model_context.h"
#include "server/server_config.h"

namespace folio::server {

using engine::EngineClient;
using engine::RequestId;

struct ServerContext {
  ServerContext(const ServerConfig& c, EngineClient& e, const ModelContext& m, const Logger& l);

  const ServerConfig& config;
  EngineClient& engine;
  const ModelContext& model;
  const Logger& log;
  std::string api_key;  // resolved: --api-key or $FOLIO_API_KEY
  ServerMetrics metrics;
  Admission admission;
  std::atomic<bool> draining{false};  // shutting down: refuse new work with 503
  std::int64_t started_unix = 0;      // reported as `created` of the model

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
