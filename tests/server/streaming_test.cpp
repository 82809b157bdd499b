// tests/server/streaming_test.cpp: SSE framing, keep-alive, disconnects, concurrency.
#include <atomic>
#include <thread>

#include "server/server_context.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

// Parses every event but [DONE]; checks the framing on the way.
std::vector<json> events(const HttpResponse& r) {
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "text/event-stream");
  EXPECT_EQ(r.headers.at("transfer-encoding"), "chunked");
  const auto payloads = sse_payloads(r.body);
  EXPECT_FALSE(payloads.empty());
  if (payloads.empty()) return {};
  EXPECT_EQ(payloads.back(), "[DONE]");
  std::vector<json> out;
  for (std::size_t i = 0; i + 1 < payloads.size(); ++i) out.push_back(json::parse(payloads[i]));
  return out;
}

TEST_F(ServerTest, CompletionStreamMatchesNonStream) {
  const auto evs =
      events(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 6}, {"stream", true}}));
  std::string text;
  std::string id;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    EXPECT_EQ(evs[i]["object"], "text_completion");
    if (i == 0) id = evs[i]["id"];
    EXPECT_EQ(evs[i]["id"], id);  // one id for the whole stream
    EXPECT_FALSE(evs[i].contains("usage"));
    text += evs[i]["choices"][0]["text"].get<std::string>();
    const bool last = i + 1 == evs.size();
    EXPECT_EQ(evs[i]["choices"][0]["finish_reason"].is_null(), !last);
  }
  EXPECT_EQ(text, script_text(6));
  EXPECT_EQ(evs.back()["choices"][0]["finish_reason"], "length");
}

