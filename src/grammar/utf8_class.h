// grammar/utf8_class.h: a character class (a set of code points) as a small
// automaton over UTF-8 bytes.
//
// The grammar matches bytes, not code points, so a token that ends in the
// middle of a character (byte-fallback tokens, BPE tokens that split a
// multi-byte character) is matched exactly as far as it goes. A class such
// as [^"\\] becomes the few byte-range sequences of its UTF-8 encodings
// (the utf8-ranges construction) folded into a deterministic automaton:
// state 0 is "before the character", each byte moves to a next state, to
// kDone (a whole character matched) or to kReject. Surrogates (U+D800 to
// U+DFFF) are never matched; they have no UTF-8 encoding.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace folio::grammar {

struct CodePointRange {
  std::uint32_t lo = 0, hi = 0;  // inclusive
  bool operator==(const CodePointRange&) const = default;
};

inline constexpr std::uint32_t kMaxCodePoint = 0x10FFFF;

// Sorted, merged, surrogates removed; `negate` complements over all scalar
// values first.
std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges, bool negate);

class Utf8Class {
 public:
  static constexpr std::uint16_t kReject = 0xFFFF;
  static constexpr std::uint16_t kDone = 0xFFFE;

  // `ranges` as normalize_ranges returns them. An empty set matches nothing.
  explicit Utf8Class(const std::vector<CodePointRange>& ranges);

  std::uint16_t next(std::uint16_t state, std::uint8_t byte) const { return next_[state][byte]; }
  std::size_t num_states() const { return next_.size(); }
  const std::vector<CodePointRange>& ranges() const { return ranges_; }
  bool empty() const { return ranges_.empty(); }

 private:
  std::vector<CodePointRange> ranges_;
  std::vector<std::array<std::uint16_t, 256>> next_;
};

// The UTF-8 encoding of a scalar value (1 to 4 bytes).
std::vector<std::uint8_t> encode_utf8(std::uint32_t cp);

}  // namespace folio::grammar
