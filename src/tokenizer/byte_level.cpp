#include "tokenizer/byte_level.h"

#include <array>
#include <string>

#include "tokenizer/utf8.h"

namespace folio::tokenizer::byte_level {

namespace {

bool maps_to_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<std::string, 256> text;      // byte -> UTF-8 of its code point
  std::array<std::int16_t, 324> to_byte;  // code point (< 0x144) -> byte, -1 if none

  Tables() {
    to_byte.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const int cp = maps_to_itself(b) ? b : next++;
      utf8::append(text[static_cast<std::size_t>(b)], static_cast<char32_t>(cp));
      to_byte[static_cast<std::size_t>(cp)] = static_cast<std::int16_t>(b);
    }
  }
};

// Immutable after construction (thread-safe static initialisation).
const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view encode_byte(std::uint8_t b) {
  return tables().text[b];
}

std::optional<std::uint8_t> decode_code_point(char32_t cp) {
  const auto& t = tables().to_byte;
  if (cp >= t.size() || t[cp] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(t[cp]);
}

}  // namespace folio::tokenizer::byte_level
