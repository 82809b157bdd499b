// SseClient and the bench runner against a scripted localhost HTTP server:
// chunked SSE split mid-line, HTTP errors, truncated streams, refused
// connections, idle timeouts, the concurrency limit and GET /v1/models.
#include "loadgen/sse_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "base/error.h"
#include "loadgen/bench_serve.h"

namespace folio::loadgen {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Raw bytes to write, in pieces, with a pause after each (so reads split).
using Script = std::vector<std::string>;

// Serves each connection on its own thread: reads one request (head + body by
// Content-Length), records it, and writes what `respond` returns.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<Script(const std::string&)> respond,
                          std::chrono::milliseconds pause = std::chrono::milliseconds(5))
      : respond_(std::move(respond)),
        pause_(pause),
        acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(io_);
    poke.connect(acceptor_.local_endpoint(), ec);  // wakes accept()
    thread_.join();
    for (auto& t : handlers_) t.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  HttpUrl url() const { return parse_base_url("http://127.0.0.1:" + std::to_string(port())); }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  int max_concurrent() const { return max_live_; }

 private:
  void accept_loop() {
    while (true) {
      auto sock = std::make_shared<tcp::socket>(io_);
      boost::system::error_code ec;
      acceptor_.accept(*sock, ec);
      if (stop_ || ec) return;
      handlers_.emplace_back([this, sock] { serve(*sock); });
    }
  }

  static std::string read_request(tcp::socket& s) {
    std::string data;
    char buf[4096];
    boost::system::error_code ec;
    std::size_t need = std::string::npos;
    while (need == std::string::npos || data.size() < need) {
      const std::size_t n = s.read_some(asio::buffer(buf), ec);
      if (ec) break;
      data.append(buf, n);
      const std::size_t head = data.find("\r\n\r\n");
      if (need == std::string::npos && head != std::string::npos) {
        std::size_t len = 0;
        std::string lower = data.substr(0, head);
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (const std::size_t cl = lower.find("content-length:"); cl != std::string::npos)
          len = std::stoul(lower.substr(cl + 15));
        need = head + 4 + len;
      }
    }
    return data;
  }

  void serve(tcp::socket& s) {
    const int live = ++live_;
    for (int m = max_live_; live > m && !max_live_.compare_exchange_weak(m, live);) {
    }
    const std::string req = read_request(s);
    {
      std::lock_guard<std::mutex> l(mu_);
      requests_.push_back(req);
    }
    boost::system::error_code ec;
    const Script script = respond_(req);
    for (std::size_t i = 0; i < script.size(); ++i) {
      // Leaves the live count before the last piece: the client cannot have
      // finished earlier, so live_ never exceeds the client's in-flight count.
      if (i + 1 == script.size()) --live_;
      asio::write(s, asio::buffer(script[i]), ec);
      if (i + 1 < script.size()) std::this_thread::sleep_for(pause_);
    }
    if (script.empty()) --live_;
    s.shutdown(tcp::socket::shutdown_both, ec);
  }

  std::function<Script(const std::string&)> respond_;
  std::chrono::milliseconds pause_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::vector<std::thread> handlers_;
  std::atomic<bool> stop_{false};
  std::atomic<int> live_{0}, max_live_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
};

std::string chunk(const std::string& data) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// A chunked SSE response of three one-token chunks + usage + [DONE], cut into
// pieces in the middle of chunk framing and SSE lines.
Script good_stream() {
  std::string body;
  for (const char* t : {"a", "b", "c"})
    body += chunk(std::string("data: {\"choices\":[{\"text\":\"") + t + "\"}]}\n\n");
  body +=
      chunk("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":3}}\n\n");
  body += chunk("data: [DONE]\n\n") + "0\r\n\r\n";
  Script s = {
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"};
  for (std::size_t at = 0; at < body.size(); at += 23) s.push_back(body.substr(at, 23));
  return s;
}

RequestRecord post_one(const HttpUrl& url, ClientOptions opt = {}) {
  asio::io_context io;
  SseClient client(io, url, std::move(opt));
  RequestRecord seed;
  seed.prompt_tokens = 2;
  seed.expected_output = 3;
  RequestRecord out;
  bool called = false;
  client.post("/v1/completions", R"({"prompt":[1,2],"stream":true})", seed, [&](RequestRecord r) {
    out = std::move(r);
    called = true;
  });
  io.run();
  EXPECT_TRUE(called);
  return out;
}

TEST(SseClient, StreamsChunkedEventsSplitAnywhere) {
  ScriptedServer srv([](const std::string&) { return good_stream(); });
  const RequestRecord r = post_one(srv.url(), {.api_key = "k1", .idle_timeout_s = 10});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunk_times.size(), 3u);
  EXPECT_TRUE(r.usage_reported);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.prompt_tokens, 4);
  EXPECT_LE(r.start, r.chunk_times.front());
  EXPECT_TRUE(std::is_sorted(r.chunk_times.begin(), r.chunk_times.end()));
  EXPECT_LE(r.chunk_times.back(), r.end);
  EXPECT_GT(r.chunk_times.back(), r.chunk_times.front());  // pieces arrived 5 ms apart
  const auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].rfind("POST /v1/completions HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(reqs[0].find("Authorization: Bearer k1\r\n"), std::string::npos);
  EXPECT_NE(reqs[0].find("{\"prompt\":[1,2],\"stream\":true}"), std::string::npos);
}

