// tests/server/security_test.cpp: API keys on every route, CORS, and what
// shutdown and load shedding tell clients (Retry-After, second signal).
#include <csignal>
#include <future>
#include <thread>

#include "server/server_context.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string header(const HttpResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

TEST_F(ServerTest, SeveralKeysGuardEveryRouteButHealth) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"key-one", "key-two"};
  restart(cfg, default_engine());
  const std::string tok = json{{"prompt", "hi"}}.dump();
  HttpClient c(port_);
  for (const auto& [method, path, body] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/v1/models", ""},
           {"POST", "/tokenize", tok},
           {"POST", "/detokenize", R"({"tokens":[1]})"},
           {"GET", "/version", ""},
           {"GET", "/nowhere", ""}}) {
    const auto r = c.request(method, path, body);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_EQ(header(r, "www-authenticate"), "Bearer") << path;
    EXPECT_EQ(c.request(method, path, body, {"Authorization: Bearer key-three"}).status, 401);
    for (const char* key : {"key-one", "key-two"}) {
      const auto ok = c.request(method, path, body, {std::string("Authorization: Bearer ") + key});
      EXPECT_EQ(ok.status, path == "/nowhere" ? 404 : 200) << path << " " << key;
    }
  }
  EXPECT_EQ(c.request("GET", "/health").status, 200);
  EXPECT_EQ(c.request("GET", "/metrics").status, 200);  // open unless --metrics-require-key
}

TEST_F(ServerTest, MetricsCanRequireAKey) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"k"};
  cfg.metrics_require_key = true;
  restart(cfg, default_engine());
  EXPECT_EQ(get("/metrics").status, 401);
  EXPECT_EQ(get("/metrics", {"Authorization: Bearer k"}).status, 200);
  EXPECT_EQ(get("/health").status, 200);
}

TEST_F(ServerTest, CorsIsOffByDefault) {
  const auto r = get("/v1/models", {"Origin: https://chat.example"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "access-control-allow-origin"), "");
  HttpClient c(port_);
  const auto pre =
      c.request("OPTIONS", "/v1/chat/completions", "",
                {"Origin: https://chat.example", "Access-Control-Request-Method: POST"});
  EXPECT_EQ(pre.status, 405);  // no CORS: OPTIONS is just an unsupported method
  EXPECT_EQ(header(pre, "access-control-allow-origin"), "");
}

TEST_F(ServerTest, CorsForListedOriginsOnly) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"k"};
  cfg.allowed_origins = {"https://chat.example"};
  restart(cfg, default_engine());
  HttpClient c(port_);
  // A preflight needs no key (browsers send none) and names the route's methods.
  const auto pre = c.request("OPTIONS", "/v1/chat/completions", "",
                             {"Origin: https://chat.example", "Access-Control-Request-Method: POST",
                              "Access-Control-Request-Headers: authorization, content-type"});
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(header(pre, "access-control-allow-origin"), "https://chat.example");
  EXPECT_EQ(header(pre, "access-control-allow-methods"), "POST");
  EXPECT_NE(header(pre, "access-control-allow-headers").find("Authorization"), std::string::npos);
  EXPECT_EQ(c.request("OPTIONS", "/v1/chat/completions", "",
                      {"Origin: https://evil.example", "Access-Control-Request-Method: POST"})
                .status,
            403);
  // The request itself still needs the key; its reply carries the origin.
  const std::string body =
      json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}}.dump();
  const auto denied =
      c.request("POST", "/v1/chat/completions", body, {"Origin: https://chat.example"});
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(header(denied, "access-control-allow-origin"), "https://chat.example");
  const auto ok = c.request("POST", "/v1/chat/completions", body,
                            {"Origin: https://chat.example", "Authorization: Bearer k"});
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(header(ok, "access-control-allow-origin"), "https://chat.example");
  EXPECT_EQ(header(ok, "vary"), "Origin");
  // Streaming replies carry it too.
  const std::string sbody = json{{"prompt", "x"}, {"max_tokens", 2}, {"stream", true}}.dump();
  const auto s = c.request("POST", "/v1/completions", sbody,
                           {"Origin: https://chat.example", "Authorization: Bearer k"});
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(header(s, "access-control-allow-origin"), "https://chat.example");
  // Another origin gets no CORS headers (the browser then hides the reply).
  const auto other = c.request("GET", "/v1/models", "",
                               {"Origin: https://evil.example", "Authorization: Bearer k"});
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(header(other, "access-control-allow-origin"), "");
}

