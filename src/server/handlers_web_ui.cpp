// server/handlers_web_ui.cpp: GET / and GET /ui/{asset}, the chat page
// (web_assets.h).
//
// Every asset is revalidated on each load (Cache-Control: no-cache) against
// its ETag, a hash of its bytes: the paths stay fixed while the content
// changes with the binary, so a browser must never reuse a stale copy, and a
// 304 costs one small round trip. The page gets a Content-Security-Policy
// that allows only its own scripts, styles and connections: answers are
// model output rendered as markdown, and the page holds the API key.
#include <string>

#include "server/api_error.h"
#include "server/handlers.h"
#include "server/web_assets.h"

namespace folio::server {
namespace {

constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// True when `if_none_match` (a list of ETags, or "*") names `etag`.
bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  if (if_none_match == "*") return true;
  std::size_t pos = 0;
  while ((pos = if_none_match.find(etag, pos)) != std::string_view::npos) {
    const std::size_t end = pos + etag.size();
    const bool starts = pos == 0 || if_none_match[pos - 1] == ' ' ||
                        if_none_match[pos - 1] == ',' || if_none_match[pos - 1] == '/';
    const bool ends =
        end == if_none_match.size() || if_none_match[end] == ',' || if_none_match[end] == ' ';
    if (starts && ends) return true;
    pos = end;
  }
  return false;
}

std::string asset_list() {
  std::string names;
  for (const WebAsset& a : web_assets()) {
    if (!names.empty()) names += ", ";
    names += a.path;
  }
  return names;
}

}  // namespace

HttpReply handle_web_ui(ServerContext&, const HttpRequest& req, std::string_view path) {
  const WebAsset* asset = find_web_asset(path);
  if (!asset) {
    throw ApiError(404, "web UI asset " + std::string(path) +
                            " not found (the page's files: " + asset_list() + ")");
  }
  HttpReply r;
  r.content_type = std::string(asset->content_type);
  r.headers = {{"Cache-Control", "no-cache"},
               {"ETag", std::string(asset->etag)},
               {"X-Content-Type-Options", "nosniff"}};
  if (path == "/") {
    r.headers.emplace_back("Content-Security-Policy", kPagePolicy);
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
  }
  if (etag_matches(req.if_none_match, asset->etag)) {
    r.status = 304;  // the browser's copy is current: headers only
    return r;
  }
  r.body = std::string(asset->body);
  return r;
}

}  // namespace folio::server
