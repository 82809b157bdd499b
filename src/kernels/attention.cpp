// kernels/attention.cpp: tiled online-softmax attention for one query token.
//
// For each KV head, positions are visited in tiles of up to kTile tokens
// (never crossing a page). For every query head of that KV head's group the
// tile's scores are computed, the running max m and denominator l are
// updated (FlashAttention's rescaling: acc *= exp(m_old - m_new)), and the
// V rows are accumulated directly into `out`. The K/V tile is reused from L1
// by all heads of the group; nothing is copied per head.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/attention.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu_features.h"

namespace folio::kernels {

namespace cpu {
namespace {

template <class T>
float elem(const void* p, std::size_t i) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<const float*>(p)[i];
  } else {
    return fp16_to_f32(static_cast<const std::uint16_t*>(p)[i]);
  }
}

template <class T>
float dot(const float* q, const void* k, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += q[i] * elem<T>(k, i);
  return s;
}

template <class T>
void axpy(float p, const void* v, float* acc, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) acc[i] += p * elem<T>(v, i);
}

const AttentionPrims kScalarF32{dot<float>, axpy<float>};
const AttentionPrims kScalarF16{dot<std::uint16_t>, axpy<std::uint16_t>};

}  // namespace

const AttentionPrims& scalar_attention_prims(KvDtype dtype) {
  return dtype == KvDtype::kF16 ? kScalarF16 : kScalarF32;
}

}  // namespace cpu

namespace {

constexpr std::size_t kTile = 64;  // positions per tile (K tile stays in L1)

void validate(const AttentionShape& s) {
  FOLIO_CHECK(s.n_heads > 0 && s.n_kv_heads > 0 && s.head_dim > 0, "empty attention shape");
  FOLIO_CHECK(s.n_heads % s.n_kv_heads == 0,
              "n_heads " + std::to_string(s.n_heads) + " not a multiple of n_kv_heads " +
                  std::to_string(s.n_kv_heads));
}

struct HeadState {
  float m;  // running max of the scores
  float l;  // running sum of exp(score - m)
};

}  // namespace

void attention(const float* q, std::size_t pos, std::span<const KvPage> pages,
               const AttentionShape& shape, float* out) {
  validate(shape);
  const cpu::AttentionPrims& prims = active_isa() == Isa::kAvx2
                                         ? cpu::avx2_attention_prims(shape.kv_dtype)
                                         : cpu::scalar_attention_prims(shape.kv_dtype);
  const std::size_t hd = shape.head_dim;
  const std::size_t group = shape.n_heads / shape.n_kv_heads;
  const std::size_t row = shape.n_kv_heads * hd;  // elements per token
  const std::size_t esz = shape.kv_dtype == KvDtype::kF16 ? 2 : 4;
  const std::size_t first = shape.window != 0 && pos + 1 > shape.window ? pos + 1 - shape.window : 0;

  // Scratch grows to the largest shape seen on this thread, then is reused.
  thread_local std::vector<HeadState> state;
  thread_local std::vector<float> scores;
  state.assign(shape.n_heads, {-std::numeric_limits<float>::infinity(), 0.0f});
  if (scores.size() < kTile) scores.resize(kTile);
  std::fill(out, out + shape.n_heads * hd, 0.0f);

  std::size_t covered = 0;
  for (std::size_t kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
    std::size_t base = 0;
    for (const KvPage& page : pages) {
      const std::size_t lo = std::max(first, base), hi = std::min(pos + 1, base + page.n_tokens);
      for (std::size_t t0 = lo; t0 < hi; t0 += kTile) {
        const std::size_t nt = std::min(kTile, hi - t0);
        const auto* kp = static_cast<const std::uint8_t*>(page.k) + ((t0 - base) * row + kvh * hd) * esz;
        const auto* vp = static_cast<const std::uint8_t*>(page.v) + ((t0 - base) * row + kvh * hd) * esz;
        for (std::size_t g = 0; g < group; ++g) {
          const std::size_t h = kvh * group + g;
          const float* qh = q + h * hd;
          float* oh = out + h * hd;
          float tile_max = -std::numeric_limits<float>::infinity();
          for (std::size_t j = 0; j < nt; ++j) {
            float s = prims.dot(qh, kp + j * row * esz, hd) * shape.scale;
            if (shape.softcap > 0.0f) s = shape.softcap * std::tanh(s / shape.softcap);
            scores[j] = s;
            tile_max = std::max(tile_max, s);
          }
          HeadState& st = state[h];
          if (tile_max > st.m) {  // rescale what was accumulated under the old max
            const float corr = std::exp(st.m - tile_max);  // 0 on the first tile
            for (std::size_t i = 0; i < hd; ++i) oh[i] *= corr;
            st.l *= corr;
            st.m = tile_max;
          }
          for (std::size_t j = 0; j < nt; ++j) {
            const float p = std::exp(scores[j] - st.m);
            st.l += p;
            prims.axpy(p, vp + j * row * esz, oh, hd);
          }
        }
        if (kvh == 0) covered += nt;
      }
      base += page.n_tokens;
    }
  }
  FOLIO_CHECK(covered == pos + 1 - first,
              "attention pages hold fewer than the " + std::to_string(pos + 1) + " positions needed");
  for (std::size_t h = 0; h < shape.n_heads; ++h) {
    const float inv = 1.0f / state[h].l;
    for (std::size_t i = 0; i < hd; ++i) out[h * hd + i] *= inv;
  }
}

}  // namespace folio::kernels
