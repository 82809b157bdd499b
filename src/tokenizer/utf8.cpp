#include "tokenizer/utf8.h"

namespace folio::tokenizer::utf8 {

namespace {

// Well-formed UTF-8 (Unicode Table 3-7): the lead byte fixes the length and
// the allowed range of the second byte; later bytes are 80..BF.
struct LeadInfo {
  std::uint8_t len;     // 0: not a valid lead byte
  std::uint8_t lo, hi;  // allowed range of the second byte
};

LeadInfo lead_info(std::uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b < 0xC2) return {0, 0, 0};
  if (b < 0xE0) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};  // excludes surrogates
  if (b < 0xF0) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b < 0xF4) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // <= U+10FFFF
  return {0, 0, 0};
}

// Number of bytes at s[pos..] that follow the well-formedness rules (at most
// the sequence length), and the sequence length the lead byte asks for.
std::size_t well_formed_prefix(std::string_view s, std::size_t pos, std::size_t* want) {
  const auto b0 = static_cast<std::uint8_t>(s[pos]);
  const LeadInfo li = lead_info(b0);
  *want = li.len;
  if (li.len <= 1) return li.len;
  std::size_t n = 1;
  for (; n < li.len && pos + n < s.size(); ++n) {
    const auto b = static_cast<std::uint8_t>(s[pos + n]);
    const std::uint8_t lo = n == 1 ? li.lo : 0x80;
    const std::uint8_t hi = n == 1 ? li.hi : 0xBF;
    if (b < lo || b > hi) break;
  }
  return n;
}

}  // namespace

std::size_t valid_sequence_length(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return 0;
  std::size_t want = 0;
  const std::size_t n = well_formed_prefix(s, pos, &want);
  return n == want ? n : 0;
}

std::size_t incomplete_prefix_length(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return 0;
  std::size_t want = 0;
  const std::size_t n = well_formed_prefix(s, pos, &want);
  // Incomplete only if every byte so far is right and the input simply ended.
  return (want > 1 && n < want && pos + n == s.size()) ? n : 0;
}

std::size_t invalid_subpart_length(std::string_view s, std::size_t pos) {
  std::size_t want = 0;
  const std::size_t n = well_formed_prefix(s, pos, &want);
  return n == 0 ? 1 : n;  // a bad lead byte is replaced on its own
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t decode(std::string_view s, std::size_t pos, std::size_t len) {
  const auto b = [&](std::size_t i) {
    return static_cast<char32_t>(static_cast<std::uint8_t>(s[pos + i]));
  };
  switch (len) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

std::string to_valid(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t n = valid_sequence_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append(kReplacement);
      i += invalid_subpart_length(s, i);
    }
  }
  return out;
}

}  // namespace folio::tokenizer::utf8
