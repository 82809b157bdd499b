// model/forward.cpp: the forward pass shared by the Llama-like families.
//
// Every projection is one matrix-matrix product over all T tokens of the
// step (kernels::matmul), so prefill reads each weight once per step, not
// once per token. Per-token work (norms, RoPE, attention) runs in parallel
// over tokens on the same pool. Reference precision swaps in the scalar
// *_ref ops (f64 accumulation) and uses f32 weights (see weights.h).
//
// Buffers (Workspace), T = batch size, d = n_embd, hd = head_dim:
//   x    [T x d]          residual stream
//   h    [T x d]          normed input of a block / block output
//   q    [T x n_head*hd]  k, v [T x n_head_kv*hd]   att [T x n_head*hd]
//   gate, up [T x n_ff]   rows [R x d]   logits [R x n_vocab]
#include <algorithm>
#include <array>
#include <cmath>

#include "base/attention_window.h"
#include "base/error.h"
#include "base/timer.h"
#include "kernels/attention.h"
#include "kernels/kv_prefetch.h"
#include "kernels/kv_row.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/model.h"

namespace folio::model {

namespace {

// The element-wise / per-token ops of one precision (identical signatures).
// The reference path attends one query at a time (attention_ref has no
// multi-row form: it is the oracle, not a kernel).
void attention_rows_ref(const float* q, std::size_t nq, std::size_t pos0,
                        std::span<const kernels::KvPage> pages,
                        const kernels::AttentionShape& shape, float* out, const float* q_sink,
                        std::size_t /*kv_head_begin*/, std::size_t /*kv_head_end*/,
                        kernels::KvPrefetch* /*next*/) {
  const std::size_t qd = shape.n_heads * shape.head_dim;
  for (std::size_t i = 0; i < nq; ++i) {
    kernels::attention_ref(q + i * qd, pos0 + i, pages, shape, out + i * qd,
                           q_sink != nullptr ? q_sink + i * qd : nullptr);
  }
}

struct Ops {
  decltype(&kernels::rmsnorm) rmsnorm;
  decltype(&kernels::rope_apply) rope_apply;
  decltype(&kernels::swiglu) swiglu;
  decltype(&kernels::geglu) geglu;
  decltype(&kernels::attention_rows_heads) attention_rows;
  bool split_heads;  // attention_rows may run KV head ranges in parallel
};

constexpr Ops kFastOps{kernels::rmsnorm, kernels::rope_apply,           kernels::swiglu,
                       kernels::geglu,   kernels::attention_rows_heads, true};
constexpr Ops kRefOps{kernels::rmsnorm_ref, kernels::rope_apply_ref, kernels::swiglu_ref,
                      kernels::geglu_ref,   attention_rows_ref,      false};

// Query rows per attention call: consecutive positions of one sequence (a
// prefill chunk) share each gathered K/V tile, in runs of at most this many
// (enough runs remain to keep the threads busy).
constexpr std::size_t kQueryRun = 16;

const Ops& ops(Precision p) {
  return p == Precision::kRef ? kRefOps : kFastOps;
}

// Runs fn(t) for t in [0, n) on the pool (inline for a single row).
template <class F>
void for_rows(kernels::ThreadPool& pool, std::size_t n, F&& fn) {
  if (n == 1) {
    fn(std::size_t{0});
    return;
  }
  pool.parallel_for(n, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t t = b; t < e; ++t) fn(t);
  });
}

// Pages covering positions [0, n) of a page list that covers at least n.
void cut_pages(const std::vector<kernels::KvPage>& all, std::size_t n,
               std::vector<kernels::KvPage>& out) {
  out.clear();
  for (const kernels::KvPage& p : all) {
    if (n == 0) break;
    out.push_back(p);
    out.back().n_tokens = std::min(p.n_tokens, n);
    n -= out.back().n_tokens;
  }
}

// y[t] += l.bias for each of the n rows of l's output (no bias: nothing).
void add_bias(const Linear& l, std::size_t n, float* y) {
  if (l.bias.empty()) return;
  const std::size_t rows = l.w.rows();
  for (std::size_t t = 0; t < n; ++t) kernels::add(y + t * rows, l.bias.data(), rows);
}

}  // namespace

