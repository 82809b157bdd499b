// server/server_context.cpp: shared handler state.
#include "server/server_context.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "server/auth.h"

namespace folio::server {

ServerContext::ServerContext(const ServerConfig& c, EngineClient& e, const ModelContext& m,
                             const Logger& l)
    : config(c),
      engine(e),
      model(m),
      log(l),
      api_key(resolve_api_key(c.api_key)),
      metrics(m.name()),
      admission(c.max_queue),
      started_unix(unix_now()) {
  metrics.add_stage_seconds("model_load", m.load_seconds);
  std::random_device rd;
  salt_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::string ServerContext::response_id(const char* prefix) {
  const std::uint64_t k = next_response_.fetch_add(1);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(salt_),
                static_cast<unsigned long long>(k));
  return std::string(prefix) + buf;
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace folio::server
