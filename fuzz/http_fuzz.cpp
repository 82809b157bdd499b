// fuzz/http_fuzz.cpp: libFuzzer target for the HTTP request path: bytes from
// a client -> Boost.Beast's request parser, configured as the session
// configures it (src/server/http_session.cpp: header_limit from
// max_header_bytes, body_limit from max_body_bytes) -> folio's HttpRequest
// -> route() (src/server/router.h) over a ServerContext of two models on a
// synchronous fake engine (fuzz/sync_engine.h) and two virtual models (a
// routed `auto`, a `cascade`), every job polled to its end.
//
// The input is one connection's byte stream: several pipelined requests,
// Content-Length or chunked bodies. As the session does, each message is
// read (head, then body), routed and answered before the next is parsed
// from the bytes left; a parse error, an incomplete message or
// "Connection: close" ends the connection. At most kMaxMessages per input.
//
// The message -> HttpRequest mapping is the session's own
// (server/beast_request.h).
//
// Findings beyond ASan / UBSan: a 500 (the router's "folio bug": an
// exception other than ApiError escaped a handler), a job that does not
// finish though its engine answered at once, a stream that returns output
// before its head (the session would drop it), a JSON reply or SSE event
// that is not JSON, a reply header holding CR or LF.
//
// Configuration: ServerConfig's defaults except an API key ("sk-fuzz", sent
// by the seeds), one CORS origin ("https://app.example") and max_body_bytes
// = 32 KiB, so that the body limit is reachable within -max_len.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/log.h"
#include "fuzz_model.h"
#include "server/beast_request.h"
#include "server/http_types.h"
#include "server/router.h"
#include "server/server_context.h"
#include "sync_engine.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using folio::server::HttpReply;

constexpr int kMaxMessages = 8;
constexpr int kMaxPolls = 8;

struct Server {
  folio::server::ServerConfig config;
  folio::Logger log{stderr, folio::LogLevel::kError};
  std::unique_ptr<folio::fuzz::SyncEngine> small_engine, large_engine;
  std::unique_ptr<folio::server::ServerContext> ctx;

  Server() {
    config.api_keys = {"sk-fuzz"};
    config.allowed_origins = {"https://app.example"};
    config.max_body_bytes = std::size_t{32} << 10;
    const auto& small = folio::fuzz::fuzz_model_plain();
    const auto& large = folio::fuzz::fuzz_model_tools();
    const folio::TokenId eos = *small.tokenizer->vocab().special().eos;
    // max_model_len, max_num_seqs, KV blocks, block size, vocabulary
    const folio::engine::RequestLimits::Values limits{folio::fuzz::kFuzzMaxModelLen, 256, 1 << 20,
                                                      16, small.vocab_size};
    small_engine = std::make_unique<folio::fuzz::SyncEngine>(limits, eos, small.hidden_size);
    large_engine = std::make_unique<folio::fuzz::SyncEngine>(limits, eos, large.hidden_size);
    folio::server::VirtualModelSpec routed{.name = "auto", .small = "small", .large = "large"};
    folio::server::VirtualModelSpec cascade{.name = "cascade", .small = "small", .large = "large"};
    cascade.cascade.enabled = true;
    cascade.cascade.min_mean_logprob = -0.25;  // the engine's -0.5 escalates
    ctx = std::make_unique<folio::server::ServerContext>(
        config,
        std::vector<folio::server::ModelSpec>{{.model = &small, .engine = small_engine.get()},
                                              {.model = &large, .engine = large_engine.get()}},
        std::vector<folio::server::VirtualModelSpec>{routed, cascade}, log);
  }
};

Server& server() {
  static Server s;
  return s;
}

using Parser = http::request_parser<http::string_body>;

// Feeds `rest` to the parser until the head (`whole` false) or the whole
// message is parsed, as async_read_header / async_read do over a stream that
// ends after `rest`. False on a parse error or an incomplete message.
bool read_part(Parser& p, std::string_view& rest, bool whole) {
  p.eager(whole);
  const auto done = [&] { return whole ? p.is_done() : p.is_header_done(); };
  beast::error_code ec;
  while (!done()) {
    if (rest.empty()) {
      p.put_eof(ec);
      return !ec && done();
    }
    const std::size_t n = p.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    rest.remove_prefix(n);
    if (ec == http::error::need_more) {
      if (n == 0) {  // wants more than the connection will ever send
        p.put_eof(ec);
        return !ec && done();
      }
      continue;
    }
    if (ec) return false;
  }
  return true;
}

bool clean_header(std::string_view s) {
  return s.find_first_of("\r\n") == std::string_view::npos;
}

void check_headers(const folio::server::HeaderList& headers) {
  for (const auto& [k, v] : headers) {
    if (!clean_header(k) || !clean_header(v)) __builtin_trap();
  }
}

void check_json(std::string_view body) {
  if (!nlohmann::json::accept(body)) __builtin_trap();
}

// Every SSE event of a stream carries JSON or [DONE].
void check_sse(std::string_view bytes) {
  while (!bytes.empty()) {
    if (!bytes.starts_with("data: ")) __builtin_trap();
    const std::size_t end = bytes.find("\n\n");
    if (end == std::string_view::npos) __builtin_trap();
    const std::string_view payload = bytes.substr(6, end - 6);
    if (payload != "[DONE]") check_json(payload);
    bytes.remove_prefix(end + 2);
  }
}

// Drives a job as Session::on_job_ready does: poll until done (its engine
// answered at submit, so a few polls must do); a stream's head, with the
// job's headers, goes out once head_ready(), and what a stream returns
// before its head would be lost.
void drive(folio::server::Job& job) {
  job.attach([] {});
  std::string streamed;
  bool head_sent = false;
  for (int i = 0; i < kMaxPolls; ++i) {
    const folio::server::JobOutput o = job.poll();
    if (o.status == 500) __builtin_trap();  // the engine never fails
    const bool early_error = !head_sent && o.done && o.status != 200;
    if (job.streaming() && !early_error) {
      if (!head_sent && (o.done || job.head_ready())) {
        check_headers(job.headers());
        head_sent = true;
      }
      if (!head_sent && !o.bytes.empty()) __builtin_trap();  // output before the head
      streamed += o.bytes;
    } else if (o.done) {
      check_headers(job.headers());
      check_json(o.bytes);
    }
    if (o.done) return check_sse(streamed);
  }
  __builtin_trap();  // the job never finished
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Server& s = server();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int m = 0; m < kMaxMessages && !rest.empty(); ++m) {
    Parser parser;
    parser.header_limit(static_cast<std::uint32_t>(s.config.max_header_bytes));
    parser.body_limit(s.config.max_body_bytes);
    if (!read_part(parser, rest, false) || !read_part(parser, rest, true)) break;
    auto msg = parser.release();
    const bool keep_alive = msg.keep_alive();
    HttpReply reply = folio::server::route(*s.ctx, folio::server::to_http_request(std::move(msg)));
    if (reply.status == 500) __builtin_trap();  // an exception other than ApiError escaped
    if (!clean_header(reply.content_type)) __builtin_trap();
    check_headers(reply.headers);
    if (reply.job) {
      drive(*reply.job);
    } else if (reply.content_type == "application/json") {
      check_json(reply.body);
    }
    if (!keep_alive) break;
  }
  return 0;
}
