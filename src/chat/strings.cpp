// chat/strings.cpp: Python-compatible string helpers.
#include "chat/strings.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace folio::chat {
namespace {

// Decodes one code point at s[i] (valid UTF-8 assumed; bad bytes decode as themselves).
std::uint32_t decode(std::string_view s, std::size_t i, std::size_t* len) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) n = 1;
  std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < n; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  *len = n;
  return cp;
}

bool py_isspace(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace

std::vector<std::size_t> code_point_offsets(std::string_view s) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < s.size();) {
    out.push_back(i);
    std::size_t n = 1;
    decode(s, i, &n);
    i += n;
  }
  out.push_back(s.size());
  return out;
}

std::string py_strip(std::string_view s, bool left, bool right,
                     std::optional<std::string_view> chars) {
  const auto offs = code_point_offsets(s);
  const std::size_t n = offs.size() - 1;
  auto strippable = [&](std::size_t k) {
    std::size_t len = 0;
    const std::uint32_t cp = decode(s, offs[k], &len);
    if (!chars) return py_isspace(cp);
    const std::string_view one = s.substr(offs[k], offs[k + 1] - offs[k]);
    // `chars` is a set of code points; compare each of its characters.
    const auto set = code_point_offsets(*chars);
    for (std::size_t j = 0; j + 1 < set.size(); ++j) {
      if (chars->substr(set[j], set[j + 1] - set[j]) == one) return true;
    }
    return false;
  };
  std::size_t b = 0, e = n;
  if (left) {
    while (b < e && strippable(b)) ++b;
  }
  if (right) {
    while (e > b && strippable(e - 1)) --e;
  }
  return std::string(s.substr(offs[b], offs[e] - offs[b]));
}

std::string py_upper(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

std::string py_lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

std::string py_title(std::string_view s) {
  std::string o(s);
  bool prev_cased = false;
  for (char& c : o) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u)) {
      c = static_cast<char>(prev_cased ? std::tolower(u) : std::toupper(u));
      prev_cased = true;
    } else {
      prev_cased = u >= 0x80 && prev_cased;  // treat non-ASCII as continuing a word
    }
  }
  return o;
}

std::string py_capitalize(std::string_view s) {
  std::string o = py_lower(s);
  if (!o.empty()) o[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(o[0])));
  return o;
}

std::vector<std::string> py_split(std::string_view s, std::optional<std::string_view> sep,
                                  std::int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) throw Error("split(): empty separator");
    std::size_t start = 0;
    for (;;) {
      const std::size_t at = (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit)
                                 ? s.find(*sep, start)
                                 : std::string_view::npos;
      if (at == std::string_view::npos) {
        out.emplace_back(s.substr(start));
        return out;
      }
      out.emplace_back(s.substr(start, at - start));
      start = at + sep->size();
    }
  }
  // Whitespace split: runs of whitespace separate, no empty strings.
  const auto offs = code_point_offsets(s);
  std::size_t k = 0;
  const std::size_t n = offs.size() - 1;
  auto space_at = [&](std::size_t j) {
    std::size_t len = 0;
    return py_isspace(decode(s, offs[j], &len));
  };
  for (;;) {
    while (k < n && space_at(k)) ++k;
    if (k == n) return out;
    if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) == maxsplit) {
      std::size_t e = n;
      while (e > k && space_at(e - 1)) --e;
      out.emplace_back(s.substr(offs[k], offs[e] - offs[k]));
      return out;
    }
    std::size_t j = k;
    while (j < n && !space_at(j)) ++j;
    out.emplace_back(s.substr(offs[k], offs[j] - offs[k]));
    k = j;
  }
}

std::string py_replace(std::string_view s, std::string_view from, std::string_view to,
                       std::int64_t count, std::size_t max_bytes) {
  std::string out;
  std::size_t start = 0;
  std::int64_t done = 0;
  auto add = [&](std::string_view piece) {
    if (out.size() + piece.size() > max_bytes) throw Error("replace(): result too large");
    out.append(piece);
  };
  if (from.empty()) {  // Python inserts `to` around every character
    const auto offs = code_point_offsets(s);
    for (std::size_t k = 0; k + 1 < offs.size(); ++k) {
      if (count < 0 || done < count) {
        add(to);
        ++done;
      }
      add(s.substr(offs[k], offs[k + 1] - offs[k]));
    }
    if (count < 0 || done < count) add(to);
    return out;
  }
  for (;;) {
    const std::size_t at =
        (count < 0 || done < count) ? s.find(from, start) : std::string_view::npos;
    if (at == std::string_view::npos) break;
    add(s.substr(start, at - start));
    add(to);
    start = at + from.size();
    ++done;
  }
  add(s.substr(start));
  return out;
}

}  // namespace folio::chat