TEST(SseClient, HttpErrorStatusFailsWithTheBody) {
  ScriptedServer srv([](const std::string&) {
    const std::string body = R"({"error":{"message":"prompt too long"}})";
    return Script{"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n\r\n" + body};
  });
  const RequestRecord r = post_one(srv.url());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("HTTP 400"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("prompt too long"), std::string::npos) << r.error;
}

TEST(SseClient, ErrorEventInStreamFails) {
  ScriptedServer srv([](const std::string&) {
    return Script{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                  "data: {\"error\":{\"message\":\"engine overloaded\"}}\n\n"};
  });
  const RequestRecord r = post_one(srv.url());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("engine overloaded"), std::string::npos) << r.error;
}

TEST(SseClient, StreamWithoutDoneFails) {
  ScriptedServer srv([](const std::string&) {
    return Script{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                  "data: {\"choices\":[{\"text\":\"a\"}]}\n\n"};
  });
  const RequestRecord r = post_one(srv.url());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("[DONE]"), std::string::npos) << r.error;
}

TEST(SseClient, NotAnEventStreamFails) {
  ScriptedServer srv([](const std::string&) {
    return Script{
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"};
  });
  const RequestRecord r = post_one(srv.url());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("text/event-stream"), std::string::npos) << r.error;
}

TEST(SseClient, RefusedConnectionFails) {
  std::uint16_t port;
  {
    ScriptedServer srv([](const std::string&) { return Script{}; });
    port = srv.port();
  }
  const RequestRecord r = post_one(parse_base_url("http://127.0.0.1:" + std::to_string(port)));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("connect"), std::string::npos) << r.error;
}

TEST(SseClient, SilentServerTimesOut) {
  ScriptedServer srv(
      [](const std::string&) {
        return Script{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", ""};
      },
      std::chrono::milliseconds(800));
  const RequestRecord r = post_one(srv.url(), {.api_key = "", .idle_timeout_s = 0.2});
  EXPECT_FALSE(r.ok);
  EXPECT_LT(r.e2e(), 0.7);
}

TEST(SseClient, ParsesBaseUrls) {
  const HttpUrl a = parse_base_url("http://localhost:8080/");
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.port, "8080");
  EXPECT_EQ(a.prefix, "");
  const HttpUrl b = parse_base_url("http://10.0.0.1/api/");
  EXPECT_EQ(b.port, "80");
  EXPECT_EQ(b.prefix, "/api");
  EXPECT_EQ(parse_base_url("http://[::1]:9000").host, "::1");
  for (const char* bad :
       {"https://x", "localhost:8000", "http://", "http://h:", "http://h:99999", "http://h:8a"})
    EXPECT_THROW(parse_base_url(bad), Error) << bad;
}

TEST(BenchServe, RunsUnderTheConcurrencyLimitAndResolvesTheModel) {
  ScriptedServer srv([](const std::string& req) {
    if (req.rfind("GET /v1/models", 0) == 0) {
      const std::string body = R"({"object":"list","data":[{"id":"m-1","object":"model"}]})";
      return Script{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body};
    }
    return good_stream();
  });
  BenchServeConfig c;
  c.url = srv.url();
  c.max_concurrency = 2;
  c.progress = false;
  RandomPromptConfig rp;
  rp.num_prompts = 6;
  rp.input_len = 4;
  rp.output_len = 3;
  c.prompts = random_prompts(rp);
  const BenchServeResult r = run_bench_serve(c);
  EXPECT_EQ(r.model, "m-1");
  EXPECT_EQ(r.summary.completed, 6u);
  EXPECT_EQ(r.summary.failed, 0u);
  EXPECT_EQ(r.summary.total_output_tokens, 18);
  EXPECT_EQ(r.summary.output_len_mismatches, 0u);
  EXPECT_EQ(srv.max_concurrent(), 2);  // the limit is reached and never exceeded
  const auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 8u);  // models + warm-up + 6
  const std::string& body = reqs.back().substr(reqs.back().find("\r\n\r\n") + 4);
  const auto j = nlohmann::json::parse(body);
  EXPECT_EQ(j["model"], "m-1");
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["max_tokens"], 3);
  EXPECT_EQ(j["prompt"].size(), 4u);
  const auto out = result_json(c, r);
  EXPECT_EQ(out["completed"], 6);
  EXPECT_EQ(out["output_lens"].size(), 6u);
  EXPECT_EQ(out["request_rate"], "inf");
}

TEST(BenchServe, FailedWarmupThrows) {
  ScriptedServer srv([](const std::string&) {
    return Script{"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"};
  });
  BenchServeConfig c;
  c.url = srv.url();
  c.model = "x";
  c.progress = false;
  RandomPromptConfig rp;
  rp.num_prompts = 2;
  c.prompts = random_prompts(rp);
  EXPECT_THROW(run_bench_serve(c), Error);
}

}  // namespace
}  // namespace folio::loadgen
