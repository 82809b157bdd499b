// server/served_model.h: one concrete model the server holds, and one
// virtual model (a routing rule over two concrete ones).
//
// A concrete model is its ModelContext (tokenizer, template, names), the
// engine that runs it and its own /metrics series (label model_name). A
// virtual model (`auto` by default when several models are served) names a
// small and a large concrete model and the policy that picks between them
// for each request (route/policy.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "route/policy.h"
#include "server/confidence.h"
#include "server/metrics.h"
#include "server/model_context.h"

namespace folio::server {

// How the CLI (or a test) describes a concrete model to the server.
struct ModelSpec {
  const ModelContext* model = nullptr;  // not owned; outlives the server
  engine::EngineClient* engine = nullptr;
  // Request features this model must not be sent by a router (config
  // "lacks": "tools", "structured_output", "logprobs"); a request that uses
  // one goes to the large model. Naming the model directly still works.
  std::vector<std::string> lacks;
};

struct VirtualModelSpec {
  std::string name;
  std::string small;  // a served name of a concrete model
  std::string large;
  route::RoutePolicy policy;
  CascadePolicy cascade;  // off unless configured
};

struct ServedModel {
  ServedModel(const ModelSpec& spec)  // NOLINT(google-explicit-constructor)
      : model(*spec.model), engine(*spec.engine), lacks(spec.lacks), metrics(spec.model->name()) {}

  const ModelContext& model;
  engine::EngineClient& engine;
  std::vector<std::string> lacks;
  ServerMetrics metrics;
};

struct VirtualModel {
  std::string name;
  std::size_t small = 0;  // index into the concrete models
  std::size_t large = 0;
  route::RoutePolicy policy;
  CascadePolicy cascade;
};

// Request features a router checks against ModelSpec::lacks.
inline constexpr const char* kRouteFeatures[] = {"tools", "structured_output", "logprobs"};

}  // namespace folio::server
