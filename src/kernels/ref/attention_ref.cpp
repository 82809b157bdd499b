// kernels/ref/attention_ref.cpp: the attention oracle. Materializes every
// score, softmax and weighted sum in f64; K/V are read position by position
// through the page list.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/kv_row.h"

namespace folio::kernels {

namespace {

// Head kvh's K or V row of position `off` in `page`, as f32 (kv_row.h layout).
std::vector<float> kv_head(const KvPage& page, bool is_k, const AttentionShape& s, std::size_t off,
                           std::size_t kvh) {
  const std::size_t hb = kv_head_bytes(s.kv_dtype, s.head_dim);
  const auto* base = static_cast<const std::uint8_t*>(is_k ? page.k : page.v);
  std::vector<float> out(s.head_dim);
  kv_load_head(s.kv_dtype, base + (off * s.n_kv_heads + kvh) * hb, s.head_dim, out.data());
  return out;
}

}  // namespace

void attention_ref(const float* q, std::size_t pos, std::span<const KvPage> pages,
                   const AttentionShape& shape, float* out, const float* q_sink) {
  const std::size_t hd = shape.head_dim, group = shape.n_heads / shape.n_kv_heads;
  std::size_t first = shape.window != 0 && pos + 1 > shape.window ? pos + 1 - shape.window : 0;
  if (shape.sinks > 0 && first <= shape.sinks) first = 0;  // sinks and window in one range
  // Positions read, each with the query row it is scored against: the sinks
  // (when the window has left them) against q_sink, then the window.
  const std::size_t sinks = shape.sinks > 0 && first > 0 ? shape.sinks : 0;
  if (q_sink == nullptr) q_sink = q;
  std::vector<std::pair<std::size_t, const float*>> read;
  for (std::size_t t = 0; t < sinks; ++t) read.emplace_back(t, q_sink);
  for (std::size_t t = first; t <= pos; ++t) read.emplace_back(t, q);
  // (page, offset) of every position 0..pos.
  std::vector<std::pair<const KvPage*, std::size_t>> where;
  for (const KvPage& page : pages) {
    for (std::size_t i = 0; i < page.n_tokens && where.size() <= pos; ++i)
      where.emplace_back(&page, i);
  }
  FOLIO_CHECK(where.size() == pos + 1, "attention_ref: pages hold too few positions");
  for (std::size_t h = 0; h < shape.n_heads; ++h) {
    const std::size_t kvh = h / group;
    std::vector<double> s;
    for (const auto& [t, qs] : read) {
      const auto [page, off] = where[t];
      const std::vector<float> k = kv_head(*page, true, shape, off, kvh);
      double d = 0;
      for (std::size_t i = 0; i < hd; ++i) d += static_cast<double>(qs[h * hd + i]) * k[i];
      d *= shape.scale;
      if (shape.softcap > 0.0f) d = shape.softcap * std::tanh(d / shape.softcap);
      s.push_back(d);
    }
    double mx = -HUGE_VAL;
    for (double v : s) mx = std::max(mx, v);
    double sum = 0;
    for (double& v : s) sum += (v = std::exp(v - mx));
    std::vector<double> acc(hd, 0.0);
    for (std::size_t r = 0; r < read.size(); ++r) {
      const auto [page, off] = where[read[r].first];
      const std::vector<float> v = kv_head(*page, false, shape, off, kvh);
      for (std::size_t i = 0; i < hd; ++i) acc[i] += s[r] * v[i];
    }
    for (std::size_t i = 0; i < hd; ++i) out[h * hd + i] = static_cast<float>(acc[i] / sum);
  }
}

}  // namespace folio::kernels
