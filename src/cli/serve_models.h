// cli/serve_models.h: loading the models of a serve plan, and the virtual
// models over them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/log.h"
#include "cli/engine_flags.h"
#include "cli/serve_plan.h"
#include "kernels/thread_pool.h"
#include "server/model_context.h"
#include "server/served_model.h"

namespace folio::cli {

struct LoadedModel {
  std::unique_ptr<EngineModel> model;
  std::unique_ptr<EngineStack> engine;  // refers to *model
  std::unique_ptr<server::ModelContext> context;
  std::uint64_t parameters = 0;  // weight elements, for picking small and large
  std::uint64_t weight_bytes = 0;
};

// Loads `m` (its KV budget capped at `kv_cap` unless set; 0: the engine's
// default rule) with kernels on `pool`, printing its engine summary.
LoadedModel load_served_model(const ServeModelPlan& m, std::int64_t kv_cap,
                              const std::shared_ptr<kernels::ThreadPool>& pool, const Logger& log);

// One line: weights and KV of every model and their total, beside the KV
// budget (`kv_total`, from split_kv_budget) and where it came from.
void print_memory_summary(const std::vector<LoadedModel>& models, const ServePlan& plan,
                          std::int64_t kv_total);

// The plan's virtual models for the server: the implicit `auto` gets the
// fewest-parameter model as small and the most-parameter one as large; a
// policy with large_share gets its threshold calibrated on the built-in
// prompt sample (route/calibration_prompts.h) with the small model's
// tokenizer. Logs each rule.
std::vector<server::VirtualModelSpec> virtual_specs(const ServePlan& plan,
                                                    const std::vector<LoadedModel>& models,
                                                    const Logger& log);

}  // namespace folio::cli
