// server/router.h: method + path -> handler, with auth and error mapping.
//
// Order of checks: /v1 routes require the API key (401) before anything else
// is revealed; then unknown path (404), wrong method (405, with Allow); then
// the handler. An ApiError from a handler becomes its OpenAI error body; any
// other exception is a folio bug: 500 with a fresh request id, logged.
#pragma once

#include "server/http_types.h"
#include "server/server_context.h"

namespace folio::server {

HttpReply route(ServerContext& ctx, const HttpRequest& req);

}  // namespace folio::server
