// tests/server/limits_test.cpp: size limits, timeouts, admission, shutdown, signals.
#include <csignal>
#include <future>
#include <thread>

#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(ServerTest, BodyTooLargeIs413) {
  ServerConfig cfg = default_config();
  cfg.max_body_bytes = 1000;
  restart(cfg, default_engine());
  HttpClient c(port_);
  const auto r =
      c.request("POST", "/v1/completions", json{{"prompt", std::string(5000, 'a')}}.dump());
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 413);
  EXPECT_TRUE(c.wait_closed(2s));
  // Just under the limit is fine.
  EXPECT_EQ(post("/v1/completions", {{"prompt", std::string(900, 'a')}, {"max_tokens", 1}}).status,
            200);
}

TEST_F(ServerTest, HeaderTooLargeIs431) {
  HttpClient c(port_);
  const auto r = c.request("GET", "/v1/models", "", {"X-Big: " + std::string(20000, 'x')});
  EXPECT_EQ(r.status, 431);
}

TEST_F(ServerTest, MalformedHttpIs400) {
  HttpClient c(port_);
  c.send("THIS IS NOT HTTP\r\n\r\n");
  const auto r = c.read_response(2s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
}

TEST_F(ServerTest, FullAdmissionQueueAnswers429AtOnce) {
  ServerConfig cfg = default_config();
  cfg.max_queue = 4;
  restart(cfg, default_engine());
  engine_->pause(true);
  std::vector<std::unique_ptr<HttpClient>> held;
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 5}}.dump();
  for (int i = 0; i < 4; ++i) {
    held.push_back(client());
    held.back()->send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                      std::to_string(b.size()) + "\r\n\r\n" + b);
  }
  ASSERT_TRUE(engine_->wait_live(4, 5s));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 5}});
  EXPECT_EQ(r.status, 429);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  // A list of prompts needs one slot per prompt.
  engine_->pause(false);
  for (auto& h : held) {
    const auto rr = h->read_response(5s);
    ASSERT_TRUE(rr);
    EXPECT_EQ(rr->status, 200);
  }
  EXPECT_EQ(
      post("/v1/completions", {{"prompt", {"a", "b", "c", "d", "e"}}, {"max_tokens", 1}}).status,
      429);
  EXPECT_EQ(post("/v1/completions", {{"prompt", {"a", "b", "c", "d"}}, {"max_tokens", 1}}).status,
            200);
}

TEST_F(ServerTest, IdleConnectionIsClosed) {
  ServerConfig cfg = default_config();
  cfg.idle_timeout_s = 0.2;
  restart(cfg, default_engine());
  HttpClient c(port_);
  EXPECT_EQ(c.request("GET", "/version").status, 200);
  EXPECT_TRUE(c.wait_closed(3s));
}

TEST_F(ServerTest, SlowRequestTimesOut) {
  ServerConfig cfg = default_config();
  cfg.request_timeout_s = 0.2;
  restart(cfg, default_engine());
  HttpClient c(port_);
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\"");
  // The timeout closes the connection (no reply: the socket is gone).
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.wait_closed(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST_F(ServerTest, ShutdownLetsInFlightRequestsFinish) {
  FakeEngineOptions o = default_engine();
  o.step_latency = 5ms;  // 40 tokens take ~200 ms, within the grace period
  restart(default_config(), o);
  HttpClient c(port_);
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 40}, {"stream", true}}.dump();
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
         "\r\n\r\n" + b);
  ASSERT_TRUE(engine_->wait_live(1, 5s));
  std::thread stopper([&] { server_->shutdown(5.0); });
  std::this_thread::sleep_for(50ms);
  // New connections are refused or get 503 while draining.
  try {
    HttpClient late(port_);
    late.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto r = late.read_response(1s);
    if (r) {
      EXPECT_EQ(r->status, 503);
    }
  } catch (const std::exception&) {
    // connection refused: the acceptor is closed
  }
  const auto r = c.read_response(5s);
  stopper.join();
  ASSERT_TRUE(r);
  const auto ps = sse_payloads(r->body);
  ASSERT_FALSE(ps.empty());
  EXPECT_EQ(ps.back(), "[DONE]");
  EXPECT_EQ(json::parse(ps[ps.size() - 2])["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(engine_->aborted().empty());
}

TEST_F(ServerTest, ShutdownAbortsWhatOutlivesTheGrace) {
  engine_->pause(true);
  HttpClient c(port_);
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 50}}.dump();
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
         "\r\n\r\n" + b);
  ASSERT_TRUE(engine_->wait_live(1, 5s));
  const auto t0 = std::chrono::steady_clock::now();
  server_->shutdown(0.2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(engine_->aborted().size(), 1u);
  EXPECT_EQ(engine_->live(), 0u);
}

TEST_F(ServerTest, RunServerReturnsZeroOnSigterm) {
  TearDown();
  engine_ = std::make_unique<FakeEngine>(default_engine());
  std::promise<std::uint16_t> listening;
  auto done = std::async(std::launch::async, [&] {
    return run_server(cfg_, *engine_, *model_, *log_,
                      [&](std::uint16_t p) { listening.set_value(p); });
  });
  const std::uint16_t port = listening.get_future().get();
  HttpClient c(port);
  EXPECT_EQ(c.request("GET", "/health").status, 200);
  std::raise(SIGTERM);
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(done.get(), 0);
}

}  // namespace
}  // namespace folio::server::testing
