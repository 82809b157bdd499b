// server/server_context.cpp: shared handler state and model resolution.
#include "server/server_context.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include "base/error.h"
#include "server/api_error.h"
#include "server/auth.h"

namespace folio::server {
namespace {

std::size_t index_of(const std::deque<ServedModel>& models, const std::string& name,
                     const std::string& what) {
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].model.serves(name)) return i;
  }
  throw Error(what + " names `" + name + "`, which is not a served model");
}

}  // namespace

ServerContext::ServerContext(const ServerConfig& c, const std::vector<ModelSpec>& concrete,
                             const std::vector<VirtualModelSpec>& virtual_models, const Logger& l)
    : config(c),
      log(l),
      api_keys(resolve_api_keys(c.api_keys, c.api_key_file)),
      cors(c.allowed_origins),
      admission(c.max_queue),
      started_unix(unix_now()) {
  if (concrete.empty()) throw Error("the server needs at least one model");
  std::set<std::string> seen;
  const auto claim = [&](const std::string& name) {
    if (name.empty()) throw Error("a served model name is empty");
    if (!seen.insert(name).second) throw Error("the model name `" + name + "` is served twice");
  };
  for (const ModelSpec& spec : concrete) {
    FOLIO_CHECK(spec.model != nullptr && spec.engine != nullptr, "model spec without a model");
    for (const auto& n : spec.model->names) claim(n);
    models.emplace_back(spec);
    models.back().metrics.add_stage_seconds("model_load", spec.model->load_seconds);
  }
  for (const VirtualModelSpec& v : virtual_models) {
    claim(v.name);
    VirtualModel vm{.name = v.name,
                    .small = index_of(models, v.small, "virtual model `" + v.name + "`"),
                    .large = index_of(models, v.large, "virtual model `" + v.name + "`"),
                    .policy = v.policy,
                    .cascade = v.cascade};
    if (vm.small == vm.large) {
      throw Error("virtual model `" + v.name + "` routes between `" + v.small + "` and `" +
                  v.large + "`, which are the same model");
    }
    virtuals.push_back(std::move(vm));
    route_metrics.add_virtual(v.name);
  }
  std::random_device rd;
  salt_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

ServerContext::Target ServerContext::resolve(const std::optional<std::string>& name) {
  if (!name || name->empty()) return Target{.model = &models.front(), .virt = nullptr};
  for (ServedModel& m : models) {
    if (m.model.serves(*name)) return Target{.model = &m, .virt = nullptr};
  }
  for (const VirtualModel& v : virtuals) {
    if (v.name == *name) return Target{.model = nullptr, .virt = &v};
  }
  std::string list;
  for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
  throw ApiError(404, "The model `" + *name + "` does not exist. Served models: " + list + ".",
                 "model");
}

ServedModel& ServerContext::concrete(const std::optional<std::string>& name) {
  const Target t = resolve(name);
  if (t.model == nullptr) {
    throw ApiError(400,
                   "`" + *name +
                       "` is a virtual model (routed per request); name one of its "
                       "concrete models here",
                   "model");
  }
  return *t.model;
}

std::vector<std::string> ServerContext::names() const {
  std::vector<std::string> out;
  for (const ServedModel& m : models)
    out.insert(out.end(), m.model.names.begin(), m.model.names.end());
  for (const VirtualModel& v : virtuals) out.push_back(v.name);
  return out;
}

bool ServerContext::healthy(std::string* why) const {
  for (const ServedModel& m : models) {
    if (!m.engine.healthy()) {
      if (why != nullptr) *why = "the engine of model `" + m.model.name() + "` is not running";
      return false;
    }
  }
  return true;
}

void ServerContext::abort_everywhere(RequestId id) {
  for (ServedModel& m : models) m.engine.abort(id);
}

std::string ServerContext::response_id(const char* prefix) {
  const std::uint64_t k = next_response_.fetch_add(1);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(salt_),
                static_cast<unsigned long long>(k));
  return std::string(prefix) + buf;
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace folio::server
