// loadgen/sse_parser.h: an incremental text/event-stream (Server-Sent Events)
// parser for the client side.
//
// Bytes arrive in TCP reads that split lines (and CRLF pairs) anywhere; feed()
// keeps the partial line and returns only complete events. Per the WHATWG SSE
// rules: lines end with LF, CRLF or a lone CR; "data:" lines (one optional
// space after the colon) accumulate, joined by LF; a line starting with ':' is
// a comment; other fields (event, id, retry) are ignored here; a blank line
// dispatches the accumulated data as one event (none if there was no data).
// The OpenAI end marker "data: [DONE]" is an ordinary event; callers check
// is_done(). Memory is bounded by max_line_bytes / max_event_bytes so a
// misbehaving server cannot make the client grow without limit.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace folio::loadgen {

class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes = 16u << 20) : max_event_(max_event_bytes) {}

  // Consumes `bytes` and appends each event completed by them to `events`.
  // Throws folio::Error when one line or event exceeds the byte limit.
  void feed(std::string_view bytes, std::vector<std::string>& events);

  // True while a line or an event is incomplete (bytes since the last dispatch).
  bool pending() const { return !line_.empty() || has_data_; }

 private:
  void end_line(std::vector<std::string>& events);

  std::size_t max_event_;
  std::string line_;       // the current, unterminated line
  std::string data_;       // data lines of the current event, LF-joined
  bool has_data_ = false;  // a data line was seen (data may still be empty)
  bool after_cr_ = false;  // the last byte was CR: an LF right after it is part of CRLF
};

// All events of a complete stream (a convenience over SseParser for tests and
// whole bodies).
std::vector<std::string> parse_sse(std::string_view stream);

// The OpenAI stream terminator.
inline bool is_done(std::string_view event_data) {
  return event_data == "[DONE]";
}

}  // namespace folio::loadgen
