// kernels/attention.cpp: tiled online-softmax attention for one query token.
//
// For each KV head, positions are visited in tiles of up to tile_rows(hd)
// tokens, gathered across pages. For a run of several queries, a tile's K
// and V rows are converted once to dense f32 scratch (16 KB each,
// L1-resident) and shared by every query and query head of the group; a
// single query (decode) reads f32 / f16 rows where they lie in the pages,
// page part by page part, at the levels that have those primitives (the
// same floats, so the same bits, without the tile's stores and reloads).
// The group's heads are scored together (each K row loaded once for all of
// them), then each head's running max m and denominator l are updated
// (FlashAttention's rescaling: acc *= exp(m_old - m_new)), and the
// p-weighted V rows are added into the group's rows of `out` together.
// Nothing is copied per head, and the score matrix is never materialized.
// A single query's first KV head pass prefetches its rows ~32 KB ahead;
// given the next call's cursor (kv_prefetch.h), a call requests that
// call's rows into L2, a share at each tile visit.
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
#include "kernels/kv_prefetch.h"
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

void scores(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
            float scale, float* s, std::size_t s_stride, float* max) {
  for (std::size_t g = 0; g < heads; ++g) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < nt; ++j) {
      float a = 0.0f;
      for (std::size_t i = 0; i < hd; ++i) a += q[g * hd + i] * k[j * hd + i];
      s[g * s_stride + j] = a * scale;
      m = std::max(m, a * scale);
    }
    max[g] = m;
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

void accumulate(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                std::size_t nt, std::size_t hd, float* acc) {
  for (std::size_t g = 0; g < heads; ++g) {
    for (std::size_t j = 0; j < nt; ++j) {
      for (std::size_t i = 0; i < hd; ++i) acc[g * hd + i] += p[g * p_stride + j] * v[j * hd + i];
    }
  }
}

const AttentionPrimsByDtype kScalarPrims{
    {load_tile_f32, scores, exp_shift, accumulate, nullptr, nullptr},
    {load_tile_rows<KvDtype::kF16>, scores, exp_shift, accumulate, nullptr, nullptr},
    {load_tile_rows<KvDtype::kI8>, scores, exp_shift, accumulate, nullptr, nullptr},
    {load_tile_rows<KvDtype::kI4>, scores, exp_shift, accumulate, nullptr, nullptr}};

}  // namespace

const AttentionPrims& scalar_attention_prims(KvDtype dtype) {
  return kScalarPrims[dtype];
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
  attention_rows_heads(q, nq, pos0, pages, shape, out, q_sink, 0, shape.n_kv_heads);
}

