// cli/deployment_plan.h: what one `folio serve` replica asks of a container
// orchestrator (Kubernetes requests and limits), for `folio info --json`
// ("deployment"; docs/CONFIG.md, deploy/k8s/render.py).
//
//   memory = weights_mapped     the GGUF file, mmapped; its pages are charged
//                               to the container once read
//          + weights_repacked   the SIMD panel copies made at load (measured)
//          + kv_cache           the paged pool, allocated once (--kv-cache-memory)
//          + runtime            64 MiB (binary, allocator, HTTP, threads)
//                               + 512 B x vocabulary (tokenizer tables, logits)
//                               + 16 B x (n_embd + n_ff + q_dim) per token of
//                                 one step (--max-num-batched-tokens): the
//                                 activations of the widest step
//   cpu    = kernel threads (-t): the pool keeps that many cores busy
//
// The runtime term is an upper bound fitted to the peak RSS of a loaded
// server: with every sequence busy (2048 tokens x 8, 2048 batched tokens)
// the whole plan was 1.15x the measured peak on SmolLM2 (718 vs 623 MiB)
// and 1.13x on Gemma 3 270M (1081 vs 959 MiB); threads did not change the
// peak. tests/python/test_deploy_k8s.py checks it on SmolLM2. The sum is
// rounded up to whole MiB.
#pragma once

#include <cstdint>

namespace folio::cli {

struct DeploymentInputs {
  std::uint64_t file_bytes = 0;      // the model file
  std::uint64_t repacked_bytes = 0;  // model::Model::repacked_bytes() at load
  std::uint64_t kv_cache_bytes = 0;  // the pool the server will allocate
  std::uint64_t vocab_size = 0;
  std::uint64_t n_embd = 0;
  std::uint64_t n_ff = 0;   // the widest layer's
  std::uint64_t q_dim = 0;  // the widest layer's n_head x head_dim_k
  std::uint64_t max_num_batched_tokens = 0;
  std::uint64_t threads = 0;  // resolved (>= 1)
};

struct DeploymentPlan {
  std::uint64_t runtime_bytes = 0;
  std::uint64_t memory_bytes = 0;  // the sum, rounded up to whole MiB
  std::uint64_t cpu = 0;           // cores
};

DeploymentPlan plan_deployment(const DeploymentInputs& in);

// Constants of the runtime term (the header comment says where they come from).
inline constexpr std::uint64_t kRuntimeBaseBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kRuntimeBytesPerVocabEntry = 512;
inline constexpr std::uint64_t kActivationBytesPerWidth = 16;

}  // namespace folio::cli
