// server/tool_stream.cpp: deciding what streamed text may be sent.
#include "server/tool_stream.h"

namespace folio::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Length of the longest suffix of `s` that is a proper prefix of kOpen.
std::size_t partial_tag(std::string_view s) {
  for (std::size_t n = std::min(s.size(), kOpen.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == kOpen.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

std::string ToolCallStream::feed(std::string_view text) {
  held_ += text;
  if (holding_all_) return {};
  std::string out;
  if (format_ == ToolFormat::kGeneric) {
    if (released_) {
      out.swap(held_);
      return out;
    }
    std::size_t i = 0;
    while (i < held_.size() && is_space(held_[i])) ++i;
    if (i == held_.size()) return {};  // only whitespace so far: undecided
    if (held_[i] == '{') {
      holding_all_ = true;
      return {};
    }
    released_ = true;
    out.swap(held_);
    return out;
  }
  const std::size_t tag = held_.find(kOpen);
  if (tag != std::string::npos) {
    holding_all_ = true;
    out = held_.substr(0, tag);
    held_.erase(0, tag);
    return out;
  }
  const std::size_t keep = partial_tag(held_);
  out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

ParsedOutput ToolCallStream::finish(const std::vector<std::string>& names) {
  ParsedOutput p = parse_tool_calls(held_, format_, names);
  held_.clear();
  return p;
}

}  // namespace folio::server
