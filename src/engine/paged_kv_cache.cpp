#include "engine/paged_kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error.h"
#include "kernels/kv_row.h"

namespace folio::engine {

namespace {

constexpr std::size_t kAlign = 64;

std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

void PagedKvCache::FreeBytes::operator()(std::byte* p) const {
  std::free(p);
}

kv::KvGroupLayout PagedKvCache::layout(const model::ModelConfig& config, bool windowed) {
  std::vector<std::int32_t> windows;
  for (const model::LayerConfig& l : config.layers)
    windows.push_back(windowed && l.sliding && config.sliding_window != 0
                          ? static_cast<std::int32_t>(config.sliding_window)
                          : 0);
  return kv::group_layers(windows);
}

namespace {

// Per slot: the widest K (or V) half of one block among the layers in it.
std::vector<std::size_t> slot_halves(const model::ModelConfig& config,
                                     const kv::KvGroupLayout& layout, std::int32_t block_size,
                                     kernels::KvDtype dtype) {
  std::vector<std::size_t> half(static_cast<std::size_t>(layout.slots), 0);
  for (std::size_t l = 0; l < config.layers.size(); ++l) {
    const std::size_t h = std::size_t{config.layers[l].n_head_kv} *
                          kernels::kv_head_bytes(dtype, config.head_dim_k) *
                          static_cast<std::size_t>(block_size);
    auto& slot = half[static_cast<std::size_t>(layout.layer_slot[l])];
    slot = std::max(slot, round_up(h, kAlign));
  }
  return half;
}

}  // namespace

std::size_t PagedKvCache::bytes_per_block(const model::ModelConfig& config, std::int32_t block_size,
                                          kernels::KvDtype dtype, bool windowed) {
  std::size_t total = 0;
  for (std::size_t h : slot_halves(config, layout(config, windowed), block_size, dtype))
    total += 2 * h;
  return total;
}

PagedKvCache::PagedKvCache(const model::ModelConfig& config, std::int32_t num_blocks,
                           std::int32_t block_size, kernels::KvDtype dtype, bool windowed)
    : dtype_(dtype),
      num_blocks_(num_blocks),
      block_size_(block_size),
      layout_(layout(config, windowed)) {
  if (num_blocks < 1 || block_size < 1)
    throw Error("KV cache: needs at least one block of >= 1 token");
  FOLIO_CHECK(config.head_dim_k == config.head_dim_v, "K and V head sizes differ");
  head_dim_ = config.head_dim_k;
  for (const model::LayerConfig& l : config.layers) {
    n_kv_heads_.push_back(l.n_head_kv);
    row_.push_back(std::size_t{l.n_head_kv} * kernels::kv_head_bytes(dtype, config.head_dim_k));
  }
  half_bytes_ = slot_halves(config, layout_, block_size, dtype);
  for (std::size_t h : half_bytes_) {
    slot_off_.push_back(total_bytes_);
    total_bytes_ += 2 * h * static_cast<std::size_t>(num_blocks);
  }
  void* p = std::aligned_alloc(kAlign, round_up(std::max<std::size_t>(total_bytes_, 1), kAlign));
  if (p == nullptr) {
    throw Error("KV cache: cannot allocate " + std::to_string(total_bytes_) +
                " bytes; lower --kv-cache-memory");
  }
  mem_.reset(static_cast<std::byte*>(p));
}

std::byte* PagedKvCache::block_k(std::size_t layer, kv::BlockId b) const {
  const auto slot = static_cast<std::size_t>(layout_.layer_slot[layer]);
  return mem_.get() + slot_off_[slot] + 2 * half_bytes_[slot] * static_cast<std::size_t>(b);
}

std::byte* PagedKvCache::block_v(std::size_t layer, kv::BlockId b) const {
  return block_k(layer, b) + half_bytes_[static_cast<std::size_t>(layout_.layer_slot[layer])];
}

const std::vector<kv::BlockId>* PagedKvCache::table(sched::SeqId id, std::size_t group) const {
  auto it = tables_.find(id);
  return it == tables_.end() || group >= it->second.size() ? nullptr : &it->second[group];
}

std::vector<float> PagedKvCache::k_row(std::size_t layer, sched::SeqId seq, std::size_t pos) const {
  FOLIO_CHECK(layer < row_.size(), "k_row of a layer the model does not have");
  const std::vector<kv::BlockId>* t =
      table(seq, static_cast<std::size_t>(layout_.layer_group[layer]));
  const auto bs = static_cast<std::size_t>(block_size_);
  FOLIO_CHECK(t != nullptr && pos / bs < t->size() && (*t)[pos / bs] != kv::kNoBlock,
              "k_row outside the table");
  const std::byte* row = block_k(layer, (*t)[pos / bs]) + (pos % bs) * row_[layer];
  std::vector<float> out(n_kv_heads_[layer] * head_dim_);
  const std::size_t head_bytes = kernels::kv_head_bytes(dtype_, head_dim_);
  for (std::size_t h = 0; h < n_kv_heads_[layer]; ++h)
    kernels::kv_load_head(dtype_, row + h * head_bytes, head_dim_, out.data() + h * head_dim_);
  return out;
}

void PagedKvCache::copy_block(kv::BlockId src, kv::BlockId dst) {
  FOLIO_CHECK(src >= 0 && src < num_blocks_ && dst >= 0 && dst < num_blocks_, "COW block id");
  for (std::size_t s = 0; s < half_bytes_.size(); ++s) {
    std::byte* base = mem_.get() + slot_off_[s];
    const std::size_t bytes = 2 * half_bytes_[s];  // K and V halves
    std::memcpy(base + bytes * static_cast<std::size_t>(dst),
                base + bytes * static_cast<std::size_t>(src), bytes);
  }
}

void PagedKvCache::apply(const sched::SchedulerOutput& plan) {
  for (sched::SeqId id : plan.finished_ids) tables_.erase(id);
  for (sched::SeqId id : plan.preempted_ids) tables_.erase(id);
  const std::size_t ng = layout_.groups.size();
  for (const sched::ScheduledRequest& s : plan.requests) {
    FOLIO_CHECK(s.tables.size() >= ng, "plan has fewer block tables than the cache's groups");
    Tables& tables = tables_[s.id];
    tables.resize(ng);
    for (std::size_t g = 0; g < ng; ++g) {
      const kv::TableDelta& d = s.tables[g];
      auto& t = tables[g];
      FOLIO_CHECK(d.blocks_from >= 0 && static_cast<std::size_t>(d.blocks_from) <= t.size(),
                  "block-table delta past the end of sequence " + to_string(s.id));
      t.resize(static_cast<std::size_t>(d.blocks_from));
      for (kv::BlockId b : d.block_ids) {
        FOLIO_CHECK(b == kv::kNoBlock || (b >= 0 && b < num_blocks_), "block id out of range");
        t.push_back(b);
      }
      FOLIO_CHECK(d.num_sink >= 0 && d.num_skipped >= 0 &&
                      static_cast<std::size_t>(d.num_skipped) <= t.size(),
                  "released blocks past the end of sequence " + to_string(s.id));
      if (d.num_skipped > d.num_sink)
        std::fill(t.begin() + d.num_sink, t.begin() + d.num_skipped, kv::kNoBlock);
    }
  }
  for (const kv::CowCopy& c : plan.cow_copies) copy_block(c.src, c.dst);
}

void PagedKvCache::bind(const sched::SchedulerOutput& plan) {
  bound_.clear();
  for (const sched::ScheduledRequest& s : plan.requests) {
    auto it = tables_.find(s.id);
    FOLIO_CHECK(it != tables_.end(), "no block table for a scheduled request");
    bound_.push_back(&it->second);
  }
}

void PagedKvCache::bind(std::span<const sched::SeqId> seqs) {
  bound_.clear();
  for (sched::SeqId id : seqs) {
    auto it = tables_.find(id);
    FOLIO_CHECK(it != tables_.end(), "no block table for sequence " + to_string(id));
    bound_.push_back(&it->second);
  }
}

const std::vector<kv::BlockId>& PagedKvCache::bound(std::int32_t seq, std::size_t layer) const {
  FOLIO_CHECK(seq >= 0 && static_cast<std::size_t>(seq) < bound_.size(), "unbound sequence id");
  FOLIO_CHECK(layer < row_.size(), "layer out of range");
  return (
      *bound_[static_cast<std::size_t>(seq)])[static_cast<std::size_t>(layout_.layer_group[layer])];
}

void PagedKvCache::begin(const model::Batch& batch) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::int32_t seq = batch.seq_ids[i];
    if (seq < 0 || static_cast<std::size_t>(seq) >= bound_.size()) {
      throw Error("paged KV cache: sequence id " + std::to_string(seq) + " is not bound");
    }
    // Every group's table has the same length (kv_cache_manager.h).
    const std::size_t cap = bound(seq, 0).size() * static_cast<std::size_t>(block_size_);
    if (static_cast<std::size_t>(batch.positions[i]) >= cap) {
      throw Error("paged KV cache: position " + std::to_string(batch.positions[i]) +
                  " of sequence " + std::to_string(seq) + " has no block reserved");
    }
  }
}

