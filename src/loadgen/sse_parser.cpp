// loadgen/sse_parser.cpp: line splitting and event assembly (see sse_parser.h).
#include "loadgen/sse_parser.h"

#include "base/error.h"

namespace folio::loadgen {

void SseParser::feed(std::string_view bytes, std::vector<std::string>& events) {
  for (const char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the LF of a CRLF split from its CR (or not split)
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      end_line(events);
      continue;
    }
    if (line_.size() + data_.size() >= max_event_)
      throw Error("server-sent event exceeds " + std::to_string(max_event_) + " bytes");
    line_ += c;
  }
}

void SseParser::end_line(std::vector<std::string>& events) {
  if (line_.empty()) {  // blank line: dispatch
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  const std::string_view line = line_;
  if (line.front() != ':') {  // ':' starts a comment
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_ += '\n';
      data_ += value;
      has_data_ = true;
    }
  }
  line_.clear();
}

std::vector<std::string> parse_sse(std::string_view stream) {
  SseParser p;
  std::vector<std::string> events;
  p.feed(stream, events);
  return events;
}

}  // namespace folio::loadgen
