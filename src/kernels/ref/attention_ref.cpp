// kernels/ref/attention_ref.cpp: the attention oracle. Materializes every
// score, softmax and weighted sum in f64; K/V are read position by position
// through the page list.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/attention.h"

namespace folio::kernels {

namespace {

double kv_elem(const KvPage& page, bool is_k, KvDtype dt, std::size_t index) {
  const void* p = is_k ? page.k : page.v;
  if (dt == KvDtype::kF16) return fp16_to_f32(static_cast<const std::uint16_t*>(p)[index]);
  return static_cast<const float*>(p)[index];
}

}  // namespace

void attention_ref(const float* q, std::size_t pos, std::span<const KvPage> pages,
                   const AttentionShape& shape, float* out) {
  const std::size_t hd = shape.head_dim, group = shape.n_heads / shape.n_kv_heads;
  const std::size_t row = shape.n_kv_heads * hd;
  const std::size_t first = shape.window != 0 && pos + 1 > shape.window ? pos + 1 - shape.window : 0;
  // (page, offset) of every position 0..pos.
  std::vector<std::pair<const KvPage*, std::size_t>> where;
  for (const KvPage& page : pages) {
    for (std::size_t i = 0; i < page.n_tokens && where.size() <= pos; ++i) where.emplace_back(&page, i);
  }
  FOLIO_CHECK(where.size() == pos + 1, "attention_ref: pages hold too few positions");
  for (std::size_t h = 0; h < shape.n_heads; ++h) {
    const std::size_t kvh = h / group;
    std::vector<double> s;
    for (std::size_t t = first; t <= pos; ++t) {
      const auto [page, off] = where[t];
      double d = 0;
      for (std::size_t i = 0; i < hd; ++i) {
        d += static_cast<double>(q[h * hd + i]) * kv_elem(*page, true, shape.kv_dtype, off * row + kvh * hd + i);
      }
      d *= shape.scale;
      if (shape.softcap > 0.0f) d = shape.softcap * std::tanh(d / shape.softcap);
      s.push_back(d);
    }
    double mx = -HUGE_VAL;
    for (double v : s) mx = std::max(mx, v);
    double sum = 0;
    for (double& v : s) sum += (v = std::exp(v - mx));
    for (std::size_t i = 0; i < hd; ++i) {
      double acc = 0;
      for (std::size_t t = first; t <= pos; ++t) {
        const auto [page, off] = where[t];
        acc += s[t - first] * kv_elem(*page, false, shape.kv_dtype, off * row + kvh * hd + i);
      }
      out[h * hd + i] = static_cast<float>(acc / sum);
    }
  }
}

}  // namespace folio::kernels
