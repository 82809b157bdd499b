// tests/server/server_fixture.h: a real server on a free localhost port,
// driving a FakeEngine, with the GPT-2 vocabulary from the shared tokenizer
// vectors as its tokenizer and a small chat template.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_engine.h"
#include "http_client.h"
#include "server/server.h"
#include "server/server_config.h"
#include "tokenizer/tokenizer.h"

namespace folio::server::testing {

// The shared test tokenizer (loaded once; fails the test when the file is missing).
const tokenizer::Tokenizer& test_tokenizer();

// A template rendering "<|role|>content\n" per message plus "<|assistant|>".
inline constexpr const char* kTestTemplate =
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";

// Text the fake engine produces by default, one GPT-2 token per word piece.
inline constexpr const char* kScriptText =
    " Hello world. The quick brown fox jumps over the lazy dog.";

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Restarts with a different config / engine (call from a test body).
  void restart(ServerConfig cfg, FakeEngineOptions opts);
  static ServerConfig default_config();
  FakeEngineOptions default_engine() const;

  HttpResponse post(const std::string& path, const nlohmann::json& body,
                    const std::vector<std::string>& headers = {});
  HttpResponse get(const std::string& path, const std::vector<std::string>& headers = {});
  std::unique_ptr<HttpClient> client() const { return std::make_unique<HttpClient>(port_); }
  // Text of the first `n` script tokens starting at sample offset `s`.
  std::string script_text(std::size_t n, std::size_t s = 0) const;

  std::vector<TokenId> script_;
  ServerConfig cfg_;
  std::unique_ptr<ModelContext> model_;
  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<Logger> log_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

// Parses a JSON body (fails the test on invalid JSON).
nlohmann::json body_json(const HttpResponse& r);

}  // namespace folio::server::testing
