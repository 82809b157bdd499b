// server/cors.h: Cross-Origin Resource Sharing, off unless --allowed-origins.
//
// A browser page on another origin may call folio only when its Origin is
// listed (or "*" is): replies then carry Access-Control-Allow-Origin with
// that origin, and a preflight (OPTIONS with Access-Control-Request-Method)
// on a known route is answered 204 with the methods and the headers a client
// sends (Authorization, Content-Type). A preflight needs no API key (browsers
// send none); the request that follows does. A listed origin never widens
// what a request may do; an unlisted one gets no CORS headers, so the
// browser keeps the reply from the page.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/http_types.h"

namespace folio::server {

class CorsPolicy {
 public:
  CorsPolicy() = default;  // off
  // Each flag value is one origin, a comma-separated list, or a JSON list
  // (vLLM's form, '["https://a.example", "https://b.example"]'); "*" allows
  // any origin. An origin is scheme://host[:port], without a path. Throws
  // folio::Error naming a malformed value.
  explicit CorsPolicy(const std::vector<std::string>& flags);

  bool enabled() const { return any_ || !origins_.empty(); }
  bool allows(std::string_view origin) const;
  // The headers for a reply to a request from `origin` ("" = none sent).
  HeaderList reply_headers(std::string_view origin) const;
  // The 204 reply to a preflight for a route answering `allow` (e.g. "POST"),
  // or a 403 when the origin is not allowed.
  HttpReply preflight(std::string_view origin, const std::string& allow) const;

 private:
  std::vector<std::string> origins_;
  bool any_ = false;
};

// A CORS preflight: OPTIONS carrying Origin and Access-Control-Request-Method.
bool is_preflight(const HttpRequest& req);

}  // namespace folio::server
