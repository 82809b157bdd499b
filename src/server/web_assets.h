// server/web_assets.h: the chat page's files, compiled into the binary.
//
// GET / is the page (webui/index.html); everything it loads is under /ui/:
// folio's own CSS and JavaScript (webui/) and Debian's marked and
// highlight.js, embedded at build time (webui/webui.cmake), so the page works
// with no network and no CDN. The table is generated (web_assets.cpp.in).
#pragma once

#include <span>
#include <string_view>

namespace folio::server {

struct WebAsset {
  std::string_view path;          // "/", "/ui/app.js", ...
  std::string_view content_type;  // "text/javascript; charset=utf-8", ...
  std::string_view etag;          // quoted: "\"3f2a...\"" (a hash of body)
  std::string_view body;
};

std::span<const WebAsset> web_assets();

// The asset served at `path`, or nullptr.
const WebAsset* find_web_asset(std::string_view path);

// The page and its assets: "/" and every path under "/ui/" (an unknown one
// is a 404). They need no API key: the page asks for one when the API does.
inline bool is_web_ui_path(std::string_view path) {
  return path == "/" || path.starts_with("/ui/");
}

}  // namespace folio::server