void PagedKvCache::store(std::size_t layer, std::int32_t seq, std::size_t pos, const float* k,
                         const float* v) {
  const auto& t = bound(seq, layer);
  const auto bs = static_cast<std::size_t>(block_size_);
  FOLIO_CHECK(pos / bs < t.size() && t[pos / bs] != kv::kNoBlock,
              "store outside the reserved blocks");
  const kv::BlockId b = t[pos / bs];
  const std::size_t off = (pos % bs) * row_[layer];
  kernels::kv_store_row(dtype_, k, n_kv_heads_[layer], head_dim_, block_k(layer, b) + off);
  kernels::kv_store_row(dtype_, v, n_kv_heads_[layer], head_dim_, block_v(layer, b) + off);
}

void PagedKvCache::pages(std::size_t layer, std::int32_t seq, std::size_t n_tokens,
                         std::vector<kernels::KvPage>& out) const {
  const auto& t = bound(seq, layer);
  const auto bs = static_cast<std::size_t>(block_size_);
  FOLIO_CHECK(n_tokens <= t.size() * bs, "pages beyond the table");
  out.clear();
  for (std::size_t i = 0; i * bs < n_tokens; ++i) {
    const std::size_t n = std::min(bs, n_tokens - i * bs);
    if (t[i] == kv::kNoBlock)
      out.push_back({nullptr, nullptr, n});  // released: before every query's window
    else
      out.push_back({block_k(layer, t[i]), block_v(layer, t[i]), n});
  }
}

}  // namespace folio::engine