TEST_F(ServerTest, SheddingCarriesRetryAfter) {
  ServerConfig cfg = default_config();
  cfg.max_queue = 1;
  restart(cfg, default_engine());
  engine_->pause(true);
  auto held = client();
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 5}}.dump();
  held->send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
             std::to_string(b.size()) + "\r\n\r\n" + b);
  ASSERT_TRUE(engine_->wait_live(1, 5s));
  const auto r = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 5}});
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(header(r, "retry-after"), "1");
  engine_->pause(false);
  const auto first = held->read_response(5s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(header(*first, "retry-after"), "");
}

TEST_F(ServerTest, FullWaitingQueueSheds503WhileAdmittedRequestsComplete) {
  ServerConfig cfg = default_config();
  cfg.max_waiting_requests = 1;
  FakeEngineOptions o = default_engine();
  o.limits.max_num_seqs = 2;
  restart(cfg, o);
  engine_->pause(true);
  std::vector<std::unique_ptr<HttpClient>> held;
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 3}}.dump();
  for (int i = 0; i < 3; ++i) {  // 2 run, 1 waits
    held.push_back(client());
    held.back()->send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                      std::to_string(b.size()) + "\r\n\r\n" + b);
    ASSERT_TRUE(engine_->wait_live(static_cast<std::size_t>(i) + 1, 5s));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto shed = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(shed.status, 503);
  EXPECT_EQ(header(shed, "retry-after"), "1");
  EXPECT_NE(body_json(shed)["error"]["message"].get<std::string>().find("--max-waiting-requests"),
            std::string::npos);
  // A list of two prompts needs two places in the queue: refused whole.
  EXPECT_EQ(post("/v1/completions", {{"prompt", {"a", "b"}}, {"max_tokens", 1}}).status, 503);
  EXPECT_EQ(engine_->live(), 3u);
  engine_->pause(false);
  for (auto& h : held) {
    const auto r = h->read_response(5s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}}).status, 200);
}

TEST_F(ServerTest, ConnectionsBeyondTheCapGet503AndClose) {
  ServerConfig cfg = default_config();
  cfg.max_connections = 2;
  restart(cfg, default_engine());
  auto a = client();
  auto b = client();
  EXPECT_EQ(a->request("GET", "/health").status, 200);  // both sessions are open (keep-alive)
  EXPECT_EQ(b->request("GET", "/health").status, 200);
  HttpClient c(port_);
  const auto refused = c.read_response(5s);  // answered without a request
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(header(*refused, "retry-after"), "1");
  EXPECT_NE(body_json(*refused)["error"]["message"].get<std::string>().find("--max-connections"),
            std::string::npos);
  EXPECT_TRUE(c.wait_closed(2s));
  a.reset();  // a slot frees when a session ends
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (server_->context().connections.load() > 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(get("/health").status, 200);
}

TEST_F(ServerTest, TooManyMessagesIs400NamingTheLimit) {
  json many = json::array();
  for (int i = 0; i < 4097; ++i) many.push_back({{"role", "user"}, {"content", "hi"}});
  const auto r = post("/v1/chat/completions", {{"messages", many}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 400);
  EXPECT_EQ(body_json(r)["error"]["param"], "messages");
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("4096"), std::string::npos);
}

// A client that sends a long streamed request and never reads: the socket
// buffers fill, the reply backs up in the session, and past its bound the
// request is aborted (its KV freed) while the server serves everyone else.
TEST_F(ServerTest, ClientThatStopsReadingIsDroppedAndItsRequestAborted) {
  ServerConfig cfg = default_config();
  cfg.idle_timeout_s = 120;  // only the output bound can end this in time
  FakeEngineOptions o = default_engine();
  o.step_latency = std::chrono::microseconds(1);
  o.limits.max_model_len = 1 << 22;
  restart(cfg, o);
  HttpClient stalled(port_);
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 1 << 21}, {"stream", true}}.dump();
  stalled.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
               std::to_string(b.size()) + "\r\n\r\n" + b);
  ASSERT_TRUE(engine_->wait_aborted(1, 60s));
  EXPECT_EQ(engine_->live(), 0u);
  EXPECT_EQ(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}}).status, 200);
}

