// server/handlers_info.cpp: models, tokenize/detokenize, health, liveness, version,
// metrics.
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

namespace {

json model_card(const ServerContext& ctx, const std::string& id, const ModelContext& m) {
  return json{{"id", id},
              {"object", "model"},
              {"created", ctx.started_unix},
              {"owned_by", "folio"},
              {"root", m.root},
              {"parent", nullptr},
              {"max_model_len", m.max_model_len}};
}

// A virtual model: its own card, `root` naming the models it routes between
// and `max_model_len` the large model's (the router sends what does not fit
// the small one there).
json virtual_card(const ServerContext& ctx, const VirtualModel& v) {
  const ModelContext& small = ctx.models[v.small].model;
  const ModelContext& large = ctx.models[v.large].model;
  json card = model_card(ctx, v.name, large);
  card["root"] = nullptr;
  card["folio_route"] = {
      {"small", small.name()}, {"large", large.name()}, {"threshold", v.policy.threshold}};
  return card;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

HttpReply handle_models(ServerContext& ctx, const HttpRequest&) {
  json data = json::array();
  for (const ServedModel& m : ctx.models) {
    for (const auto& name : m.model.names) data.push_back(model_card(ctx, name, m.model));
  }
  for (const VirtualModel& v : ctx.virtuals) data.push_back(virtual_card(ctx, v));
  return json_reply(200, dump(json{{"object", "list"}, {"data", data}}));
}

HttpReply handle_model(ServerContext& ctx, const HttpRequest&, std::string_view id_in_path) {
  const std::string id = percent_decode(id_in_path);
  const ServerContext::Target t = ctx.resolve(id);
  if (t.virt != nullptr) return json_reply(200, dump(virtual_card(ctx, *t.virt)));
  return json_reply(200, dump(model_card(ctx, id, t.model->model)));
}

HttpReply handle_tokenize(ServerContext& ctx, const HttpRequest& req) {
  const json body = parse_body(req.body);
  Fields f(body);
  ServedModel& target = ctx.concrete(f.string("model"));
  const ModelContext& model = target.model;
  Stopwatch sw;
  std::vector<TokenId> ids;
  // Every field is read or refused: prompt or messages (not both), and
  // add_generation_prompt only with messages.
  if (const json* messages = f.get("messages")) {
    if (f.get("prompt")) {
      throw ApiError(400, "give either prompt or messages, not both", "prompt");
    }
    const bool gen = f.boolean("add_generation_prompt").value_or(true);
    const bool special = f.boolean("add_special_tokens").value_or(false);
    f.refuse_unread();
    const std::string text = render_chat(*messages, model, gen);
    ids = model.tokenizer->encode(text, {.add_special = special, .parse_special = true});
  } else {
    const auto prompt = f.string("prompt");
    if (!prompt) bad_param("prompt", "a string (or send 'messages')");
    if (f.get("add_generation_prompt")) {
      throw ApiError(400, "add_generation_prompt is read only with messages",
                     "add_generation_prompt");
    }
    const bool special = f.boolean("add_special_tokens").value_or(true);
    f.refuse_unread();
    ids = model.tokenizer->encode(*prompt, {.add_special = special, .parse_special = true});
  }
  target.metrics.add_stage_seconds("tokenize", sw.seconds());
  return json_reply(
      200,
      dump(json{{"count", ids.size()}, {"max_model_len", model.max_model_len}, {"tokens", ids}}));
}

HttpReply handle_detokenize(ServerContext& ctx, const HttpRequest& req) {
  const json body = parse_body(req.body);
  Fields f(body);
  ServedModel& target = ctx.concrete(f.string("model"));
  const json* tokens = f.get("tokens");
  if (!tokens || !tokens->is_array()) bad_param("tokens", "a list of token ids");
  f.refuse_unread();
  const auto ids = token_ids(*tokens, "tokens", target.model.vocab_size);
  Stopwatch sw;
  const std::string text = target.model.tokenizer->decode(ids);
  target.metrics.add_stage_seconds("detokenize", sw.seconds());
  return json_reply(200, dump(json{{"prompt", text}}));
}

HttpReply handle_health(ServerContext& ctx, const HttpRequest&) {
  if (ctx.draining) return error_reply(503, "the server is shutting down");
  std::string why;
  if (!ctx.healthy(&why)) return error_reply(503, why);
  HttpReply r = json_reply(200, "");
  r.content_type = "text/plain";
  return r;
}

// Liveness, as Kubernetes means it: a restart would help only when the
// process no longer answers, so this checks nothing else. A draining server
// or an engine stalled behind a long step is alive (a restart would lose its
// requests); /health takes such a replica out of the load balancer instead.
HttpReply handle_livez(ServerContext&, const HttpRequest&) {
  HttpReply r = json_reply(200, "");
  r.content_type = "text/plain";
  return r;
}

HttpReply handle_version(ServerContext&, const HttpRequest&) {
  return json_reply(200, dump(json{{"version", FOLIO_VERSION}}));
}

HttpReply handle_metrics(ServerContext& ctx, const HttpRequest&) {
  std::vector<std::string> parts;
  for (const ServedModel& m : ctx.models) parts.push_back(m.metrics.render(m.engine.stats()));
  HttpReply r = json_reply(200, merge_expositions(parts) + ctx.route_metrics.render());
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

}  // namespace folio::server
