// cli/serve_models.cpp: models and virtual models of `folio serve`.
#include "cli/serve_models.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "base/timer.h"
#include "cli/default_model.h"
#include "cli/model_template.h"
#include "route/calibration_prompts.h"
#include "route/features.h"
#include "route/score.h"

namespace folio::cli {
namespace {

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::size_t index_named(const std::vector<LoadedModel>& models, const std::string& name) {
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].context->serves(name)) return i;
  }
  return models.size();  // the server reports the unknown name
}

// The threshold that sends `share` of the built-in sample to the large model.
double calibrated_threshold(const route::RoutePolicy& p, const server::ModelContext& small,
                            double share) {
  std::vector<route::RouteFeatures> sample;
  for (const std::string& text : route::builtin_calibration_prompts()) {
    route::RouteInput in;
    in.text = text;
    in.prompt_tokens = static_cast<std::int32_t>(
        small.tokenizer->encode(text, {.add_special = true, .parse_special = false}).size());
    sample.push_back(route::extract_features(in, p.features));
  }
  return route::calibrate_policy_threshold(sample, p, share);
}

}  // namespace

LoadedModel load_served_model(const ServeModelPlan& m, std::int64_t kv_cap,
                              const std::shared_ptr<kernels::ThreadPool>& pool, const Logger& log) {
  LoadedModel out;
  const std::string path = resolve_model_path(m.path);
  log.info("folio serve: loading " + path);
  Stopwatch load;
  out.model = load_engine_model(path, m.engine);
  const double load_s = load.seconds();
  engine::EngineConfig config = to_engine_config(m.engine);
  config.kv_cache_memory_cap = kv_cap;
  out.engine = std::make_unique<EngineStack>(*out.model, m.engine, config, pool);
  print_engine_summary(*out.engine);
  const engine::EngineConfig& ec = out.engine->core.config();
  const std::int64_t blocks_per_seq = (ec.max_model_len + ec.block_size - 1) / ec.block_size;
  std::fprintf(stderr,
               "folio: model loaded in %.2f s; the KV pool holds %lld sequences at the full "
               "max-model-len (%d tokens) and more when they are shorter\n",
               load_s,
               static_cast<long long>(out.engine->core.num_kv_blocks() /
                                      std::max<std::int64_t>(blocks_per_seq, 1)),
               ec.max_model_len);
  for (const auto& t : out.model->file->tensors()) {
    out.parameters += t.n_elements;
    out.weight_bytes += t.n_bytes;
  }
  const auto tmpl = model_chat_template(*out.model->file);
  out.context = std::make_unique<server::ModelContext>(
      server::make_model_context(out.model->tok, m.names, path, ec.max_model_len,
                                 server::chat_template_source(m.chat_template, tmpl)));
  out.context->load_seconds = load_s;
  out.context->hidden_size = static_cast<std::int32_t>(out.model->model.config().n_embd);
  return out;
}

void print_memory_summary(const std::vector<LoadedModel>& models, const ServePlan& plan,
                          std::int64_t kv_total) {
  std::string line = "folio: memory of " + std::to_string(models.size()) + " models:";
  std::uint64_t weights = 0;
  std::uint64_t kv = 0;
  for (const LoadedModel& m : models) {
    const auto kv_bytes = static_cast<std::uint64_t>(m.engine->core.kv_bytes());
    line += " " + m.context->name() + " weights " + fixed(mib(m.weight_bytes), 0) + " MiB + KV " +
            fixed(mib(kv_bytes), 0) + " MiB;";
    weights += m.weight_bytes;
    kv += kv_bytes;
  }
  line += " total " + fixed(mib(weights + kv), 0) + " MiB (KV " + fixed(mib(kv), 0) + " MiB of a " +
          fixed(mib(static_cast<std::uint64_t>(kv_total)), 0) + " MiB budget, " +
          (plan.total_kv_memory.empty() ? "25% of MemAvailable at start-up" : "--kv-cache-memory") +
          ")\n";
  std::fputs(line.c_str(), stderr);
}

std::vector<server::VirtualModelSpec> virtual_specs(const ServePlan& plan,
                                                    const std::vector<LoadedModel>& models,
                                                    const Logger& log) {
  std::vector<server::VirtualModelSpec> out;
  for (const VirtualModelPlan& v : plan.virtuals) {
    server::VirtualModelSpec spec{.name = v.name,
                                  .small = v.small,
                                  .large = v.large,
                                  .policy = v.policy.policy,
                                  .cascade = v.cascade};
    std::string how = "configured";
    if (spec.small.empty()) {  // the implicit `auto`: by parameter count
      const auto by_size = [](const LoadedModel& a, const LoadedModel& b) {
        return a.parameters < b.parameters;
      };
      spec.small = std::min_element(models.begin(), models.end(), by_size)->context->name();
      spec.large = std::max_element(models.begin(), models.end(), by_size)->context->name();
      how = "by parameter count";
    }
    const std::size_t small = index_named(models, spec.small);
    std::string threshold = fixed(spec.policy.threshold, 3);
    if (v.policy.large_share && small < models.size()) {
      spec.policy.threshold =
          calibrated_threshold(spec.policy, *models[small].context, *v.policy.large_share);
      threshold = fixed(spec.policy.threshold, 3) +
                  " (calibrated: " + fixed(*v.policy.large_share * 100, 0) +
                  "% of the built-in sample goes large)";
    }
    std::string head;
    if (const auto& h = spec.policy.head; h != nullptr && small < models.size()) {
      const std::int32_t width = models[small].context->hidden_size;
      if (static_cast<std::int64_t>(h->n_embd) != width) {
        throw Error("virtual model `" + spec.name + "`: the route head reads " +
                    std::to_string(h->n_embd) + " values but the small model " + spec.small +
                    " pools " + std::to_string(width));
      }
      head = "; learned head over " + std::to_string(h->n_embd) + " pooled values (weight " +
             fixed(spec.policy.head_weight, 2) + ")";
    }
    log.info("virtual model `" + spec.name + "`: small " + spec.small + ", large " + spec.large +
             " (" + how + "); score threshold " + threshold + head +
             (spec.cascade.enabled ? "; cascade on" : ""));
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace folio::cli
