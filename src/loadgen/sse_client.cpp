// loadgen/sse_client.cpp: the async request chain behind SseClient (see sse_client.h).
//
//   post ─▶ connect ─▶ write ─▶ read header ─┬─ 200 ─▶ read some ─▶ SSE events ─┐
//                                            │            ▲______________________│ (until the
//                                            └─ other ─▶ read body ─▶ failed      message ends)
#include "loadgen/sse_client.h"

#include <boost/asio/connect.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <limits>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "loadgen/openai_stream.h"
#include "loadgen/sse_parser.h"

namespace folio::loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpUrl parse_base_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (url.substr(0, scheme.size()) != scheme)
    throw Error("--base-url '" + std::string(url) +
                "': only http://HOST[:PORT] URLs are supported");
  std::string_view rest = url.substr(scheme.size());
  HttpUrl u;
  const std::size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    u.prefix = rest.substr(slash);
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
    rest = rest.substr(0, slash);
  }
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && rest.find(']', colon) == std::string_view::npos) {
    u.port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (u.port.empty() || u.port.find_first_not_of("0123456789") != std::string::npos ||
        u.port.size() > 5 || std::stoi(u.port) > 65535)
      throw Error("--base-url '" + std::string(url) + "': bad port '" + u.port + "'");
  }
  if (rest.size() > 2 && rest.front() == '[' && rest.back() == ']')
    rest = rest.substr(1, rest.size() - 2);
  if (rest.empty()) throw Error("--base-url '" + std::string(url) + "': no host");
  u.host = rest;
  return u;
}

namespace {

template <class Body>
void set_common_headers(http::request<Body>& req, const HttpUrl& url, const ClientOptions& opt) {
  req.set(http::field::host, url.host + ":" + url.port);
  req.set(http::field::user_agent, "folio-bench-serve");
  if (!opt.api_key.empty()) req.set(http::field::authorization, "Bearer " + opt.api_key);
  req.keep_alive(false);
}

std::chrono::steady_clock::duration to_duration(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// One streaming request; keeps itself alive through the handlers it schedules.
class StreamCall : public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(asio::io_context& io, double idle_timeout_s, RequestRecord seed, SseClient::Done done)
      : stream_(io),
        idle_timeout_s_(idle_timeout_s),
        rec_(std::move(seed)),
        reader_(rec_),
        done_(std::move(done)) {}

  void start(const tcp::resolver::results_type& endpoints, http::request<http::string_body> req) {
    req_ = std::move(req);
    rec_.start = monotonic_seconds();
    arm();
    stream_.async_connect(
        endpoints, [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
          if (ec) return self->fail("connect: " + ec.message());
          self->stream_.socket().set_option(tcp::no_delay(true), ec);
          self->arm();
          http::async_write(self->stream_, self->req_, [self](beast::error_code wec, std::size_t) {
            if (wec) return self->fail("write: " + wec.message());
            self->read_header();
          });
        });
  }

 private:
  void arm() { stream_.expires_after(to_duration(idle_timeout_s_)); }

  void read_header() {
    // No effective cumulative limit: the body is consumed and cleared piece by
    // piece, and SseParser bounds what one event may hold. (A huge number, not
    // boost::none: Boost 1.74 compares Content-Length against an empty
    // optional as "over the limit".)
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
    arm();
    http::async_read_header(stream_, buf_, parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->fail("read header: " + ec.message());
                              self->on_header();
                            });
  }

  void on_header() {
    const auto& res = parser_.get();
    if (res.result_int() != 200) return read_error_body();
    const auto type = res[http::field::content_type];
    if (type.substr(0, 17) != "text/event-stream")
      return fail("expected a text/event-stream response, got '" + std::string(type) + "'");
    read_some();
  }

