#include "tokenizer/bpe.h"

#include <algorithm>
#include <string>

#include "tokenizer/byte_level.h"

namespace folio::tokenizer {

namespace {

std::uint64_t hash_key(std::uint64_t k) {  // splitmix64 finaliser
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ULL;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebULL;
  return k ^ (k >> 31);
}

// Heap order: lowest rank first, then leftmost position (HF's tie-break).
bool worse(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

}  // namespace

BpeModel::BpeModel(const Vocab& vocab, bool ignore_merges)
    : vocab_(vocab), ignore_merges_(ignore_merges) {
  for (int b = 0; b < 256; ++b) {
    byte_ids_[b] = vocab.find(byte_level::encode_byte(static_cast<std::uint8_t>(b))).value_or(-1);
  }
  const auto& merges = vocab.merges();
  std::size_t cap = 16;
  while (cap < merges.size() * 2) cap <<= 1;
  table_.assign(cap, Slot{kEmpty, 0, 0});
  mask_ = cap - 1;
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // "left right": byte-level texts never contain a raw space (it is 'Ġ').
    const std::size_t sp = m.find(' ', 1);
    if (sp == std::string::npos) continue;
    const std::string_view l(m.data(), sp), r(m.data() + sp + 1, m.size() - sp - 1);
    const auto lid = vocab.find(l), rid = vocab.find(r);
    joined.assign(l).append(r);
    const auto mid = vocab.find(joined);
    // Merges whose parts or result are not tokens can never apply (HF skips them too).
    if (!lid || !rid || !mid) continue;
    if (find_merge(*lid, *rid) != nullptr) continue;  // first (best) rank wins
    insert_merge(*lid, *rid, static_cast<std::int32_t>(rank), *mid);
  }
}

const BpeModel::Slot* BpeModel::find_merge(TokenId left, TokenId right) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
                            static_cast<std::uint32_t>(right);
  for (std::uint64_t i = hash_key(key) & mask_;; i = (i + 1) & mask_) {
    const Slot& s = table_[i];
    if (s.key == key) return &s;
    if (s.key == kEmpty) return nullptr;
  }
}

void BpeModel::insert_merge(TokenId left, TokenId right, std::int32_t rank, TokenId merged) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
                            static_cast<std::uint32_t>(right);
  std::uint64_t i = hash_key(key) & mask_;
  while (table_[i].key != kEmpty) i = (i + 1) & mask_;
  table_[i] = Slot{key, rank, merged};
}

void BpeModel::push_candidate(BpeScratch& s, std::int32_t pos) const {
  const auto& a = s.symbols[static_cast<std::size_t>(pos)];
  if (a.next < 0 || a.id < 0) return;
  const auto& b = s.symbols[static_cast<std::size_t>(a.next)];
  if (b.id < 0) return;
  const Slot* m = find_merge(a.id, b.id);
  if (m == nullptr) return;
  s.heap.push_back({m->rank, pos, a.id, b.id, m->merged});
  std::push_heap(s.heap.begin(), s.heap.end(), worse);
}

void BpeModel::encode_piece(std::string_view piece, BpeScratch& s,
                            std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    s.mapped.clear();
    for (char c : piece) s.mapped += byte_level::encode_byte(static_cast<std::uint8_t>(c));
    if (auto id = vocab_.find(s.mapped)) {
      out.push_back(*id);
      return;
    }
  }
  if (piece.size() == 1) {  // the most common case: no merge possible
    const TokenId id = byte_ids_[static_cast<std::uint8_t>(piece[0])];
    if (id >= 0) out.push_back(id);
    return;
  }
  const auto n = static_cast<std::int32_t>(piece.size());
  s.symbols.resize(piece.size());
  for (std::int32_t i = 0; i < n; ++i) {
    s.symbols[static_cast<std::size_t>(i)] = {byte_ids_[static_cast<std::uint8_t>(piece[i])], i - 1,
                                              i + 1 < n ? i + 1 : -1, true};
  }
  s.heap.clear();
  for (std::int32_t i = 0; i + 1 < n; ++i) push_candidate(s, i);

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), worse);
    const BpeScratch::Candidate c = s.heap.back();
    s.heap.pop_back();
    auto& left = s.symbols[static_cast<std::size_t>(c.pos)];
    if (!left.alive || left.id != c.left || left.next < 0) continue;  // stale
    auto& right = s.symbols[static_cast<std::size_t>(left.next)];
    if (right.id != c.right) continue;  // stale
    left.id = c.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) s.symbols[static_cast<std::size_t>(right.next)].prev = c.pos;
    if (left.prev >= 0) push_candidate(s, left.prev);
    push_candidate(s, c.pos);
  }
  for (std::int32_t i = 0; i >= 0; i = s.symbols[static_cast<std::size_t>(i)].next) {
    const TokenId id = s.symbols[static_cast<std::size_t>(i)].id;
    if (id >= 0) out.push_back(id);
  }
}

}  // namespace folio::tokenizer
