// tests/server/http_client.h: a minimal blocking HTTP/1.1 client on raw sockets.
//
// Raw sockets (not Beast) so tests can send anything: malformed requests,
// oversized heads, pipelined requests, half a request then silence, and
// close mid-stream. Reads Content-Length and chunked responses.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace folio::server::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // de-chunked
  std::string raw_body;                        // as received (chunk framing kept)
};

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void send(const std::string& bytes);  // raw bytes
  // Sends one request (keep-alive) and reads its response.
  HttpResponse request(const std::string& method, const std::string& path,
                       const std::string& body = "", const std::vector<std::string>& headers = {});
  // Reads one response; nullopt when the peer closed first or on timeout.
  std::optional<HttpResponse> read_response(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Reads until at least `min_bytes` more arrived (or timeout); returns them.
  std::string read_some(std::size_t min_bytes, std::chrono::milliseconds timeout);
  // True when the server closes the connection within `timeout`.
  bool wait_closed(std::chrono::milliseconds timeout);
  void close();  // abrupt close (the "client disconnects" case)

 private:
  bool fill(std::chrono::steady_clock::time_point deadline);  // false: closed/timeout
  bool read_until(const std::string& marker, std::chrono::steady_clock::time_point deadline);
  bool read_bytes(std::size_t n, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  std::string buf_;  // received, not yet consumed
};

// The "data: ..." payloads of an SSE body, in order.
std::vector<std::string> sse_payloads(const std::string& body);

}  // namespace folio::server::testing
