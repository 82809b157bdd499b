#include "cli/deployment_plan.h"

namespace folio::cli {

DeploymentPlan plan_deployment(const DeploymentInputs& in) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  DeploymentPlan p;
  const std::uint64_t width = in.n_embd + in.n_ff + in.q_dim;
  p.runtime_bytes = kRuntimeBaseBytes + kRuntimeBytesPerVocabEntry * in.vocab_size +
                    kActivationBytesPerWidth * width * in.max_num_batched_tokens;
  const std::uint64_t total =
      in.file_bytes + in.repacked_bytes + in.kv_cache_bytes + p.runtime_bytes;
  p.memory_bytes = (total + kMiB - 1) / kMiB * kMiB;
  p.cpu = in.threads;
  return p;
}

}  // namespace folio::cli