void Model::linear(const Linear& l, const float* x, std::size_t n, float* y,
                   kernels::ThreadPool& pool) const {
  kernels::matmul(l.w, x, n, y, pool, activation_bits_);
  add_bias(l, n, y);
}

void Model::block_linear(const Linear& l, const float* x, std::size_t n, float* y, Workspace& ws,
                         kernels::ThreadPool& pool) const {
  if (ws.observer != nullptr) ws.observer->observe(l.name, x, n, l.w.cols());
  linear(l, x, n, y, pool);
}

void Model::block_linears(std::initializer_list<LinearOut> outs, const float* x, std::size_t n,
                          Workspace& ws, kernels::ThreadPool& pool) const {
  std::array<kernels::MatmulOutput, kernels::kMaxSharedOutputs> mm{};
  FOLIO_CHECK(outs.size() <= mm.size(), "block_linears: too many outputs");
  std::size_t m = 0;
  for (const LinearOut& o : outs) {
    if (ws.observer != nullptr) ws.observer->observe(o.l->name, x, n, o.l->w.cols());
    mm[m++] = {&o.l->w, o.y};
  }
  kernels::matmul_shared_input({mm.data(), m}, x, n, pool, activation_bits_);
  for (const LinearOut& o : outs) add_bias(*o.l, n, o.y);
}

std::span<const float> Model::forward(const Batch& batch, KvCache& kv, Workspace& ws,
                                      kernels::ThreadPool& pool) const {
  return forward(batch, kv, ws, pool, all_layers_);
}

std::span<const float> Model::forward(const Batch& batch, KvCache& kv, Workspace& ws,
                                      kernels::ThreadPool& pool,
                                      std::span<const std::size_t> layers) const {
  bool ok = !layers.empty();
  for (std::size_t i = 0; ok && i < layers.size(); ++i)
    ok = layers[i] < weights_.layers.size() && (i == 0 || layers[i] > layers[i - 1]);
  if (!ok) throw Error("forward: the layer list must be increasing indices of the model's layers");
  batch.validate(config_.n_vocab);
  if (batch.empty()) {
    ws.pooled.clear();
    return {};
  }
  kv.begin(batch);
  ws.times = {};
  double t0 = monotonic_seconds();
  const auto lap = [&t0](double& into) {  // ~25 ns a call, 2 per layer
    const double now = monotonic_seconds();
    into += now - t0;
    t0 = now;
  };
  const std::size_t n = batch.size(), d = config_.n_embd;
  ws.x.resize(n * d);
  for (std::size_t t = 0; t < n; ++t) weights_.tok_embd.lookup(batch.tokens[t], &ws.x[t * d]);
  if (traits_.embed_scale) {  // as HF: the f32 rounding of sqrt(n_embd), one multiply
    const auto scale = static_cast<float>(std::sqrt(static_cast<double>(d)));
    for (float& v : ws.x) v *= scale;
  }
  // RoPE angles of each token, once for q and k of every layer (they share
  // the frequency table; sliding layers may have their own): cos then sin,
  // n_rot / 2 values each.
  const std::size_t rot = config_.n_rot;
  const auto angles = [&](const RopeTable& table, std::vector<float>& out) {
    out.resize(n * rot);
    for_rows(pool, n, [&](std::size_t t) {
      kernels::rope_angles_table(static_cast<std::size_t>(batch.positions[t]),
                                 table.inv_freq.data(), rot / 2, table.mscale, &out[t * rot],
                                 &out[t * rot + rot / 2]);
    });
  };
  angles(rope_, ws.rope);
  if (has_rope_swa_) angles(rope_swa_, ws.rope_swa);
  lap(ws.times.lm_head);
  for (const std::size_t l : layers) {
    attention_block(l, batch, kv, ws, pool);
    lap(ws.times.attention);
    ffn_block(l, n, ws, pool);
    lap(ws.times.ffn);
  }
  output_head(batch, ws, pool);
  lap(ws.times.lm_head);
  return {ws.logits.data(), batch.logit_rows.size() * config_.n_vocab};
}

