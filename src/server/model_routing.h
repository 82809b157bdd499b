// server/model_routing.h: a generation request -> the concrete model that
// runs it, routing virtual model names (`auto`) by route::decide.
//
// A concrete name parses against that model. A virtual name parses against
// its small model first: that gives the prompt's token count, whether it
// fits the small context and which features it uses; route::decide then
// picks small or large (hard rules, score, load), and a large pick is parsed
// again with the large model's tokenizer and template. The decision is
// counted in RouteMetrics and reported in x-folio-route-* headers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "route/policy.h"
#include "server/job.h"
#include "server/openai_request.h"
#include "server/server_context.h"

namespace folio::server {

struct RoutedRequest {
  ServedModel* model = nullptr;                  // runs the request
  GenerationRequest request;                     // parsed for `model`
  std::optional<route::RouteDecision> decision;  // set when a virtual model routed it
  const VirtualModel* virt = nullptr;            // ... and this is the virtual model
};

// `body` parsed for model `m` (the chat or the completions form).
GenerationRequest parse_for_model(ApiKind kind, const nlohmann::json& body, const ModelContext& m,
                                  const ServerConfig& cfg, const nlohmann::ordered_json& ordered);

// A request to a virtual model parsed for its small model, before the
// decision: what route::decide reads, and the load at arrival.
struct PendingRoute {
  const VirtualModel* virt = nullptr;
  route::RouteRequest request;  // its input.text views `text`: re-pointed by finish_route
  std::string text;
  route::LoadSnapshot load;
  std::optional<GenerationRequest> on_small;  // none: the small model refused it (400)
};

PendingRoute prepare_route(ServerContext& ctx, const VirtualModel& v, ApiKind kind,
                           const nlohmann::json& body, const nlohmann::ordered_json& ordered);
// True when the decision waits for the policy's learned head: it has one, the
// small model took the request and no hard rule decides it already.
bool needs_head(const PendingRoute& p);
// Decides (with the head's output when given), counts the decision, and
// parses the request again for the large model when that is the pick.
RoutedRequest finish_route(ServerContext& ctx, PendingRoute p, ApiKind kind,
                           const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                           std::optional<double> head_score);

// x-folio-route-model / -reason / -score: the model that answered, why, and
// the score (4 decimals).
HeaderList route_headers(const std::string& model, const std::string& reason, double score);
// The same for a routed request (none when `r` named a concrete model).
HeaderList route_headers(const RoutedRequest& r);

// The routing input of a parsed request: user-visible text (chat: every
// message's text, "\n"-joined; completions: the prompts), user turns, the
// longest prompt's token count and max_tokens.
route::RouteInput route_input(ApiKind kind, const nlohmann::json& body, const GenerationRequest& r,
                              std::string& text_storage);

// Features of `r` (kRouteFeatures) that `lacks` lists.
std::vector<std::string> missing_features(const nlohmann::json& body, const GenerationRequest& r,
                                          const std::vector<std::string>& lacks);

}  // namespace folio::server