// A token the detokenizer cannot show (an engine bug, injected here as an id
// beyond the vocabulary) ends that request with a 500 naming it and aborts
// its generation; a request that never reaches the bad token is untouched.
TEST_F(ServerTest, DetokenizerErrorFailsOnlyItsRequest) {
  FakeEngineOptions o = default_engine();
  o.script = {script_[0], script_[1], 999999, script_[2]};
  restart(default_config(), o);
  const auto bad = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 200}});
  EXPECT_EQ(bad.status, 500);
  EXPECT_NE(body_json(bad)["error"]["message"].get<std::string>().find("999999"), std::string::npos)
      << bad.body;
  ASSERT_TRUE(engine_->wait_aborted(1, 5s));
  const auto streamed =
      post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 200}, {"stream", true}});
  ASSERT_EQ(streamed.status, 200);
  const auto ps = sse_payloads(streamed.body);
  ASSERT_GE(ps.size(), 2u);
  EXPECT_EQ(ps.back(), "[DONE]");
  EXPECT_EQ(json::parse(ps[ps.size() - 2])["error"]["code"], 500);
  const auto good = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}});
  ASSERT_EQ(good.status, 200);
  EXPECT_EQ(body_json(good)["choices"][0]["text"], script_text(2));
  EXPECT_TRUE(engine_->wait_live(0, 5s));
}

// Sends a completion on `c` without waiting for the reply.
void send_completion(HttpClient& c, bool stream) {
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 50}, {"stream", stream}}.dump();
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
         "\r\n\r\n" + b);
}

TEST_F(ServerTest, SecondSignalAbortsInFlightWithAnErrorToEachClient) {
  TearDown();
  engine_ = std::make_unique<FakeEngine>(default_engine());
  cfg_.shutdown_grace_s = 60;  // only the second signal can end this
  std::promise<std::uint16_t> listening;
  auto done = std::async(std::launch::async, [&] {
    return run_server(cfg_, *engine_, *model_, *log_,
                      [&](std::uint16_t p) { listening.set_value(p); });
  });
  const std::uint16_t port = listening.get_future().get();
  engine_->pause(true);
  HttpClient plain(port);
  HttpClient streamed(port);
  send_completion(plain, false);
  send_completion(streamed, true);
  ASSERT_TRUE(engine_->wait_live(2, 5s));
  std::raise(SIGTERM);
  // Draining: the requests are still running, and stay so.
  EXPECT_EQ(done.wait_for(300ms), std::future_status::timeout);
  EXPECT_EQ(engine_->live(), 2u);
  const auto t0 = std::chrono::steady_clock::now();
  std::raise(SIGTERM);
  const auto r1 = plain.read_response(5s);
  const auto r2 = streamed.read_response(5s);
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(done.get(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
  EXPECT_EQ(engine_->aborted().size(), 2u);
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->status, 503);
  EXPECT_NE(json::parse(r1->body)["error"]["message"].get<std::string>().find("shut down"),
            std::string::npos);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 200);  // the stream had started
  const auto ps = sse_payloads(r2->body);
  ASSERT_GE(ps.size(), 2u);
  EXPECT_EQ(ps.back(), "[DONE]");
  EXPECT_EQ(json::parse(ps[ps.size() - 2])["error"]["code"], 503);
}

}  // namespace
}  // namespace folio::server::testing
