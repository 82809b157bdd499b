// grammar/utf8_class.cpp: code-point ranges -> UTF-8 byte-range sequences ->
// a deterministic byte automaton.
#include "grammar/utf8_class.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "base/error.h"
#include "tokenizer/utf8.h"

namespace folio::grammar {
namespace {

constexpr std::uint32_t kSurrogateLo = 0xD800;
constexpr std::uint32_t kSurrogateHi = 0xDFFF;

struct ByteRange {
  std::uint8_t lo, hi;
};
using Sequence = std::vector<ByteRange>;

// Splits [lo, hi] until each piece is a product of byte ranges of one
// encoded length (every byte position independent), then appends it.
void split_range(std::uint32_t lo, std::uint32_t hi, std::vector<Sequence>& out) {
  if (lo > hi) return;
  for (const std::uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= max && hi > max) {
      split_range(lo, max, out);
      split_range(max + 1, hi, out);
      return;
    }
  }
  if (hi < 0x80) {
    out.push_back({ByteRange{static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(hi)}});
    return;
  }
  for (int i = 1; i < 4; ++i) {
    const std::uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_range(lo, lo | m, out);
        split_range((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_range(lo, (hi & ~m) - 1, out);
        split_range(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::vector<std::uint8_t> a = encode_utf8(lo);
  const std::vector<std::uint8_t> b = encode_utf8(hi);
  FOLIO_CHECK(a.size() == b.size());
  Sequence seq;
  for (std::size_t k = 0; k < a.size(); ++k) seq.push_back({a[k], b[k]});
  out.push_back(std::move(seq));
}

}  // namespace

std::vector<std::uint8_t> encode_utf8(std::uint32_t cp) {
  std::string bytes;
  tokenizer::utf8::append(bytes, static_cast<char32_t>(cp));
  return {bytes.begin(), bytes.end()};
}

std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges, bool negate) {
  for (CodePointRange& r : ranges) {
    if (r.lo > r.hi) std::swap(r.lo, r.hi);
    r.hi = std::min(r.hi, kMaxCodePoint);
  }
  std::ranges::sort(ranges,
                    [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& r : ranges) {
    if (r.lo > kMaxCodePoint) continue;
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  if (negate) {
    std::vector<CodePointRange> comp;
    std::uint32_t next = 0;
    for (const CodePointRange& r : merged) {
      if (r.lo > next) comp.push_back({next, r.lo - 1});
      next = r.hi + 1;
    }
    if (next <= kMaxCodePoint) comp.push_back({next, kMaxCodePoint});
    merged = std::move(comp);
  }
  std::vector<CodePointRange> out;  // surrogates cut out
  for (const CodePointRange& r : merged) {
    if (r.hi < kSurrogateLo || r.lo > kSurrogateHi) {
      out.push_back(r);
      continue;
    }
    if (r.lo < kSurrogateLo) out.push_back({r.lo, kSurrogateLo - 1});
    if (r.hi > kSurrogateHi) out.push_back({kSurrogateHi + 1, r.hi});
  }
  return out;
}

Utf8Class::Utf8Class(const std::vector<CodePointRange>& ranges) : ranges_(ranges) {
  std::vector<Sequence> seqs;
  for (const CodePointRange& r : ranges_) split_range(r.lo, r.hi, seqs);
  // A state is the set of (sequence, position) pairs still possible.
  using Key = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  std::map<Key, std::uint16_t> ids;
  std::vector<Key> states;
  Key start;
  for (std::uint32_t i = 0; i < seqs.size(); ++i) start.emplace_back(i, 0);
  ids[start] = 0;
  states.push_back(start);
  for (std::size_t s = 0; s < states.size(); ++s) {
    std::array<std::uint16_t, 256> row{};
    for (int b = 0; b < 256; ++b) {
      Key next;
      bool done = false;
      for (const auto& [seq, pos] : states[s]) {
        const ByteRange r = seqs[seq][pos];
        if (b < r.lo || b > r.hi) continue;
        if (pos + 1 == seqs[seq].size()) {
          done = true;
        } else {
          next.emplace_back(seq, pos + 1);
        }
      }
      // UTF-8 is prefix-free: a byte that completes one sequence cannot
      // continue another.
      FOLIO_CHECK(!(done && !next.empty()));
      if (done) {
        row[b] = kDone;
      } else if (next.empty()) {
        row[b] = kReject;
      } else {
        auto [it, fresh] = ids.try_emplace(next, static_cast<std::uint16_t>(states.size()));
        if (fresh) states.push_back(next);
        row[b] = it->second;
      }
    }
    next_.push_back(row);
  }
  FOLIO_CHECK(next_.size() < kDone);
}

}  // namespace folio::grammar
