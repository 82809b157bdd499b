// model/model.h: a loaded decoder-only transformer and its forward pass.
//
//   gguf::GgufFile file = gguf::GgufFile::open(path);
//   model::Model m = model::Model::load(file, {.precision = Precision::kFast});
//   model::ContiguousKvCache kv(m.config(), /*n_seq=*/1, /*max_tokens=*/4096);
//   model::Workspace ws;  kernels::ThreadPool pool(2);
//   auto logits = m.forward(batch, kv, ws, pool);   // [logit_rows x n_vocab]
//
// The Model is immutable after load and may be shared by threads; all
// mutable state of a step lives in the KvCache and the Workspace.
//
// One forward step over T tokens (all matmuls are [T x in] . W^T products):
//   x = embed(tokens)  (* sqrt(n_embd) for Gemma)       [T x n_embd]
//   per layer:  h = rmsnorm(x);  q,k,v = h.Wq,Wk,Wv (+b);  [q,k = per-head rmsnorm]
//               rope(q,k, positions);  kv.store(k,v)
//               a = attention(q, kv pages of its sequence [, sliding window])
//               x += [rmsnorm](a.Wo);  h = rmsnorm(x)
//               x += [rmsnorm]((act(h.Wg) * h.Wu).Wd)    act: silu, or gelu_tanh (Gemma)
//   logits = rmsnorm(x[logit_rows]) . Wout [, soft-capped]  [R x n_vocab]
// Bracketed steps are those a family's tensors or config ask for (Gemma 3's
// QK-norm, sandwich norms, window and caps).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/decoder_weights.h"
#include "model/kv_cache.h"
#include "model/rope_table.h"
#include "model/weights.h"

namespace folio::model {

struct LoadOptions {
  Precision precision = Precision::kFast;
  // Activation width of the fast path's matmuls (see kernels/matmul.h):
  // 16 keeps the logits at reference grade, 8 is llama.cpp's and faster.
  kernels::ActivationBits activation_bits = kernels::ActivationBits::k16;
};

// Where the last forward() spent its time (seconds, wall clock on the
// calling thread): the engine adds these to its per-stage counters.
struct ForwardTimes {
  double attention = 0;  // norms, Q/K/V/O projections, RoPE, KV store, attention
  double ffn = 0;        // norm, gate/up/down projections, SwiGLU
  double lm_head = 0;    // embedding lookup, final norm, output projection
};

// Sees the input of every linear layer of the decoder blocks before its
// matmul: `rows` activation rows of `cols` floats (the layer's input width),
// row-major, valid only during the call. What calibration needs (imatrix
// sums of squares, AWQ scales, GPTQ Hessians). Called on the thread that runs
// forward(); the output head is not observed (llama-imatrix skips it too).
class LinearInputObserver {
 public:
  virtual ~LinearInputObserver() = default;
  virtual void observe(std::string_view weight_name, const float* x, std::size_t rows,
                       std::size_t cols) = 0;
};

// Scratch buffers of one forward pass; they grow to the largest batch seen
// and are reused, so steady-state decoding does not allocate. One per thread
// that calls forward().
struct Workspace {
  std::vector<float> x, h, q, k, v, att, gate, up, rows, logits;
  std::vector<float> q_sink;    // per token: q as it reads sinks its window has left
  std::vector<float> rope;      // per token: cos, sin of its RoPE angles
  std::vector<float> rope_swa;  // the same for sliding layers with their own base (Gemma 3)
  std::vector<std::vector<kernels::KvPage>> pages;  // per sequence in the batch
  std::vector<float> pooled;                // per Batch::pools range: its hidden-state sum [n_embd]
  std::vector<std::int32_t> seq_slot;       // seq id -> index into pages
  std::vector<std::size_t> extent;          // per sequence: positions to fetch
  std::vector<std::size_t> att_runs;        // attention: first token of each query run
  ForwardTimes times;                       // of the last forward()
  LinearInputObserver* observer = nullptr;  // calibration only; not owned
};

class Model {
 public:
  // Builds the model described by `file` (which must outlive it: weights view
  // its mapping). Throws folio::Error for an unsupported architecture (naming
  // it and the supported ones), missing or misshapen tensors, or features of
  // the file the forward pass does not implement.
  static Model load(const gguf::GgufFile& file, const LoadOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const ArchTraits& traits() const { return traits_; }
  Precision precision() const { return precision_; }
  kernels::ActivationBits activation_bits() const { return activation_bits_; }
  std::size_t n_vocab() const { return config_.n_vocab; }
  // Weight matrices the kernels repacked at load, and the bytes of the copies.
  std::size_t repacked() const { return repacked_; }
  std::size_t repacked_bytes() const { return repacked_bytes_; }

  // Bytes of the weight matrices one token's forward through `layers` (all
  // of them when empty) reads, the output head included, each matrix once:
  // what a memory-bound decode step streams (the speculative drafters'
  // cost against the target's).
  std::size_t forward_weight_bytes(std::span<const std::size_t> layers = {}) const;

  // Runs `batch` (validated; throws folio::Error before touching `kv` when it
  // is malformed or does not fit the cache). Returns the logits of
  // batch.logit_rows, row-major [logit_rows.size() x n_vocab], viewing `ws`;
  // the hidden-state sums of batch.pools are in ws.pooled.
  std::span<const float> forward(const Batch& batch, KvCache& kv, Workspace& ws,
                                 kernels::ThreadPool& pool) const;
  // The same through only `layers` (strictly increasing indices, at least
  // one), then the final norm and output head: the model's own draft with
  // the other layers skipped (self-speculation). Writes K/V of those
  // layers only.
  std::span<const float> forward(const Batch& batch, KvCache& kv, Workspace& ws,
                                 kernels::ThreadPool& pool,
                                 std::span<const std::size_t> layers) const;

 private:
  void attention_block(std::size_t layer, const Batch& batch, KvCache& kv, Workspace& ws,
                       kernels::ThreadPool& pool) const;
  void ffn_block(std::size_t layer, std::size_t n, Workspace& ws, kernels::ThreadPool& pool) const;
  void output_head(const Batch& batch, Workspace& ws, kernels::ThreadPool& pool) const;
  void linear(const Linear& l, const float* x, std::size_t n, float* y,
              kernels::ThreadPool& pool) const;
  // A decoder block's linear: shows its input to ws.observer first.
  void block_linear(const Linear& l, const float* x, std::size_t n, float* y, Workspace& ws,
                    kernels::ThreadPool& pool) const;
  // Block linears that read the same input (q, k, v; gate, up), in one pass
  // of the pool where their kernels allow (kernels::matmul_shared_input).
  struct LinearOut {
    const Linear* l;
    float* y;
  };
  void block_linears(std::initializer_list<LinearOut> outs, const float* x, std::size_t n,
                     Workspace& ws, kernels::ThreadPool& pool) const;

  ModelConfig config_;
  ArchTraits traits_;
  Precision precision_ = Precision::kFast;
  kernels::ActivationBits activation_bits_ = kernels::ActivationBits::k16;
  DecoderWeights weights_;
  RopeTable rope_;
  RopeTable rope_swa_;  // sliding layers' frequencies, when they differ (has_rope_swa_)
  bool has_rope_swa_ = false;
  std::size_t repacked_ = 0;
  std::size_t repacked_bytes_ = 0;
  std::vector<std::size_t> all_layers_;  // 0 .. n_layer - 1
};

}  // namespace folio::model
