// tests/server/server_fixture.cpp: starting and stopping the server under test.
#include "server_fixture.h"

#include <cstdio>

#include "gguf/gguf_file.h"

namespace folio::server::testing {

const tokenizer::Tokenizer& test_tokenizer() {
  static const tokenizer::Tokenizer tok = [] {
    const std::string path =
        std::string(FOLIO_SHARED_DIR) + "/tokenizer-vectors/ggml-vocab-gpt-2.gguf";
    return tokenizer::Tokenizer::from_gguf(gguf::GgufFile::open(path));
  }();
  return tok;
}

ServerConfig ServerTest::default_config() {
  ServerConfig c;
  c.host = "127.0.0.1";
  c.port = 0;
  c.served_model_name = {"test-model", "alias"};
  c.io_threads = 2;
  c.shutdown_grace_s = 2;
  return c;
}

FakeEngineOptions ServerTest::default_engine() const {
  FakeEngineOptions o;
  o.script = script_;
  return o;
}

void ServerTest::SetUp() {
  script_ = test_tokenizer().encode(kScriptText);
  restart(default_config(), default_engine());
}

void ServerTest::TearDown() {
  if (server_) server_->shutdown(1.0);
  server_.reset();
  engine_.reset();
}

void ServerTest::restart(ServerConfig cfg, FakeEngineOptions opts) {
  TearDown();
  cfg_ = std::move(cfg);
  model_ = std::make_unique<ModelContext>(make_model_context(
      test_tokenizer(), cfg_.served_model_name, "/models/test.gguf", 256, kTestTemplate));
  model_->load_seconds = 0.75;
  opts.limits.vocab_size = static_cast<std::int32_t>(test_tokenizer().vocab().size());
  engine_ = std::make_unique<FakeEngine>(std::move(opts));
  log_ = std::make_unique<Logger>(stderr, LogLevel::kWarn);
  server_ = std::make_unique<Server>(cfg_, *engine_, *model_, *log_);
  port_ = server_->start();
}

HttpResponse ServerTest::post(const std::string& path, const nlohmann::json& body,
                              const std::vector<std::string>& headers) {
  HttpClient c(port_);
  return c.request("POST", path, body.dump(), headers);
}

HttpResponse ServerTest::get(const std::string& path, const std::vector<std::string>& headers) {
  HttpClient c(port_);
  return c.request("GET", path, "", headers);
}

std::string ServerTest::script_text(std::size_t n, std::size_t s) const {
  std::vector<TokenId> ids;
  for (std::size_t i = 0; i < n; ++i) ids.push_back(script_[(i + s) % script_.size()]);
  return test_tokenizer().decode(ids);
}

nlohmann::json body_json(const HttpResponse& r) {
  try {
    return nlohmann::json::parse(r.body);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "invalid JSON body: " << r.body;
    return nullptr;
  }
}

}  // namespace folio::server::testing