void Model::attention_block(std::size_t layer, const Batch& batch, KvCache& kv, Workspace& ws,
                            kernels::ThreadPool& pool) const {
  const Ops& op = ops(precision_);
  const LayerWeights& w = weights_.layers[layer];
  const LayerConfig& lc = config_.layers[layer];
  const std::size_t n = batch.size(), d = config_.n_embd, hd = config_.head_dim_k;
  const std::size_t q_dim = lc.n_head * hd, kv_dim = lc.n_head_kv * hd;
  const float eps = static_cast<float>(config_.norm_eps);

  ws.h.resize(n * d);
  for_rows(pool, n, [&](std::size_t t) {
    op.rmsnorm(&ws.x[t * d], w.attn_norm.data(), d, eps, &ws.h[t * d]);
  });
  ws.q.resize(n * q_dim);
  ws.k.resize(n * kv_dim);
  ws.v.resize(n * kv_dim);
  block_linears({{&w.wq, ws.q.data()}, {&w.wk, ws.k.data()}, {&w.wv, ws.v.data()}}, ws.h.data(), n,
                ws, pool);
  const std::size_t rot = config_.n_rot;
  const std::vector<float>& rope = has_rope_swa_ && lc.sliding ? ws.rope_swa : ws.rope;
  const RopeTable& table = has_rope_swa_ && lc.sliding ? rope_swa_ : rope_;
  // This layer's own window (0: full attention); a token's sequence may add
  // a sink + window policy (Batch::windows), effective_window() decides.
  const std::int32_t layer_window =
      lc.sliding ? static_cast<std::int32_t>(config_.sliding_window) : 0;
  if (!batch.windows.empty()) ws.q_sink.resize(n * q_dim);
  for_rows(pool, n, [&](std::size_t t) {
    if (!w.q_norm.empty()) {  // QK-norm: each head's q and k normalized before RoPE
      for (std::size_t h = 0; h < lc.n_head; ++h) {
        float* qh = &ws.q[t * q_dim + h * hd];
        op.rmsnorm(qh, w.q_norm.data(), hd, eps, qh);
      }
      for (std::size_t h = 0; h < lc.n_head_kv; ++h) {
        float* kh = &ws.k[t * kv_dim + h * hd];
        op.rmsnorm(kh, w.k_norm.data(), hd, eps, kh);
      }
    }
    const float* cs = &rope[t * rot];
    op.rope_apply(&ws.q[t * q_dim], lc.n_head, hd, rot, cs, cs + rot / 2, traits_.rope_neox);
    op.rope_apply(&ws.k[t * kv_dim], lc.n_head_kv, hd, rot, cs, cs + rot / 2, traits_.rope_neox);
    // A query that reads sinks its window has left reads them as R(-shift) q,
    // rotated back by the gap with this layer's frequencies
    // (base/attention_window.h); the kernel reads that row for no other query.
    const std::int64_t shift =
        sink_shift(effective_window(layer_window, batch.window(t)), batch.positions[t]);
    if (shift > 0) {
      thread_local std::vector<float> back;  // cos, then -sin of the shift's angles
      back.resize(rot);
      kernels::rope_angles_table(static_cast<std::size_t>(shift), table.inv_freq.data(), rot / 2,
                                 1.0f, back.data(), back.data() + rot / 2);
      for (std::size_t j = rot / 2; j < rot; ++j) back[j] = -back[j];
      float* qs = &ws.q_sink[t * q_dim];
      std::copy_n(&ws.q[t * q_dim], q_dim, qs);
      op.rope_apply(qs, lc.n_head, hd, rot, back.data(), back.data() + rot / 2, traits_.rope_neox);
    }
  });
  for (std::size_t t = 0; t < n; ++t) {
    kv.store(layer, batch.seq_ids[t], static_cast<std::size_t>(batch.positions[t]),
             &ws.k[t * kv_dim], &ws.v[t * kv_dim]);
  }

  // One page list per sequence, covering its furthest position in the batch;
  // each token then attends to the prefix [0, pos] of its sequence's list.
  ws.seq_slot.clear();
  std::vector<std::size_t>& extent = ws.extent;
  extent.clear();
  for (std::size_t t = 0; t < n; ++t) {
    const auto seq = static_cast<std::size_t>(batch.seq_ids[t]);
    if (seq >= ws.seq_slot.size()) ws.seq_slot.resize(seq + 1, -1);
    if (ws.seq_slot[seq] < 0) {
      ws.seq_slot[seq] = static_cast<std::int32_t>(extent.size());
      extent.push_back(0);
    }
    auto& e = extent[static_cast<std::size_t>(ws.seq_slot[seq])];
    e = std::max(e, static_cast<std::size_t>(batch.positions[t]) + 1);
  }
  if (ws.pages.size() < extent.size()) ws.pages.resize(extent.size());
  for (std::size_t t = 0; t < n; ++t) {
    const auto seq = batch.seq_ids[t];
    const auto slot = static_cast<std::size_t>(ws.seq_slot[static_cast<std::size_t>(seq)]);
    if (extent[slot] != 0) kv.pages(layer, seq, extent[slot], ws.pages[slot]);
    extent[slot] = 0;  // fetched
  }

  ws.att.resize(n * q_dim);
  std::vector<std::size_t>& runs = ws.att_runs;  // first token of each run, then n
  runs.clear();
  for (std::size_t t = 0; t < n; ++t) {
    if (runs.empty() || t - runs.back() == kQueryRun || batch.seq_ids[t] != batch.seq_ids[t - 1] ||
        batch.positions[t] != batch.positions[t - 1] + 1) {
      runs.push_back(t);
    }
  }
  const std::size_t n_runs = runs.size();
  runs.push_back(n);
  // Fewer runs than threads (a decode of few sequences): each run's KV heads
  // are split over the threads too (disjoint parts of its output rows).
  const auto threads = static_cast<std::size_t>(pool.size());
  const std::size_t parts =
      op.split_heads && n_runs < threads ? std::min<std::size_t>(lc.n_head_kv, threads) : 1;
  // A run is one sequence: one policy (this layer's own window, or the
  // sequence's sink + window policy).
  const auto window_of = [&](std::size_t r) {
    return effective_window(layer_window, batch.window(runs[r]));
  };
  // Run r's pages, through its last position, into `out`.
  const auto run_pages = [&](std::size_t r, std::vector<kernels::KvPage>& out) {
    const std::size_t t = runs[r];
    const auto slot = ws.seq_slot[static_cast<std::size_t>(batch.seq_ids[t])];
    cut_pages(ws.pages[static_cast<std::size_t>(slot)],
              static_cast<std::size_t>(batch.positions[t]) + (runs[r + 1] - t), out);
  };
  const std::size_t row_bytes = lc.n_head_kv * kernels::kv_head_bytes(kv.dtype(), hd);
  pool.parallel_for(n_runs * parts, [&](std::size_t begin, std::size_t end, int) {
    thread_local std::vector<kernels::KvPage> prefix, following;
    for (std::size_t task = begin; task < end; ++task) {
      const std::size_t r = task / parts, part = task % parts;
      const std::size_t t = runs[r], nq = runs[r + 1] - t;
      const auto pos = static_cast<std::size_t>(batch.positions[t]);
      const AttentionWindow aw = window_of(r);
      const kernels::AttentionShape shape{lc.n_head,
                                          lc.n_head_kv,
                                          hd,
                                          static_cast<float>(config_.attention_scale),
                                          kv.dtype(),
                                          static_cast<std::size_t>(aw.window),
                                          static_cast<float>(config_.attn_softcap),
                                          static_cast<std::size_t>(aw.sinks)};
      const float* qs = aw.sinks > 0 ? &ws.q_sink[t * q_dim] : nullptr;  // filled with RoPE above
      run_pages(r, prefix);
      // Whole runs (no head split): a call requests the next run's window
      // rows (kernels/kv_prefetch.h) when that run is a decode (one query,
      // its rows mostly in DRAM; a prefill run's rows are mostly those its
      // sequence's previous run just read). This thread runs that run next
      // unless `task` ends a chunk, and even then more often than not (the
      // pool hands each thread contiguous chunks first).
      kernels::KvPrefetch next;
      if (parts == 1 && r + 1 < n_runs && runs[r + 2] - runs[r + 1] == 1) {
        const std::int64_t pos2 = batch.positions[runs[r + 1]];
        run_pages(r + 1, following);
        next = kernels::KvPrefetch(following,
                                   static_cast<std::size_t>(window_start(window_of(r + 1), pos2)),
                                   static_cast<std::size_t>(pos2) + 1, row_bytes);
      }
      op.attention_rows(&ws.q[t * q_dim], nq, pos, prefix, shape, &ws.att[t * q_dim], qs,
                        part * lc.n_head_kv / parts, (part + 1) * lc.n_head_kv / parts, &next);
    }
  });
  block_linear(w.wo, ws.att.data(), n, ws.h.data(), ws, pool);
  for_rows(pool, n, [&](std::size_t t) {
    if (!w.post_attn_norm.empty())
      op.rmsnorm(&ws.h[t * d], w.post_attn_norm.data(), d, eps, &ws.h[t * d]);
    kernels::add(&ws.x[t * d], &ws.h[t * d], d);
  });
}

