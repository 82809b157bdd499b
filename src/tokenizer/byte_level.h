// tokenizer/byte_level.h: GPT-2's reversible byte <-> printable-character map.
//
// Byte-level BPE vocabularies never store raw bytes: every byte b is written as
// one printable code point (bytes_to_unicode in GPT-2's encoder.py). Printable
// Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to themselves;
// the other 68 bytes map to U+0100, U+0101, ... in byte order (so ' ' -> 'Ġ').
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace folio::tokenizer::byte_level {

// UTF-8 text (1 or 2 bytes) of the code point that stands for byte b.
std::string_view encode_byte(std::uint8_t b);

// The byte that code point cp stands for, or nullopt when cp is not in the map.
std::optional<std::uint8_t> decode_code_point(char32_t cp);

}  // namespace folio::tokenizer::byte_level
