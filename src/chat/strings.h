// chat/strings.h: Python str operations the templates use, over UTF-8.
//
// strip() without arguments removes exactly the characters Python's
// str.isspace() accepts (ASCII and Unicode spaces), because templates trim
// user content and must agree byte for byte with transformers. upper/lower/
// title/capitalize change ASCII letters only (templates apply them to role
// names); non-ASCII letters pass through unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace folio::chat {

std::string py_strip(std::string_view s, bool left, bool right,
                     std::optional<std::string_view> chars = std::nullopt);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_title(std::string_view s);
std::string py_capitalize(std::string_view s);
std::vector<std::string> py_split(std::string_view s, std::optional<std::string_view> sep,
                                  std::int64_t maxsplit);
std::string py_replace(std::string_view s, std::string_view from, std::string_view to,
                       std::int64_t count, std::size_t max_bytes);

// Byte offsets of each code point start, plus s.size() at the end.
std::vector<std::size_t> code_point_offsets(std::string_view s);

}  // namespace folio::chat