TEST_F(ServerTest, ChatStreamFirstChunkCarriesRoleAndUsageComesLast) {
  const auto evs =
      events(post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "x"}}}},
                                           {"max_tokens", 4},
                                           {"stream", true},
                                           {"stream_options", {{"include_usage", true}}}}));
  ASSERT_GE(evs.size(), 3u);
  EXPECT_EQ(evs[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(evs[0]["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(evs[0]["usage"].is_null());
  std::string text;
  for (std::size_t i = 1; i + 1 < evs.size(); ++i) {
    EXPECT_FALSE(evs[i]["choices"][0]["delta"].contains("role"));
    EXPECT_TRUE(evs[i].contains("usage") && evs[i]["usage"].is_null());
    text += evs[i]["choices"][0]["delta"].value("content", "");
  }
  EXPECT_EQ(text, script_text(4));
  EXPECT_EQ(evs[evs.size() - 2]["choices"][0]["finish_reason"], "length");
  const json& usage = evs.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 4);
  EXPECT_EQ(usage["usage"]["total_tokens"], usage["usage"]["prompt_tokens"].get<int>() + 4);
}

// An unknown stream_options key is refused by name like any unimplemented
// field (found by schemathesis against /openapi.json: it was ignored).
TEST_F(ServerTest, UnknownStreamOptionIsRefused) {
  const json stream = {
      {"max_tokens", 2},
      {"stream", true},
      {"stream_options", {{"include_usage", true}, {"continuous_usage_stats", true}}}};
  json completion = stream;
  completion["prompt"] = "x";
  json chat = stream;
  chat["messages"] = {{{"role", "user"}, {"content", "x"}}};
  for (const auto& [path, body] :
       {std::pair{"/v1/completions", completion}, std::pair{"/v1/chat/completions", chat}}) {
    const auto r = post(path, body);
    EXPECT_EQ(r.status, 400) << path << ": " << r.body;
    EXPECT_EQ(body_json(r)["error"]["param"], "stream_options.continuous_usage_stats") << r.body;
  }
  completion["stream_options"] = {{"continuous_usage_stats", nullptr}};  // null asks for nothing
  const auto ok = post("/v1/completions", completion);
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(ServerTest, StreamNeverLeaksStopStringPrefix) {
  // Stop "fox jumps" spans tokens; " fox" must never be sent before the match.
  const auto evs =
      events(post("/v1/completions",
                  {{"prompt", "x"}, {"max_tokens", 20}, {"stream", true}, {"stop", "fox jumps"}}));
  std::string text;
  for (const auto& e : evs) {
    const std::string t = e["choices"][0]["text"];
    EXPECT_EQ(t.find("fox"), std::string::npos) << t;
    text += t;
  }
  EXPECT_EQ(text, " Hello world. The quick brown ");
  EXPECT_EQ(evs.back()["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerTest, StreamWithNChoicesAndEcho) {
  const auto evs = events(
      post("/v1/completions",
           {{"prompt", "P"}, {"max_tokens", 3}, {"n", 2}, {"echo", true}, {"stream", true}}));
  std::string text[2];
  for (const auto& e : evs) text[e["choices"][0]["index"].get<int>()] += e["choices"][0]["text"];
  EXPECT_EQ(text[0], "P" + script_text(3, 0));
  EXPECT_EQ(text[1], "P" + script_text(3, 1));
}

TEST_F(ServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  HttpClient c(port_);
  for (int i = 0; i < 3; ++i) {
    auto r = c.request("POST", "/v1/completions",
                       json{{"prompt", "x"}, {"max_tokens", 2}, {"stream", i == 1}}.dump());
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.at("connection"), "keep-alive");
    r = c.request("GET", "/v1/models");
    EXPECT_EQ(r.status, 200);
  }
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  HttpClient c(port_);
  const std::string body = json{{"prompt", "x"}, {"max_tokens", 3}}.dump();
  const std::string req =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  c.send(req + "GET /version HTTP/1.1\r\nHost: x\r\n\r\n");
  auto a = c.read_response();
  ASSERT_TRUE(a);
  EXPECT_EQ(body_json(*a)["choices"][0]["text"], script_text(3));
  auto b = c.read_response();
  ASSERT_TRUE(b);
  EXPECT_TRUE(body_json(*b).contains("version"));
}

TEST_F(ServerTest, DisconnectMidStreamAbortsWithinOneStep) {
  FakeEngineOptions o = default_engine();
  o.step_latency = std::chrono::milliseconds(5);
  restart(default_config(), o);
  HttpClient c(port_);
  // No max_tokens: the completion may fill the context (256 tokens), far
  // longer than the test runs.
  const std::string b = json{{"prompt", "x"}, {"stream", true}, {"ignore_eos", true}}.dump();
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
         "\r\n\r\n" + b);
  const std::string first = c.read_some(200, std::chrono::seconds(5));
  ASSERT_NE(first.find("data: "), std::string::npos);
  ASSERT_EQ(engine_->live(), 1u);
  const auto steps_before = engine_->steps();
  c.close();
  ASSERT_TRUE(engine_->wait_aborted(1, std::chrono::seconds(5)));
  // The abort freed the request within a step or two of the close.
  EXPECT_LE(engine_->steps() - steps_before, 3u);
  EXPECT_EQ(engine_->live(), 0u);
  const auto m = get("/metrics").body;
  EXPECT_NE(
      m.find("folio:request_success_total{finished_reason=\"abort\",model_name=\"test-model\"} 1"),
      std::string::npos);
}

TEST_F(ServerTest, DisconnectDuringNonStreamRequestAborts) {
  engine_->pause(true);  // the request stays in flight
  HttpClient c(port_);
  const std::string b = json{{"prompt", "x"}, {"max_tokens", 50}}.dump();
  c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
         "\r\n\r\n" + b);
  ASSERT_TRUE(engine_->wait_live(1, std::chrono::seconds(5)));
  c.close();
  EXPECT_TRUE(engine_->wait_aborted(1, std::chrono::seconds(5)));
  EXPECT_TRUE(engine_->wait_live(0, std::chrono::seconds(1)));
}

TEST_F(ServerTest, SixtyFourConcurrentStreamingClients) {
  constexpr int kClients = 96;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      HttpClient c(port_);
      const int n = 5 + i % 7;
      json body = i % 2 ? json{{"prompt", "x"}}
                        : json{{"messages", {{{"role", "user"}, {"content", "x"}}}}};
      body["max_tokens"] = n;
      body["stream"] = true;
      const auto r =
          c.request("POST", i % 2 ? "/v1/completions" : "/v1/chat/completions", body.dump());
      const auto ps = sse_payloads(r.body);
      std::string text;
      for (std::size_t k = 0; k + 1 < ps.size(); ++k) {
        const json e = json::parse(ps[k]);
        text += i % 2 ? e["choices"][0]["text"].get<std::string>()
                      : e["choices"][0]["delta"].value("content", "");
      }
      if (r.status == 200 && ps.back() == "[DONE]" &&
          text == script_text(static_cast<std::size_t>(n)))
        ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients);
  EXPECT_EQ(engine_->live(), 0u);
  EXPECT_EQ(server_->context().admission.in_flight(), 0u);
}

}  // namespace
}  // namespace folio::server::testing
