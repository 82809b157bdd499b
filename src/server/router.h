// server/router.h: method + path -> handler, with auth and error mapping.
//
// Order of checks: a CORS preflight on a known route is answered first
// (server/cors.h); then every route but /health, the chat page (/, /ui/*)
// and /metrics (unless --metrics-require-key) requires an API key (401) before anything else is
// revealed (server/auth.h); then unknown path (404), wrong method (405, with
// Allow); then the handler. Every reply to an allowed Origin carries its CORS
// headers; a load-shedding error (429, 503) carries Retry-After. An ApiError from a handler becomes
// its OpenAI error body; any other exception is a folio bug: 500 with a fresh request id, logged.
#pragma once

#include "server/http_types.h"
#include "server/server_context.h"

namespace folio::server {

HttpReply route(ServerContext& ctx, const HttpRequest& req);

}  // namespace folio::server
