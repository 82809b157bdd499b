#include "model/contiguous_kv_cache.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "kernels/kv_row.h"

namespace folio::model {

ContiguousKvCache::ContiguousKvCache(const ModelConfig& config, std::size_t n_seq,
                                     std::size_t max_tokens, kernels::KvDtype dtype)
    : dtype_(dtype),
      head_dim_(config.head_dim_k),
      max_tokens_(max_tokens),
      len_(n_seq, 0),
      cap_(n_seq, 0),
      seqs_(n_seq) {
  if (n_seq == 0 || max_tokens == 0) throw Error("KV cache: needs at least one sequence and token");
  for (const LayerConfig& l : config.layers) {
    FOLIO_CHECK(config.head_dim_k == config.head_dim_v, "K and V head sizes differ");
    n_kv_heads_.push_back(l.n_head_kv);
    row_.push_back(std::size_t{l.n_head_kv} * kernels::kv_head_bytes(dtype, head_dim_));
  }
  for (auto& s : seqs_) s.resize(row_.size());
}

void ContiguousKvCache::grow(std::size_t seq, std::size_t n_tokens) {
  if (n_tokens <= cap_[seq]) return;
  const std::size_t cap = std::min(max_tokens_, std::max<std::size_t>(n_tokens, 2 * cap_[seq]));
  for (std::size_t l = 0; l < row_.size(); ++l) {
    seqs_[seq][l].k.resize(cap * row_[l]);
    seqs_[seq][l].v.resize(cap * row_[l]);
  }
  cap_[seq] = cap;
}

void ContiguousKvCache::begin(const Batch& batch) {
  // Check everything first so a rejected batch leaves the cache unchanged.
  std::vector<std::size_t> len = len_;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const auto seq = static_cast<std::size_t>(batch.seq_ids[i]);
    const auto pos = static_cast<std::size_t>(batch.positions[i]);
    if (seq >= len.size()) {
      throw Error("KV cache: sequence id " + std::to_string(seq) + " out of range (cache holds " +
                  std::to_string(len.size()) + " sequences)");
    }
    if (pos >= max_tokens_) {
      throw Error("KV cache: position " + std::to_string(pos) + " exceeds the context of " +
                  std::to_string(max_tokens_) + " tokens");
    }
    if (pos > len[seq]) {
      throw Error("KV cache: position " + std::to_string(pos) + " of sequence " +
                  std::to_string(seq) + " leaves a gap (it holds " + std::to_string(len[seq]) +
                  " positions)");
    }
    len[seq] = std::max(len[seq], pos + 1);
  }
  for (std::size_t s = 0; s < len.size(); ++s) grow(s, len[s]);
  len_ = std::move(len);
}

void ContiguousKvCache::store(std::size_t layer, std::int32_t seq, std::size_t pos, const float* k,
                              const float* v) {
  const auto s = static_cast<std::size_t>(seq);
  FOLIO_CHECK(s < seqs_.size() && layer < row_.size() && pos < cap_[s], "store outside begin()");
  Layer& l = seqs_[s][layer];
  kernels::kv_store_row(dtype_, k, n_kv_heads_[layer], head_dim_, l.k.data() + pos * row_[layer]);
  kernels::kv_store_row(dtype_, v, n_kv_heads_[layer], head_dim_, l.v.data() + pos * row_[layer]);
}

void ContiguousKvCache::pages(std::size_t layer, std::int32_t seq, std::size_t n_tokens,
                              std::vector<kernels::KvPage>& out) const {
  const auto s = static_cast<std::size_t>(seq);
  FOLIO_CHECK(s < seqs_.size() && layer < row_.size() && n_tokens <= len_[s],
              "pages beyond the sequence");
  out.clear();
  const Layer& l = seqs_[s][layer];
  out.push_back({l.k.data(), l.v.data(), n_tokens});
}

void ContiguousKvCache::truncate(std::int32_t seq, std::size_t n) {
  const auto s = static_cast<std::size_t>(seq);
  if (s >= len_.size())
    throw Error("KV cache: sequence id " + std::to_string(seq) + " out of range");
  len_[s] = std::min(len_[s], n);
}

}  // namespace folio::model