void attention_rows_heads(const float* q, std::size_t nq, std::size_t pos0,
                          std::span<const KvPage> pages, const AttentionShape& shape, float* out,
                          const float* q_sink, std::size_t kv_head_begin, std::size_t kv_head_end,
                          KvPrefetch* next) {
  validate(shape);
  FOLIO_CHECK(kv_head_begin <= kv_head_end && kv_head_end <= shape.n_kv_heads,
              "attention: KV head range outside the shape");
  if (nq == 0 || kv_head_begin == kv_head_end) {
    if (next != nullptr) next->advance(next->remaining());
    return;
  }
  const std::size_t hd = shape.head_dim;
  const std::size_t qd = shape.n_heads * hd;  // floats per query row
  const std::size_t last = pos0 + nq - 1;
  // Query i (position pos0 + i) reads its window [first(i), pos0 + i] and,
  // when the window has left them, the sinks [0, sinks) against q_sink.
  // Sinks that touch or overlap the window make one range from 0.
  const auto first_of = [&](std::size_t i) -> std::size_t {
    const std::size_t pos = pos0 + i;
    const std::size_t f = shape.window != 0 && pos + 1 > shape.window ? pos + 1 - shape.window : 0;
    return shape.sinks > 0 && f <= shape.sinks ? 0 : f;
  };
  const auto reads_sinks = [&](std::size_t i) { return shape.sinks > 0 && first_of(i) > 0; };
  if (q_sink == nullptr) q_sink = q;
  const std::size_t group = shape.n_heads / shape.n_kv_heads;
  // This call's query heads (those of its KV heads).
  const std::size_t h_begin = kv_head_begin * group, h_end = kv_head_end * group;
  // Rotated int4 K/V (kv_row.h): scores against H q, outputs rotated back.
  const bool rotated = shape.kv_dtype == KvDtype::kI4 && kv_i4_rotated(shape.head_dim);
  thread_local std::vector<float> q_rotated, q_sink_rotated;
  if (rotated) {
    const auto rotate = [&](const float* src, std::vector<float>& dst) {
      dst.assign(src, src + nq * qd);
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t h = h_begin; h < h_end; ++h) kv_hadamard(dst.data() + i * qd + h * hd, hd);
      return dst.data();
    };
    const bool same = q_sink == q;
    q = rotate(q, q_rotated);
    q_sink = same ? q : rotate(q_sink, q_sink_rotated);
  }
  const cpu::AttentionPrims& prims = cpu::attention_prims(active_isa(), shape.kv_dtype);
  const std::size_t head_bytes = kv_head_bytes(shape.kv_dtype, hd);
  const std::size_t row = shape.n_kv_heads * head_bytes;  // bytes per token

  // Scratch grows to the largest shape seen on this thread, then is reused.
  const std::size_t tile = tile_rows(hd);
  thread_local std::vector<HeadState> state;  // [query][head]
  thread_local std::vector<float> scratch;
  state.assign(nq * shape.n_heads, {-std::numeric_limits<float>::infinity(), 0.0f});
  // One query reads f32 / f16 rows in place where the level can (no tiles
  // to convert); several share converted tiles.
  const bool in_place = nq == 1 && prims.scores_rows != nullptr;
  // One query (decode): the first KV head's pass over the positions requests
  // this call's K/V rows ~32 KB ahead of the tile it reads (the pages lie
  // anywhere, so the hardware prefetcher loses the stream at every page;
  // measured: a decode step of 32 sequences' attention from DRAM ~10 %
  // faster); the other heads then read what the first brought in. A run of
  // queries (prefill) reads recent rows, mostly cached.
  const std::size_t ahead =
      std::max<std::size_t>(1, (32 << 10) / (2 * (kv_head_end - kv_head_begin) * head_bytes));
  // The next call's share per tile visit: its rows over this call's visits
  // (a KV head's pass over the sinks, then over the window, in tiles).
  std::size_t next_share = 0;
  if (next != nullptr) {
    const std::size_t lo = first_of(0);  // first_of never decreases with i
    std::size_t visits = last / tile - lo / tile + 1;
    if (reads_sinks(nq - 1)) visits += (shape.sinks - 1) / tile + 1;
    next_share = next->remaining() / (visits * (kv_head_end - kv_head_begin)) + 1;
  }
  // K and V tiles, then the group's scores [group x tile], their maxima and
  // a page part's maxima.
  const std::size_t scratch_floats = tile * (2 * hd + group) + 2 * group;
  if (scratch.size() < scratch_floats) scratch.resize(scratch_floats);
  float* const kt = scratch.data();
  float* const vt = kt + tile * hd;
  float* const p = vt + tile * hd;
  float* const tile_max = p + tile * group;
  float* const part_max = tile_max + group;
  // Only this call's heads of each output row: other calls may own the rest.
  for (std::size_t i = 0; i < nq; ++i)
    std::fill(out + i * qd + h_begin * hd, out + i * qd + h_end * hd, 0.0f);

  std::size_t available = 0;
  for (const KvPage& page : pages) available += page.n_tokens;
  FOLIO_CHECK(available >= last + 1, "attention pages hold fewer than the " +
                                         std::to_string(last + 1) + " positions needed");

  for (std::size_t kvh = kv_head_begin; kvh < kv_head_end; ++kvh) {
    // Page cursor: positions [base, base + pages[pi].n_tokens) live in page
    // pi. It only moves forward: the sinks come before the window.
    std::size_t pi = 0, base = 0;
    // Visits, for every query i, positions [lo(i), hi(i)] (none when lo > hi)
    // against its row of `qs`, in tiles aligned to multiples of `tile`: the
    // rows of a tile that any query reads are gathered once (they lie in
    // [min lo, max hi], which every page in between covers), and each query
    // scores exactly its part of each tile. A query's operations are the same
    // whatever queries share the call, so row i is bit-identical to a
    // single-query call.
    const auto segment = [&](auto lo, auto hi, const float* qs) {
      std::size_t lo_min = std::numeric_limits<std::size_t>::max(), hi_max = 0;
      for (std::size_t i = 0; i < nq; ++i) {
        if (lo(i) > hi(i)) continue;
        lo_min = std::min(lo_min, lo(i));
        hi_max = std::max(hi_max, hi(i));
      }
      if (lo_min > hi_max) return;
      // Prefetch cursor: positions [lo_min, pf_next) requested, page pf_pi.
      // Its page walk is written out rather than shared with each_part's:
      // GCC 12 dropped every prefetch when both ran through one generic walk.
      std::size_t pf_pi = pi, pf_base = base, pf_next = lo_min;
      const auto prefetch_through = [&](std::size_t end) {  // positions through `end`
        for (std::size_t t = pf_next; t <= end;) {
          while (t >= pf_base + pages[pf_pi].n_tokens) pf_base += pages[pf_pi++].n_tokens;
          const std::size_t m = std::min(end + 1 - t, pf_base + pages[pf_pi].n_tokens - t);
          const KvPage& pg = pages[pf_pi];
          if (pg.k != nullptr) {
            // Rows [t, t + m) of this call's heads (and, between them, the
            // other heads' bytes when the range is partial).
            const std::size_t off = (t - pf_base) * row + kv_head_begin * head_bytes;
            const std::size_t span = (m - 1) * row + (kv_head_end - kv_head_begin) * head_bytes;
            for (std::size_t o = 0; o < span; o += 64) {
              __builtin_prefetch(static_cast<const std::uint8_t*>(pg.k) + off + o, 0, 3);
              __builtin_prefetch(static_cast<const std::uint8_t*>(pg.v) + off + o, 0, 3);
            }
          }
          t += m;
        }
        pf_next = std::max(pf_next, end + 1);
      };
      for (std::size_t t0 = lo_min / tile * tile; t0 <= hi_max; t0 += tile) {
        const std::size_t g0 = std::max(t0, lo_min), g1 = std::min(t0 + tile - 1, hi_max);
        if (nq == 1 && kvh == kv_head_begin) prefetch_through(std::min(hi_max, g1 + ahead));
        if (next != nullptr) next->advance(next_share);
        // f(page bytes offset of position t's head row, t, m) for the page
        // parts [t, t + m) of positions [from, to], moving the cursor.
        const auto each_part = [&](std::size_t from, std::size_t to, auto&& f) {
          for (std::size_t t = from; t <= to;) {
            while (t >= base + pages[pi].n_tokens) base += pages[pi++].n_tokens;
            const std::size_t m = std::min(to + 1 - t, base + pages[pi].n_tokens - t);
            f((t - base) * row + kvh * head_bytes, t, m);
            t += m;
          }
        };
        if (!in_place) {
          each_part(g0, g1, [&](std::size_t off, std::size_t t, std::size_t m) {
            prims.load_tile(static_cast<const std::uint8_t*>(pages[pi].k) + off, row, m, hd,
                            kt + (t - g0) * hd);
            prims.load_tile(static_cast<const std::uint8_t*>(pages[pi].v) + off, row, m, hd,
                            vt + (t - g0) * hd);
          });
        }
        for (std::size_t i = 0; i < nq; ++i) {
          const std::size_t a = std::max(t0, lo(i)), b = std::min(t0 + tile - 1, hi(i));
          if (a > b) continue;
          const std::size_t nt = b - a + 1;
          // The group's query heads are adjacent in q and out.
          const std::size_t h0 = kvh * group;
          float* const og = out + i * qd + h0 * hd;
          const float* const qg = qs + i * qd + h0 * hd;
          // One query (in_place): the K rows scored where they lie, page part
          // by page part (a score depends on its key alone), the V rows added
          // the same way after (in key order, as one call adds them).
          const std::size_t pi_a = pi, base_a = base;
          if (in_place) {
            std::fill(tile_max, tile_max + group, -std::numeric_limits<float>::infinity());
            each_part(a, b, [&](std::size_t off, std::size_t t, std::size_t m) {
              prims.scores_rows(qg, group, static_cast<const std::uint8_t*>(pages[pi].k) + off, row,
                                m, hd, shape.scale, p + (t - a), tile, part_max);
              for (std::size_t g = 0; g < group; ++g)
                tile_max[g] = std::max(tile_max[g], part_max[g]);
            });
          } else {
            prims.scores(qg, group, kt + (a - g0) * hd, nt, hd, shape.scale, p, tile, tile_max);
          }
          for (std::size_t g = 0; g < group; ++g) {
            float* pg = p + g * tile;
            float* oh = og + g * hd;
            if (shape.softcap > 0.0f) {
              for (std::size_t j = 0; j < nt; ++j)
                pg[j] = shape.softcap * std::tanh(pg[j] / shape.softcap);
              tile_max[g] = *std::max_element(pg, pg + nt);
            }
            HeadState& st = state[i * shape.n_heads + h0 + g];
            if (tile_max[g] > st.m) {  // rescale what was accumulated under the old max
              const float corr = std::exp(st.m - tile_max[g]);  // 0 on the first tile
              for (std::size_t k = 0; k < hd; ++k) oh[k] *= corr;
              st.l *= corr;
              st.m = tile_max[g];
            }
            st.l += prims.exp_shift(pg, nt, st.m);
          }
          if (in_place) {
            pi = pi_a;
            base = base_a;
            each_part(a, b, [&](std::size_t off, std::size_t t, std::size_t m) {
              prims.accumulate_rows(p + (t - a), tile, group,
                                    static_cast<const std::uint8_t*>(pages[pi].v) + off, row, m, hd,
                                    og);
            });
          } else {
            prims.accumulate(p, tile, group, vt + (a - g0) * hd, nt, hd, og);
          }
        }
      }
    };
    const std::size_t none = std::numeric_limits<std::size_t>::max();
    if (shape.sinks > 0)
      segment([&](std::size_t i) { return reads_sinks(i) ? std::size_t{0} : none; },
              [&](std::size_t) { return shape.sinks - 1; }, q_sink);
    segment(
        first_of, [&](std::size_t i) { return pos0 + i; }, q);
  }
  if (next != nullptr) next->advance(next->remaining());
  for (std::size_t i = 0; i < nq; ++i) {
    for (std::size_t h = h_begin; h < h_end; ++h) {
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
