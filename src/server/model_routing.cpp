// server/model_routing.cpp: resolving and routing a request's `model`.
#include "server/model_routing.h"

#include <algorithm>
#include <cstdio>

#include "server/api_error.h"
#include "server/json_fields.h"

namespace folio::server {
namespace {

using nlohmann::json;

void append_text(const json& content, std::string& out) {
  if (content.is_string()) {
    out += content.get_ref<const std::string&>();
    out += '\n';
  } else if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        out += part["text"].get_ref<const std::string&>();
        out += '\n';
      }
    }
  }
}

// Would every prompt, with what it may generate, fit `m`'s context?
bool fits(const GenerationRequest& r, const ModelContext& m) {
  const std::int64_t gen = r.params.max_tokens ? *r.params.max_tokens : 1;
  return std::all_of(r.prompts.begin(), r.prompts.end(), [&](const auto& p) {
    return static_cast<std::int64_t>(p.size()) + gen <= m.max_model_len;
  });
}

}  // namespace

GenerationRequest parse_for_model(ApiKind kind, const json& body, const ModelContext& m,
                                  const ServerConfig& cfg, const nlohmann::ordered_json& ordered) {
  return kind == ApiKind::kChat ? parse_chat_request(body, m, cfg, &ordered)
                                : parse_completion_request(body, m, cfg, &ordered);
}

route::RouteInput route_input(ApiKind kind, const json& body, const GenerationRequest& r,
                              std::string& text_storage) {
  route::RouteInput in;
  text_storage.clear();
  if (kind == ApiKind::kChat) {
    in.turns = 0;
    if (const auto it = body.find("messages"); it != body.end() && it->is_array()) {
      for (const json& m : *it) {
        if (!m.is_object()) continue;
        if (const auto c = m.find("content"); c != m.end()) append_text(*c, text_storage);
        if (const auto role = m.find("role"); role != m.end() && *role == "user") ++in.turns;
      }
    }
    in.turns = std::max(in.turns, 1);
  } else {
    for (const std::string& t : r.prompt_texts) text_storage += t + "\n";
  }
  in.text = text_storage;
  for (const auto& p : r.prompts) {
    in.prompt_tokens = std::max(in.prompt_tokens, static_cast<std::int32_t>(p.size()));
  }
  in.max_tokens = r.params.max_tokens.value_or(0);
  return in;
}

std::vector<std::string> missing_features(const json& body, const GenerationRequest& r,
                                          const std::vector<std::string>& lacks) {
  const auto tools = body.find("tools");
  const bool uses_tools = tools != body.end() && tools->is_array() && !tools->empty();
  std::vector<std::string> out;
  for (const std::string& f : lacks) {
    if ((f == "tools" && uses_tools) || (f == "structured_output" && r.grammar && !uses_tools) ||
        (f == "logprobs" && r.want_logprobs)) {
      out.push_back(f);
    }
  }
  return out;
}

PendingRoute prepare_route(ServerContext& ctx, const VirtualModel& v, ApiKind kind,
                           const json& body, const nlohmann::ordered_json& ordered) {
  ServedModel& small = ctx.models[v.small];
  ServedModel& large = ctx.models[v.large];
  PendingRoute p;
  p.virt = &v;
  try {
    p.on_small = parse_for_model(kind, body, small.model, ctx.config, ordered);
  } catch (const ApiError& e) {
    if (e.status() != 400) throw;
    p.request.small_missing.emplace_back("request");  // the small model cannot take it as sent
  }
  if (p.on_small) {
    p.request.input = route_input(kind, body, *p.on_small, p.text);
    p.request.fits_small = fits(*p.on_small, small.model);
    p.request.small_missing = missing_features(body, *p.on_small, small.lacks);
  }
  const engine::EngineStats large_stats = large.engine.stats();
  p.load.large_waiting = large_stats.num_waiting;
  if (large_stats.num_waiting > 0) p.load.large_queue_wait_s = large.metrics.recent_queue_seconds();
  return p;
}

bool needs_head(const PendingRoute& p) {
  return p.virt->policy.head != nullptr && p.on_small && p.request.fits_small &&
         p.request.small_missing.empty();
}

RoutedRequest finish_route(ServerContext& ctx, PendingRoute p, ApiKind kind, const json& body,
                           const nlohmann::ordered_json& ordered,
                           std::optional<double> head_score) {
  const VirtualModel& v = *p.virt;
  ServedModel& small = ctx.models[v.small];
  ServedModel& large = ctx.models[v.large];
  p.request.input.text = p.text;
  p.request.head_score = head_score;
  route::RouteDecision d = route::decide(p.request, v.policy, p.load);
  ServedModel& chosen = d.target == route::Target::kSmall && p.on_small ? small : large;
  ctx.route_metrics.record(v.name, chosen.model.name(), d.reason, d.score);
  RoutedRequest out{.model = &chosen, .request = {}, .decision = std::move(d), .virt = &v};
  out.request = &chosen == &small ? std::move(*p.on_small)
                                  : parse_for_model(kind, body, large.model, ctx.config, ordered);
  return out;
}

HeaderList route_headers(const std::string& model, const std::string& reason, double score) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", score);
  return {{"x-folio-route-model", model},
          {"x-folio-route-reason", reason},
          {"x-folio-route-score", text}};
}

HeaderList route_headers(const RoutedRequest& r) {
  if (!r.decision) return {};
  return route_headers(r.model->model.name(), r.decision->reason, r.decision->score);
}

}  // namespace folio::server
