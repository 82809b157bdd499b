// model/contiguous_kv_cache.h: the simplest KvCache: per sequence and layer,
// one contiguous buffer of K rows and one of V rows.
//
//   k_[seq][layer]: [capacity x token row] (V alike); a token row is
//                   n_kv_heads head rows of the cache dtype (kernels/kv_row.h:
//                   f32 by default, f16 or int8 to study their effect)
//
// Buffers grow on demand (doubling, up to max_tokens), so a short chat does
// not reserve the model's whole context. Used by `folio run`, `bench` and the
// tests until the paged engine brings its block pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/kv_cache.h"

namespace folio::model {

class ContiguousKvCache final : public KvCache {
 public:
  // `n_seq` sequences (ids 0 .. n_seq-1) of up to `max_tokens` positions each.
  ContiguousKvCache(const ModelConfig& config, std::size_t n_seq, std::size_t max_tokens,
                    kernels::KvDtype dtype = kernels::KvDtype::kF32);

  kernels::KvDtype dtype() const override { return dtype_; }
  void begin(const Batch& batch) override;
  void store(std::size_t layer, std::int32_t seq, std::size_t pos, const float* k,
             const float* v) override;
  void pages(std::size_t layer, std::int32_t seq, std::size_t n_tokens,
             std::vector<kernels::KvPage>& out) const override;

  std::size_t n_seq() const { return len_.size(); }
  std::size_t max_tokens() const { return max_tokens_; }
  // Positions of `seq` held (the next position to feed).
  std::size_t length(std::int32_t seq) const { return len_.at(static_cast<std::size_t>(seq)); }
  // Forgets `seq`'s tokens (keeps its memory) or truncates it to `n` positions.
  void truncate(std::int32_t seq, std::size_t n);

 private:
  struct Layer {
    std::vector<std::uint8_t> k, v;  // [capacity x row_]
  };
  void grow(std::size_t seq, std::size_t n_tokens);

  kernels::KvDtype dtype_;
  std::size_t head_dim_;
  std::vector<std::size_t> n_kv_heads_;  // per layer
  std::vector<std::size_t> row_;         // per layer: bytes of a token row
  std::size_t max_tokens_;
  std::vector<std::size_t> len_;  // per sequence
  std::vector<std::size_t> cap_;  // per sequence, in tokens
  std::vector<std::vector<Layer>> seqs_;
};

}  // namespace folio::model