  // Reads at most ~64 KiB of an error response: enough for the message, bounded
  // whatever the server sends.
  void read_error_body() {
    arm();
    http::async_read_some(
        stream_, buf_, parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
          const auto& res = self->parser_.get();
          if (!ec && !self->parser_.is_done() && res.body().size() < 64 * 1024)
            return self->read_error_body();
          self->fail("HTTP " + std::to_string(res.result_int()) + ": " + res.body().substr(0, 500));
        });
  }

  void read_some() {
    arm();
    http::async_read_some(
        stream_, buf_, parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_body(ec); });
  }

  void on_body(beast::error_code ec) {
    const double t = monotonic_seconds();
    std::string& body = parser_.get().body();
    try {
      events_.clear();
      sse_.feed(body, events_);
      body.clear();
      for (const std::string& e : events_) {
        if (reader_.saw_done()) break;  // nothing after [DONE] counts
        if (reader_.on_event(e, t)) rec_.end = t;
      }
    } catch (const std::exception& e) {
      return fail(e.what());
    }
    if (ec == http::error::end_of_stream || parser_.is_done()) return finish(t);
    if (ec) return fail("read: " + ec.message());
    read_some();
  }

  void finish(double t) {
    if (!reader_.saw_done()) return fail("the stream ended without 'data: [DONE]'");
    if (rec_.end == 0) rec_.end = t;
    reader_.finish();
    rec_.ok = true;
    complete();
  }

  void fail(std::string why) {
    if (rec_.end == 0) rec_.end = monotonic_seconds();
    rec_.ok = false;
    rec_.error = std::move(why);
    complete();
  }

  void complete() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    if (done_) std::exchange(done_, nullptr)(std::move(rec_));
  }

  beast::tcp_stream stream_;
  double idle_timeout_s_;
  http::request<http::string_body> req_;
  beast::flat_buffer buf_;
  http::response_parser<http::string_body> parser_;
  SseParser sse_;
  std::vector<std::string> events_;
  RequestRecord rec_;
  OpenAiStreamReader reader_;
  SseClient::Done done_;
};

}  // namespace

SseClient::SseClient(asio::io_context& io, HttpUrl url, ClientOptions opt)
    : io_(io), url_(std::move(url)), opt_(std::move(opt)) {
  tcp::resolver resolver(io_);
  beast::error_code ec;
  endpoints_ = resolver.resolve(url_.host, url_.port, ec);
  if (ec) throw Error("cannot resolve " + url_.host + ":" + url_.port + ": " + ec.message());
}

void SseClient::post(const std::string& target, std::string body, RequestRecord seed, Done done) {
  http::request<http::string_body> req{http::verb::post, url_.prefix + target, 11};
  set_common_headers(req, url_, opt_);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  req.body() = std::move(body);
  req.prepare_payload();
  auto call =
      std::make_shared<StreamCall>(io_, opt_.idle_timeout_s, std::move(seed), std::move(done));
  call->start(endpoints_, std::move(req));
}

HttpReply http_get(const HttpUrl& url, const std::string& target, const ClientOptions& opt) {
  // Async operations under io.run_for, so a server that accepts and never
  // answers cannot hang the caller past the timeout.
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(16u << 20);
  http::request<http::empty_body> req{http::verb::get, url.prefix + target, 11};
  set_common_headers(req, url, opt);
  const std::string where = url.str() + target;
  std::string error;
  bool done = false;
  tcp::resolver resolver(io);
  beast::error_code ec;
  const auto endpoints = resolver.resolve(url.host, url.port, ec);
  if (ec) throw Error("cannot resolve " + url.host + ": " + ec.message());
  stream.async_connect(endpoints, [&](beast::error_code cec, const tcp::endpoint&) {
    if (cec) {
      error = "cannot connect to " + where + ": " + cec.message() + " (is the server up?)";
      return;
    }
    http::async_write(stream, req, [&](beast::error_code wec, std::size_t) {
      if (wec) {
        error = "GET " + where + ": " + wec.message();
        return;
      }
      http::async_read(stream, buf, parser, [&](beast::error_code rec, std::size_t) {
        if (rec) error = "GET " + where + ": " + rec.message();
        done = !rec;
      });
    });
  });
  io.run_for(to_duration(opt.idle_timeout_s));
  if (!error.empty()) throw Error(error);
  if (!done)
    throw Error("GET " + where + ": no answer within " + std::to_string(opt.idle_timeout_s) + " s");
  return {static_cast<int>(parser.get().result_int()), parser.get().body()};
}

}  // namespace folio::loadgen
