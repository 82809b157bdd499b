// kernels/attention.cpp: tiled online-softmax attention for one query token.
//
// For each KV head, positions are visited in tiles of up to tile_rows(hd)
// tokens, gathered across pages. A tile's K and V rows are converted once to
// dense f32 scratch (16 KB each, L1-resident) and shared by every query head
// of the group; for each of those heads the tile's scores are computed, the
// running max m and denominator l are updated (FlashAttention's rescaling:
// acc *= exp(m_old - m_new)), and the p-weighted V rows are added into `out`.
// Nothing is copied per head, and the score matrix is never materialized.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_row.h"

namespace folio::kernels {

namespace cpu {

void load_tile_f32(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                   float* dst) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  for (std::size_t j = 0; j < nt; ++j)
    std::memcpy(dst + j * hd, s + j * row_bytes, hd * sizeof(float));
}

namespace {

template <KvDtype kDtype>
void load_tile_rows(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                    float* dst) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  for (std::size_t j = 0; j < nt; ++j)
    kv_load_head_stored(kDtype, s + j * row_bytes, hd, dst + j * hd);
}

void scores(const float* q, const float* k, std::size_t nt, std::size_t hd, float scale, float* s) {
  for (std::size_t j = 0; j < nt; ++j) {
    float a = 0.0f;
    for (std::size_t i = 0; i < hd; ++i) a += q[i] * k[j * hd + i];
    s[j] = a * scale;
  }
}

float exp_shift(float* s, std::size_t nt, float m) {
  float sum = 0.0f;
  for (std::size_t j = 0; j < nt; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  return sum;
}

void accumulate(const float* p, const float* v, std::size_t nt, std::size_t hd, float* acc) {
  for (std::size_t j = 0; j < nt; ++j) {
    for (std::size_t i = 0; i < hd; ++i) acc[i] += p[j] * v[j * hd + i];
  }
}

const AttentionPrims kScalarF32{load_tile_f32, scores, exp_shift, accumulate};
const AttentionPrims kScalarF16{load_tile_rows<KvDtype::kF16>, scores, exp_shift, accumulate};
const AttentionPrims kScalarI8{load_tile_rows<KvDtype::kI8>, scores, exp_shift, accumulate};
const AttentionPrims kScalarI4{load_tile_rows<KvDtype::kI4>, scores, exp_shift, accumulate};

}  // namespace

const AttentionPrims& scalar_attention_prims(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF16:
      return kScalarF16;
    case KvDtype::kI8:
      return kScalarI8;
    case KvDtype::kI4:
      return kScalarI4;
    case KvDtype::kF32:
      break;
  }
  return kScalarF32;
}

}  // namespace cpu

namespace {

// Positions per tile: 4096 floats (16 KB) of K and as much of V, at least 8.
std::size_t tile_rows(std::size_t hd) {
  return std::max<std::size_t>(8, 4096 / hd);
}

void validate(const AttentionShape& s) {
  FOLIO_CHECK(s.n_heads > 0 && s.n_kv_heads > 0 && s.head_dim > 0, "empty attention shape");
  FOLIO_CHECK(s.n_heads % s.n_kv_heads == 0, "n_heads " + std::to_string(s.n_heads) +
                                                 " not a multiple of n_kv_heads " +
                                                 std::to_string(s.n_kv_heads));
}

struct HeadState {
  float m;  // running max of the scores
  float l;  // running sum of exp(score - m)
};

}  // namespace

