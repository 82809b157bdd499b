// tokenizer/utf8.h: small UTF-8 helpers shared by the encoders and the detokenizer.
//
// Tokenizer input is arbitrary bytes (a prompt can hold anything), so every
// helper here accepts invalid UTF-8 and says so instead of assuming validity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folio::tokenizer::utf8 {

// Length of the valid UTF-8 sequence starting at s[pos] (1..4), or 0 when the
// bytes there do not form a complete, well-formed sequence (stray continuation
// byte, overlong form, surrogate, > U+10FFFF, or truncated at the end of s).
std::size_t valid_sequence_length(std::string_view s, std::size_t pos);

// Length of the longest prefix of s[pos..] that could still grow into a valid
// sequence if more bytes were appended (used by streaming). Returns 0 when the
// byte at pos can never start a valid sequence.
std::size_t incomplete_prefix_length(std::string_view s, std::size_t pos);

// Length of the maximal ill-formed subpart starting at pos (Unicode "maximal
// subpart" practice, as Python and Rust use): the number of bytes one U+FFFD
// replaces. Only meaningful when valid_sequence_length(s, pos) == 0.
std::size_t invalid_subpart_length(std::string_view s, std::size_t pos);

// Appends the UTF-8 encoding of code point cp (must be <= 0x10FFFF).
void append(std::string& out, char32_t cp);

// Decodes the valid sequence at s[pos] (caller checked valid_sequence_length).
char32_t decode(std::string_view s, std::size_t pos, std::size_t len);

// s with every ill-formed subpart replaced by U+FFFD (like Rust's
// String::from_utf8_lossy and Python's errors="replace").
std::string to_valid(std::string_view s);

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace folio::tokenizer::utf8