void Model::ffn_block(std::size_t layer, std::size_t n, Workspace& ws,
                      kernels::ThreadPool& pool) const {
  const Ops& op = ops(precision_);
  const LayerWeights& w = weights_.layers[layer];
  const std::size_t d = config_.n_embd, ff = config_.layers[layer].n_ff;
  const float eps = static_cast<float>(config_.norm_eps);
  for_rows(pool, n, [&](std::size_t t) {
    op.rmsnorm(&ws.x[t * d], w.ffn_norm.data(), d, eps, &ws.h[t * d]);
  });
  ws.gate.resize(n * ff);
  ws.up.resize(n * ff);
  block_linears({{&w.w_gate, ws.gate.data()}, {&w.w_up, ws.up.data()}}, ws.h.data(), n, ws, pool);
  // In place: each element is read before it is written.
  const auto act = traits_.ffn == FfnActivation::kGeluTanh ? op.geglu : op.swiglu;
  for_rows(pool, n,
           [&](std::size_t t) { act(&ws.gate[t * ff], &ws.up[t * ff], ff, &ws.gate[t * ff]); });
  block_linear(w.w_down, ws.gate.data(), n, ws.h.data(), ws, pool);
  for_rows(pool, n, [&](std::size_t t) {
    if (!w.post_ffn_norm.empty())
      op.rmsnorm(&ws.h[t * d], w.post_ffn_norm.data(), d, eps, &ws.h[t * d]);
    kernels::add(&ws.x[t * d], &ws.h[t * d], d);
  });
}

