// server/handlers.h: the endpoint handlers (one per route).
//
// Each takes the shared context and the request, and returns a reply or
// throws ApiError. Generation handlers return a reply holding a submitted
// GenerationJob.
#pragma once

#include <string_view>

#include "server/http_types.h"
#include "server/server_context.h"

namespace folio::server {

HttpReply handle_completions(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_chat(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_embeddings(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_models(ServerContext& ctx, const HttpRequest& req);
// GET /v1/models/{id}: `id` as it appears in the path (percent-encoded).
HttpReply handle_model(ServerContext& ctx, const HttpRequest& req, std::string_view id);
HttpReply handle_tokenize(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_detokenize(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_health(ServerContext& ctx, const HttpRequest& req);
// GET /livez: 200 while the HTTP server answers, draining included (a
// liveness probe; /health is the readiness probe).
HttpReply handle_livez(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_version(ServerContext& ctx, const HttpRequest& req);
HttpReply handle_metrics(ServerContext& ctx, const HttpRequest& req);
// GET /openapi.json (handlers_openapi.cpp).
HttpReply handle_openapi(ServerContext& ctx, const HttpRequest& req);
// GET / and GET /ui/{asset}: the chat page and its files (handlers_web_ui.cpp);
// 404 for a path that names none.
HttpReply handle_web_ui(ServerContext& ctx, const HttpRequest& req, std::string_view path);

}  // namespace folio::server
