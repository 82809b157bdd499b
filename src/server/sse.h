// server/sse.h: Server-Sent Events and HTTP/1.1 chunked framing.
//
// A stream is sent as a chunked HTTP response whose chunks are SSE events:
// "data: <json>\n\n" per event and "data: [DONE]\n\n" at the end (OpenAI's
// convention). Both framings are plain string functions so they are tested
// without a socket.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace folio::server {

// One SSE event carrying `payload` (which must not contain a newline: JSON
// from dump() never does).
inline std::string sse_data(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out += "data: ";
  out += payload;
  out += "\n\n";
  return out;
}

inline std::string sse_done() {
  return "data: [DONE]\n\n";
}

// One HTTP/1.1 chunk (size in hex, CRLF, data, CRLF); empty data is skipped
// because a zero-size chunk would end the response.
inline std::string http_chunk(std::string_view data) {
  if (data.empty()) return {};
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size);
  out += data;
  out += "\r\n";
  return out;
}

inline std::string http_last_chunk() {
  return "0\r\n\r\n";
}

}  // namespace folio::server
