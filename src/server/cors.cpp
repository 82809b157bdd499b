// server/cors.cpp: the origin list and the CORS headers.
#include "server/cors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "server/router.h"

namespace folio::server {
namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// scheme://host[:port] and nothing more; browsers send exactly this form.
void check_origin(const std::string& o) {
  const auto scheme_end = o.find("://");
  const bool ok = scheme_end != std::string::npos && scheme_end > 0 && scheme_end + 3 < o.size() &&
                  o.find_first_of("/?# ", scheme_end + 3) == std::string::npos;
  if (!ok) {
    throw Error("--allowed-origins: `" + o +
                "` is not an origin (scheme://host[:port], e.g. https://chat.example.com, or *)");
  }
}

std::vector<std::string> split_flag(const std::string& value) {
  std::vector<std::string> out;
  const std::string_view v = trim(value);
  if (v.starts_with("[")) {
    const auto j = nlohmann::json::parse(v, nullptr, false);
    if (!j.is_array()) throw Error("--allowed-origins: `" + value + "` is not a JSON list");
    for (const auto& e : j) {
      if (!e.is_string()) throw Error("--allowed-origins: `" + value + "` lists a non-string");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  std::size_t start = 0;
  while (start <= v.size()) {
    const auto comma = v.find(',', start);
    const auto piece =
        trim(v.substr(start, comma == std::string_view::npos ? v.npos : comma - start));
    if (!piece.empty()) out.emplace_back(piece);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

CorsPolicy::CorsPolicy(const std::vector<std::string>& flags) {
  for (const std::string& f : flags) {
    for (std::string& o : split_flag(f)) {
      if (o == "*") {
        any_ = true;
        continue;
      }
      check_origin(o);
      std::transform(o.begin(), o.end(), o.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      origins_.push_back(std::move(o));
    }
  }
}

bool CorsPolicy::allows(std::string_view origin) const {
  if (origin.empty()) return false;
  if (any_) return true;
  std::string lower(origin);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(origins_.begin(), origins_.end(), lower) != origins_.end();
}

HeaderList CorsPolicy::reply_headers(std::string_view origin) const {
  if (!allows(origin)) return {};
  return {{"Access-Control-Allow-Origin", std::string(origin)}, {"Vary", "Origin"}};
}

HttpReply CorsPolicy::preflight(std::string_view origin, const std::string& allow) const {
  if (!allows(origin)) {
    return error_reply(
        403, "origin " + std::string(origin) + " is not allowed (the server's --allowed-origins)");
  }
  HttpReply r;
  r.status = 204;
  r.content_type = "text/plain";
  r.headers = reply_headers(origin);
  r.headers.emplace_back("Access-Control-Allow-Methods", allow);
  r.headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
  r.headers.emplace_back("Access-Control-Max-Age", "600");
  return r;
}

bool is_preflight(const HttpRequest& req) {
  return req.method == "OPTIONS" && !req.origin.empty() && !req.cors_request_method.empty();
}

}  // namespace folio::server
