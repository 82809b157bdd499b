// server/http_session.cpp: the per-connection state machine.
//
//   read head (idle timeout) -> read body (request timeout) -> route
//     -> plain reply: write -> (keep-alive) read head ...
//     -> job: [probe read pending] poll/write ... done -> stop probe -> read head ...
#include "server/http_session.h"

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "server/api_error.h"
#include "server/beast_request.h"
#include "server/router.h"
#include "server/sse.h"

namespace folio::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

std::string head_of(int status, const std::string& content_type, bool keep_alive,
                    const std::vector<std::pair<std::string, std::string>>& extra,
                    std::optional<std::size_t> content_length) {
  const auto reason = http::obsolete_reason(static_cast<http::status>(status));
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  h += "Server: folio\r\nContent-Type: " + content_type + "\r\n";
  if (content_length) {
    h += "Content-Length: " + std::to_string(*content_length) + "\r\n";
  } else {
    h += "Transfer-Encoding: chunked\r\n";
  }
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& [k, v] : extra) h += k + ": " + v + "\r\n";
  return h + "\r\n";
}

// Most reply bytes a session holds while a write to a slow client is in
// flight (besides that write's own buffer).
constexpr std::size_t kMaxPendingOutput = 1u << 20;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection over `Stream`: plain TCP, or TLS over TCP (then the session
// starts with the handshake, under the request timeout).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;
  using std::enable_shared_from_this<Session<Stream>>::weak_from_this;

 public:
  // Plain TCP (the TLS constructor below is the other; each is instantiated
  // only for its own stream type).
  Session(tcp::socket socket, ServerContext& ctx, std::shared_ptr<PostGate> gate)
      : stream_(std::move(socket)), ctx_(ctx), gate_(std::move(gate)) {
    ++ctx_.connections;
  }
  Session(tcp::socket socket, asio::ssl::context& tls, ServerContext& ctx,
          std::shared_ptr<PostGate> gate)
      : stream_(std::move(socket), tls), ctx_(ctx), gate_(std::move(gate)) {
    ++ctx_.connections;
  }
  ~Session() { --ctx_.connections; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->handshake(); });
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void handshake() {
    if constexpr (kTls) {
      lowest().expires_after(ms(ctx_.config.request_timeout_s));
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = shared_from_this()](beast::error_code ec) {
                                if (ec) return self->close();  // not TLS, or a bad client
                                self->read_head();
                              });
    } else {
      read_head();
    }
  }

  void read_head() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(ctx_.config.max_header_bytes));
    parser_->body_limit(ctx_.config.max_body_bytes);
    lowest().expires_after(ms(ctx_.config.idle_timeout_s));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
  }

  void on_head(beast::error_code ec) {
    if (ec) return read_failed(ec);
    lowest().expires_after(ms(ctx_.config.request_timeout_s));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_body(e); });
  }

  void read_failed(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      return send_error(431, "request header larger than " +
                                 std::to_string(ctx_.config.max_header_bytes) + " bytes");
    }
    if (ec == http::error::body_limit) {
      return send_error(
          413, "request body larger than " + std::to_string(ctx_.config.max_body_bytes) + " bytes");
    }
    // A timeout (idle or --request-timeout) has already closed the socket in
    // beast::tcp_stream, so there is no one to send a 408 to: just close.
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
        ec == http::error::partial_message || ec == asio::ssl::error::stream_truncated) {
      return close();
    }
    send_error(400, "malformed HTTP request: " + ec.message());
  }

  void send_error(int status, const std::string& message) {
    keep_alive_ = false;
    const std::string body = error_body(status, message);
    queue(head_of(status, "application/json", false, {}, body.size()) + body);
    response_complete_ = true;
    flush();
  }

  void on_body(beast::error_code ec) {
    if (ec) return read_failed(ec);
    lowest().expires_never();
    auto msg = parser_->release();
    keep_alive_ = msg.keep_alive() && !ctx_.draining;
    HttpReply reply = route(ctx_, to_http_request(std::move(msg)));
    if (!reply.job) {
      queue(
          head_of(reply.status, reply.content_type, keep_alive_, reply.headers, reply.body.size()) +
          reply.body);
      response_complete_ = true;
      return flush();
    }
    start_job(std::move(reply));
  }

  void start_job(HttpReply reply) {
    job_ = std::move(reply.job);
    job_headers_ = std::move(reply.headers);
    job_content_type_ = reply.content_type;
    head_sent_ = false;
    response_complete_ = false;
    std::weak_ptr<Session> weak = weak_from_this();
    auto exec = stream_.get_executor();
    std::shared_ptr<PostGate> gate = gate_;
    job_->attach([weak, exec, gate] {
      gate->run([&] {
        asio::post(exec, [weak] {
          if (auto self = weak.lock()) self->on_job_ready();
        });
      });
    });
    probe();
    on_job_ready();
  }

  void on_job_ready() {
    if (!job_) return;
    JobOutput o = job_->poll();
    HeaderList headers = job_headers_;
    if (!head_sent_ && (o.done || job_->head_ready())) {
      const HeaderList own = job_->headers();
      headers.insert(headers.end(), own.begin(), own.end());
    }
    // A streamed job that fails before its head (a late routing decision the
    // chosen model refuses) answers with a plain JSON error.
    const bool early_error = !head_sent_ && o.done && o.status != 200;
    if (job_->streaming() && !early_error) {
      if (!head_sent_ && (o.done || job_->head_ready())) {
        queue(head_of(200, job_content_type_, keep_alive_, headers, std::nullopt));
        head_sent_ = true;
      }
      if (head_sent_) queue(http_chunk(o.bytes));
      if (o.done) queue(http_last_chunk());
    } else if (o.done) {
      queue(head_of(o.status, "application/json", keep_alive_, headers, o.bytes.size()) + o.bytes);
    }
    if (o.done) {
      job_.reset();
      response_complete_ = true;
    }
    // A client that stops reading: the socket's buffers fill, the write in
    // flight stalls (dropped after --idle-timeout), and output piles up
    // here. Past the bound the client is taken as gone now.
    if (writing_ && out_pending_.size() > kMaxPendingOutput) return client_gone();
    flush();
  }

  // Disconnect detection: a read pending while the reply is produced.
  void probe() {
    if (probing_ || pipelined_.size() > ctx_.config.max_header_bytes + ctx_.config.max_body_bytes)
      return;
    probing_ = true;
    stream_.async_read_some(asio::buffer(probe_buf_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->on_probe(ec, n);
                            });
  }

  void on_probe(beast::error_code ec, std::size_t n) {
    probing_ = false;
    if (!ec) {
      pipelined_.append(probe_buf_.data(), n);
      if (resume_after_probe_) return resume_reading();
      return probe();
    }
    if (ec == asio::error::operation_aborted && resume_after_probe_) return resume_reading();
    // EOF or reset: the client is gone. Abort its generation now.
    client_gone();
  }

  void client_gone() {
    if (job_) {
      job_->cancel();
      job_.reset();
    }
    close();
  }

  void queue(const std::string& bytes) { out_pending_ += bytes; }

  void flush() {
    if (writing_ || closed_) return;
    if (out_pending_.empty()) {
      if (response_complete_) after_response();
      return;
    }
    writing_ = true;
    out_inflight_ = std::move(out_pending_);
    out_pending_.clear();
    // A client that stops reading is dropped after the idle timeout.
    lowest().expires_after(ms(ctx_.config.idle_timeout_s));
    asio::async_write(
        stream_, asio::buffer(out_inflight_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    writing_ = false;
    lowest().expires_never();
    if (ec) return client_gone();
    flush();
  }

  void after_response() {
    response_complete_ = false;
    if (!keep_alive_) return linger_close();
    if (probing_) {
      resume_after_probe_ = true;
      beast::error_code ignored;
      lowest().socket().cancel(ignored);
      return;
    }
    resume_reading();
  }

  void resume_reading() {
    resume_after_probe_ = false;
    if (!pipelined_.empty()) {
      auto dst = buffer_.prepare(pipelined_.size());
      std::memcpy(dst.data(), pipelined_.data(), pipelined_.size());
      buffer_.commit(pipelined_.size());
      pipelined_.clear();
    }
    read_head();
  }

  // Closing a socket with unread input makes the kernel send RST, which can
  // destroy the error reply (413, 431) before the client reads it. So: stop
  // sending, discard what the client still sends for a moment, then close.
  void linger_close() {
    if (closed_ || probing_) return close();
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().expires_after(std::chrono::seconds(1));
    discard();
  }

  void discard() {
    stream_.async_read_some(asio::buffer(probe_buf_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->discard();
                            });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().socket().close(ignored);
  }

  Stream stream_;
  ServerContext& ctx_;
  std::shared_ptr<PostGate> gate_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<Job> job_;
  HeaderList job_headers_;        // the handler's reply headers for the job
  std::string job_content_type_;  // ... and its content type
  bool head_sent_ = false;        // a streaming job's head is out
  bool keep_alive_ = true;
  bool response_complete_ = false;
  bool writing_ = false;
  bool closed_ = false;
  std::string out_pending_;
  std::string out_inflight_;
  bool probing_ = false;
  bool resume_after_probe_ = false;
  std::array<char, 1024> probe_buf_{};
  std::string pipelined_;
};

// Answers a connection beyond --max-connections: a 503 over plain HTTP (a
// TLS client would need a handshake first: it is just closed), then close.
void refuse_connection(tcp::socket socket, const ServerContext& ctx, bool tls) {
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  const auto close = [s] {
    beast::error_code ignored;
    s->shutdown(tcp::socket::shutdown_both, ignored);
    s->close(ignored);
  };
  if (tls) return close();
  const std::string body =
      error_body(503, "too many connections (" + std::to_string(ctx.config.max_connections) +
                          " open, --max-connections); retry later");
  auto bytes = std::make_shared<std::string>(
      head_of(503, "application/json", false, {{"Retry-After", "1"}}, body.size()) + body);
  asio::async_write(*s, asio::buffer(*bytes),
                    [s, bytes, close](beast::error_code, std::size_t) { close(); });
}

}  // namespace

void start_session(tcp::socket socket, ServerContext& ctx, std::shared_ptr<PostGate> gate,
                   asio::ssl::context* tls) {
  const std::int32_t cap = ctx.config.max_connections;
  if (cap >= 0 && ctx.connections.load() >= cap) {
    return refuse_connection(std::move(socket), ctx, tls != nullptr);
  }
  if (tls) {
    std::make_shared<Session<TlsStream>>(std::move(socket), *tls, ctx, std::move(gate))->start();
  } else {
    std::make_shared<Session<PlainStream>>(std::move(socket), ctx, std::move(gate))->start();
  }
}

}  // namespace folio::server