void attention_rows(const float* q, std::size_t nq, std::size_t pos0, std::span<const KvPage> pages,
                    const AttentionShape& shape, float* out, const float* q_sink) {
  validate(shape);
  if (nq == 0) return;
  const std::size_t hd = shape.head_dim;
  const std::size_t qd = shape.n_heads * hd;  // floats per query row
  const std::size_t last = pos0 + nq - 1;
  // Each query's tile grid starts at its own first visible position; the
  // rows share tiles only when that is the same for all of them.
  const auto first_of = [&](std::size_t pos) {
    return shape.window != 0 && pos + 1 > shape.window ? pos + 1 - shape.window : 0;
  };
  if (first_of(pos0) != first_of(last)) {
    for (std::size_t i = 0; i < nq; ++i)
      attention(q + i * qd, pos0 + i, pages, shape, out + i * qd,
                q_sink != nullptr ? q_sink + i * qd : nullptr);
    return;
  }
  const std::size_t first = first_of(pos0);
  // Sink positions read before the window (none when they lie inside it).
  const std::size_t sinks = shape.sinks > 0 && first > shape.sinks ? shape.sinks : 0;
  if (q_sink == nullptr || sinks == 0) q_sink = q;
  // Rotated int4 K/V (kv_row.h): scores against H q, outputs rotated back.
  const bool rotated = shape.kv_dtype == KvDtype::kI4 && kv_i4_rotated(shape.head_dim);
  thread_local std::vector<float> q_rotated, q_sink_rotated;
  if (rotated) {
    const auto rotate = [&](const float* src, std::vector<float>& dst) {
      dst.assign(src, src + nq * qd);
      for (std::size_t h = 0; h < nq * shape.n_heads; ++h) kv_hadamard(dst.data() + h * hd, hd);
      return dst.data();
    };
    const bool same = q_sink == q;
    q = rotate(q, q_rotated);
    q_sink = same ? q : rotate(q_sink, q_sink_rotated);
  }
  const cpu::AttentionPrims& prims = cpu::attention_prims(active_isa(), shape.kv_dtype);
  const std::size_t group = shape.n_heads / shape.n_kv_heads;
  const std::size_t head_bytes = kv_head_bytes(shape.kv_dtype, hd);
  const std::size_t row = shape.n_kv_heads * head_bytes;  // bytes per token

  // Scratch grows to the largest shape seen on this thread, then is reused.
  const std::size_t tile = tile_rows(hd);
  thread_local std::vector<HeadState> state;  // [query][head]
  thread_local std::vector<float> scratch;
  state.assign(nq * shape.n_heads, {-std::numeric_limits<float>::infinity(), 0.0f});
  if (scratch.size() < tile * (2 * hd + 1)) scratch.resize(tile * (2 * hd + 1));
  float* const kt = scratch.data();
  float* const vt = kt + tile * hd;
  float* const p = vt + tile * hd;
  std::fill(out, out + nq * qd, 0.0f);

  std::size_t available = 0;
  for (const KvPage& page : pages) available += page.n_tokens;
  FOLIO_CHECK(available >= last + 1, "attention pages hold fewer than the " +
                                         std::to_string(last + 1) + " positions needed");

  for (std::size_t kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
    // Page cursor: positions [base, base + pages[pi].n_tokens) live in page
    // pi. It only moves forward: the sinks come before the window.
    std::size_t pi = 0, base = 0;
    // Visits positions [lo, hi] in tiles against the rows of `qs`. Causal:
    // query i (position pos0 + i) reads up to its own position; else every
    // query reads all of them (the sinks).
    const auto segment = [&](std::size_t lo, std::size_t hi, const float* qs, bool causal) {
      for (std::size_t t0 = lo; t0 <= hi; t0 += tile) {
        // Gather the tile's rows (as many as the last query sees) from as
        // many pages as it spans, once for all queries and the GQA group.
        const std::size_t nt_max = std::min(tile, hi + 1 - t0);
        for (std::size_t filled = 0; filled < nt_max;) {
          const std::size_t t = t0 + filled;
          while (t >= base + pages[pi].n_tokens) base += pages[pi++].n_tokens;
          const std::size_t m = std::min(nt_max - filled, base + pages[pi].n_tokens - t);
          const std::size_t off = (t - base) * row + kvh * head_bytes;
          prims.load_tile(static_cast<const std::uint8_t*>(pages[pi].k) + off, row, m, hd,
                          kt + filled * hd);
          prims.load_tile(static_cast<const std::uint8_t*>(pages[pi].v) + off, row, m, hd,
                          vt + filled * hd);
          filled += m;
        }
        // Query i sees the tile's first nt rows: exactly the operations a
        // single-query call performs, so results do not depend on how
        // queries are grouped.
        for (std::size_t i = causal && t0 > pos0 ? t0 - pos0 : 0; i < nq; ++i) {
          const std::size_t nt = causal ? std::min(tile, pos0 + i + 1 - t0) : nt_max;
          for (std::size_t g = 0; g < group; ++g) {
            const std::size_t h = kvh * group + g;
            float* oh = out + i * qd + h * hd;
            prims.scores(qs + i * qd + h * hd, kt, nt, hd, shape.scale, p);
            if (shape.softcap > 0.0f) {
              for (std::size_t j = 0; j < nt; ++j)
                p[j] = shape.softcap * std::tanh(p[j] / shape.softcap);
            }
            const float tile_max = *std::max_element(p, p + nt);
            HeadState& st = state[i * shape.n_heads + h];
            if (tile_max > st.m) {  // rescale what was accumulated under the old max
              const float corr = std::exp(st.m - tile_max);  // 0 on the first tile
              for (std::size_t k = 0; k < hd; ++k) oh[k] *= corr;
              st.l *= corr;
              st.m = tile_max;
            }
            st.l += prims.exp_shift(p, nt, st.m);
            prims.accumulate(p, vt, nt, hd, oh);
          }
        }
      }
    };
    if (sinks > 0) segment(0, sinks - 1, q_sink, false);
    segment(first, last, q, true);
  }
  for (std::size_t i = 0; i < nq; ++i) {
    for (std::size_t h = 0; h < shape.n_heads; ++h) {
      const float inv = 1.0f / state[i * shape.n_heads + h].l;
      float* oh = out + i * qd + h * hd;
      for (std::size_t k = 0; k < hd; ++k) oh[k] *= inv;
      if (rotated) kv_hadamard(oh, hd);
    }
  }
}

void attention(const float* q, std::size_t pos, std::span<const KvPage> pages,
               const AttentionShape& shape, float* out, const float* q_sink) {
  attention_rows(q, 1, pos, pages, shape, out, q_sink);
}

}  // namespace folio::kernels
