// server/http_types.h: transport-neutral request/reply passed to the router.
//
// The session (Boost.Beast) converts to and from these, so routing and every
// handler are plain functions testable without sockets or Beast headers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/job.h"

namespace folio::server {

struct HttpRequest {
  std::string method;               // "GET", "POST", ...
  std::string target;               // path and optional query
  std::string authorization;        // the Authorization header ("" when absent)
  std::string origin;               // the Origin header (CORS; "" when absent)
  std::string cors_request_method;  // Access-Control-Request-Method (a preflight's)
  std::string if_none_match;        // If-None-Match (the web UI's revalidations)
  std::string body;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  // A generation in flight: the session sends its output (SSE when it
  // streams) instead of `body`. Already submitted to the engine.
  std::unique_ptr<Job> job;
};

HttpReply json_reply(int status, std::string body);
HttpReply error_reply(int status, const std::string& message,
                      const std::optional<std::string>& param = std::nullopt);

}  // namespace folio::server
