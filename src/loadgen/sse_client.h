// loadgen/sse_client.h: an asynchronous HTTP/1.1 client for streaming
// (text/event-stream) responses, on Boost.Beast.
//
// One io_context thread drives every in-flight request: post() only starts a
// chain of async operations (connect, write, read header, read body pieces),
// so a thousand concurrent streams cost a thousand sockets, not a thousand
// threads. Each request uses its own connection ("Connection: close"), as a
// benchmark client with no pooling would. Each body piece is fed through an
// SseParser and its events through an OpenAiStreamReader, stamped with the
// time the read completed. Failures (resolve/connect/socket errors, a status
// other than 200 with its body, malformed or error events, a stream without
// "data: [DONE]", an idle socket past the timeout) end in a failed record;
// they never throw out of the io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "loadgen/latency_stats.h"

namespace folio::loadgen {

// http://HOST[:PORT][/PREFIX]; https is not supported (benchmarks run next to the server).
struct HttpUrl {
  std::string host, port = "80", prefix;  // prefix: "" or "/something" without trailing '/'
  std::string str() const { return "http://" + host + ":" + port + prefix; }
};

// Throws folio::Error for anything but a plain http:// URL.
HttpUrl parse_base_url(std::string_view url);

struct ClientOptions {
  std::string api_key;          // sent as "Authorization: Bearer KEY" when not empty
  double idle_timeout_s = 600;  // longest wait for any one connect/write/read
};

class SseClient {
 public:
  // Resolves the host once, here (blocking); throws folio::Error when it cannot.
  SseClient(boost::asio::io_context& io, HttpUrl url, ClientOptions opt);

  using Done = std::function<void(RequestRecord)>;

  // POSTs the JSON `body` to prefix + `target` and streams the response;
  // `done` runs on the io_context thread with `seed` filled in (times, chunks,
  // token counts, ok/error). `seed` carries prompt_tokens / expected_output.
  void post(const std::string& target, std::string body, RequestRecord seed, Done done);

  const HttpUrl& url() const { return url_; }

 private:
  boost::asio::io_context& io_;
  HttpUrl url_;
  ClientOptions opt_;
  boost::asio::ip::tcp::resolver::results_type endpoints_;
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// A blocking GET (its own io_context), for /v1/models and /health; throws
// folio::Error when the server cannot be reached.
HttpReply http_get(const HttpUrl& url, const std::string& target, const ClientOptions& opt);

}  // namespace folio::loadgen