void Model::output_head(const Batch& batch, Workspace& ws, kernels::ThreadPool& pool) const {
  const std::size_t r = batch.logit_rows.size(), d = config_.n_embd;
  ws.rows.resize(r * d);
  ws.logits.resize(r * config_.n_vocab);
  const float eps = static_cast<float>(config_.norm_eps);
  ws.pooled.assign(batch.pools.size() * d, 0.0F);
  if (!batch.pools.empty()) {  // the output norm of every pooled token, summed per range
    ws.h.resize(d);
    for (std::size_t p = 0; p < batch.pools.size(); ++p) {
      const TokenRange& range = batch.pools[p];
      float* sum = &ws.pooled[p * d];
      for (std::int32_t i = 0; i < range.count; ++i) {
        const std::size_t t = static_cast<std::size_t>(range.first) + static_cast<std::size_t>(i);
        ops(precision_).rmsnorm(&ws.x[t * d], weights_.output_norm.data(), d, eps, ws.h.data());
        for (std::size_t c = 0; c < d; ++c) sum[c] += ws.h[c];
      }
    }
  }
  if (r == 0) return;
  for (std::size_t i = 0; i < r; ++i) {
    const auto t = static_cast<std::size_t>(batch.logit_rows[i]);
    ops(precision_).rmsnorm(&ws.x[t * d], weights_.output_norm.data(), d, eps, &ws.rows[i * d]);
  }
  linear(weights_.output, ws.rows.data(), r, ws.logits.data(), pool);
  if (config_.final_softcap > 0.0) {
    const auto cap = static_cast<float>(config_.final_softcap);
    for_rows(pool, r, [&](std::size_t i) {
      kernels::softcap(&ws.logits[i * config_.n_vocab], config_.n_vocab, cap);
    });
  }
}

}  // namespace folio::model
