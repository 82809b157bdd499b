// server/handlers_info.cpp: models, tokenize/detokenize, health, version, metrics.
#include <nlohmann/json.hpp>

#include "base/timer.h"
#include "server/api_error.h"
#include "server/handlers.h"
#include "server/json_fields.h"
#include "server/response_builder.h"

#ifndef FOLIO_VERSION
#define FOLIO_VERSION "0.0.0"
#endif

namespace folio::server {

using nlohmann::json;

HttpReply handle_models(ServerContext& ctx, const HttpRequest&) {
  json data = json::array();
  for (const auto& name : ctx.model.names) {
    data.push_back({{"id", name},
                    {"object", "model"},
                    {"created", ctx.started_unix},
                    {"owned_by", "folio"},
                    {"root", ctx.model.root},
                    {"parent", nullptr},
                    {"max_model_len", ctx.model.max_model_len}});
  }
  return json_reply(200, dump(json{{"object", "list"}, {"data", data}}));
}

HttpReply handle_tokenize(ServerContext& ctx, const HttpRequest& req) {
  const json body = parse_body(req.body);
  Fields f(body);
  if (auto m = f.string("model"); m && !m->empty() && !ctx.model.serves(*m)) {
    throw ApiError(404, "The model `" + *m + "` does not exist.", "model");
  }
  Stopwatch sw;
  std::vector<TokenId> ids;
  if (const json* messages = f.get("messages")) {
    const bool gen = f.boolean("add_generation_prompt").value_or(true);
    const bool special = f.boolean("add_special_tokens").value_or(false);
    const std::string text = render_chat(*messages, ctx.model, gen);
    ids = ctx.model.tokenizer->encode(text, {.add_special = special, .parse_special = true});
  } else {
    const auto prompt = f.string("prompt");
    if (!prompt) bad_param("prompt", "a string (or send 'messages')");
    const bool special = f.boolean("add_special_tokens").value_or(true);
    ids = ctx.model.tokenizer->encode(*prompt, {.add_special = special, .parse_special = true});
  }
  ctx.metrics.add_stage_seconds("tokenize", sw.seconds());
  return json_reply(200, dump(json{{"count", ids.size()},
                                   {"max_model_len", ctx.model.max_model_len},
                                   {"tokens", ids}}));
}

HttpReply handle_detokenize(ServerContext& ctx, const HttpRequest& req) {
  const json body = parse_body(req.body);
  Fields f(body);
  if (auto m = f.string("model"); m && !m->empty() && !ctx.model.serves(*m)) {
    throw ApiError(404, "The model `" + *m + "` does not exist.", "model");
  }
  const json* tokens = f.get("tokens");
  if (!tokens || !tokens->is_array()) bad_param("tokens", "a list of token ids");
  const auto ids = token_ids(*tokens, "tokens", ctx.model.vocab_size);
  Stopwatch sw;
  const std::string text = ctx.model.tokenizer->decode(ids);
  ctx.metrics.add_stage_seconds("detokenize", sw.seconds());
  return json_reply(200, dump(json{{"prompt", text}}));
}

HttpReply handle_health(ServerContext& ctx, const HttpRequest&) {
  if (ctx.draining) return error_reply(503, "the server is shutting down");
  if (!ctx.engine.healthy()) return error_reply(503, "the engine is not running");
  HttpReply r = json_reply(200, "");
  r.content_type = "text/plain";
  return r;
}

HttpReply handle_version(ServerContext&, const HttpRequest&) {
  return json_reply(200, dump(json{{"version", FOLIO_VERSION}}));
}

HttpReply handle_metrics(ServerContext& ctx, const HttpRequest&) {
  HttpReply r = json_reply(200, ctx.metrics.render(ctx.engine.stats()));
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

}  // namespace folio::server
