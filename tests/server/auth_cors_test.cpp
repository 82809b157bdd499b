// tests/server/auth_cors_test.cpp: API keys (server/auth.h) and the CORS
// policy (server/cors.h) as plain functions.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/error.h"
#include "server/auth.h"
#include "server/cors.h"

namespace folio::server {
namespace {

TEST(ApiKeys, NoKeysAuthorizesEverything) {
  const ApiKeys keys;
  EXPECT_FALSE(keys.enabled());
  EXPECT_TRUE(keys.authorized(""));
  EXPECT_TRUE(keys.authorized("Bearer anything"));
}

TEST(ApiKeys, AnyOfSeveralKeysIsAccepted) {
  const ApiKeys keys({"alpha", "beta-longer-key", "g"});
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_TRUE(keys.authorized("Bearer alpha"));
  EXPECT_TRUE(keys.authorized("Bearer beta-longer-key"));
  EXPECT_TRUE(keys.authorized("Bearer g"));
  EXPECT_FALSE(keys.authorized("Bearer alph"));        // a prefix
  EXPECT_FALSE(keys.authorized("Bearer alphaa"));      // an extension
  EXPECT_FALSE(keys.authorized("Bearer "));            // empty token
  EXPECT_FALSE(keys.authorized("alpha"));              // no scheme
  EXPECT_FALSE(keys.authorized("Basic alpha"));        // another scheme
  EXPECT_FALSE(keys.authorized("bearer alpha"));       // case matters, as vLLM
  EXPECT_FALSE(keys.authorized(""));                   // no header
  EXPECT_FALSE(keys.authorized("Bearer alpha beta"));  // extra text
  EXPECT_FALSE(keys.authorized(std::string("Bearer alpha\0", 13)));
}

TEST(ApiKeys, EmptyKeyIsRefused) {
  EXPECT_THROW(ApiKeys({"ok", ""}), Error);
  EXPECT_THROW(resolve_api_keys({""}, ""), Error);
}

TEST(ApiKeys, KeyFileAddsToFlags) {
  const std::string path = ::testing::TempDir() + "folio_keys.txt";
  {
    std::ofstream f(path);
    f << "# team keys\n\n  from-file-1  \r\nfrom-file-2\n   # indented comment\n";
  }
  EXPECT_EQ(read_api_key_file(path), (std::vector<std::string>{"from-file-1", "from-file-2"}));
  const ApiKeys keys = resolve_api_keys({"flag-key"}, path);
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_TRUE(keys.authorized("Bearer flag-key"));
  EXPECT_TRUE(keys.authorized("Bearer from-file-1"));
  EXPECT_TRUE(keys.authorized("Bearer from-file-2"));
  EXPECT_FALSE(keys.authorized("Bearer # team keys"));
  std::remove(path.c_str());
}

TEST(ApiKeys, KeyFileErrorsNameTheFile) {
  const std::string path = ::testing::TempDir() + "folio_no_keys.txt";
  {
    std::ofstream f(path);
    f << "# nothing here\n\n";
  }
  try {
    resolve_api_keys({}, path);
    FAIL() << "an empty key file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no key"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(read_api_key_file(path), Error);  // gone
}

TEST(ApiKeys, EnvironmentOnlyWithoutFlagsOrFile) {
  ::setenv("FOLIO_API_KEY", "env-key", 1);
  EXPECT_TRUE(resolve_api_keys({}, "").authorized("Bearer env-key"));
  EXPECT_FALSE(resolve_api_keys({"flag"}, "").authorized("Bearer env-key"));
  ::setenv("FOLIO_API_KEY", "", 1);
  EXPECT_FALSE(resolve_api_keys({}, "").enabled());
  ::unsetenv("FOLIO_API_KEY");
  EXPECT_FALSE(resolve_api_keys({}, "").enabled());
}

TEST(ApiKeys, RoutesThatNeedAKey) {
  EXPECT_FALSE(route_needs_key("/health", false));
  EXPECT_FALSE(route_needs_key("/health", true));
  EXPECT_FALSE(route_needs_key("/livez", false));
  EXPECT_FALSE(route_needs_key("/livez", true));
  EXPECT_FALSE(route_needs_key("/metrics", false));
  EXPECT_TRUE(route_needs_key("/metrics", true));
  for (const char* p : {"/v1/models", "/v1/chat/completions", "/tokenize", "/detokenize",
                        "/version", "/unknown", "/healthz", "/livez/x", "/ui", "/uix/app.js"}) {
    EXPECT_TRUE(route_needs_key(p, false)) << p;
  }
  // The chat page and its files (web_assets.h): no secret in them.
  for (const char* p : {"/", "/ui/app.js", "/ui/missing.js"}) {
    EXPECT_FALSE(route_needs_key(p, true)) << p;
  }
}

TEST(Cors, OffByDefault) {
  const CorsPolicy p;
  EXPECT_FALSE(p.enabled());
  EXPECT_FALSE(p.allows("https://a.example"));
  EXPECT_TRUE(p.reply_headers("https://a.example").empty());
}

TEST(Cors, ListsInEveryForm) {
  const CorsPolicy p({"https://a.example", "http://b.example:8080, https://C.Example",
                      R"(["https://d.example"])"});
  EXPECT_TRUE(p.enabled());
  for (const char* o : {"https://a.example", "http://b.example:8080", "https://c.example",
                        "HTTPS://A.EXAMPLE", "https://d.example"}) {
    EXPECT_TRUE(p.allows(o)) << o;
  }
  for (const char* o : {"http://a.example", "https://a.example:443", "https://b.example:8080",
                        "https://evil.example", "", "null"}) {
    EXPECT_FALSE(p.allows(o)) << o;
  }
  const HeaderList h = p.reply_headers("https://a.example");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (std::pair<std::string, std::string>{"Access-Control-Allow-Origin",
                                                       "https://a.example"}));
  EXPECT_EQ(h[1].first, "Vary");
}

TEST(Cors, StarAllowsAnyOrigin) {
  const CorsPolicy p({"*"});
  EXPECT_TRUE(p.allows("https://anything.example"));
  EXPECT_FALSE(p.allows(""));  // no Origin: not a cross-origin request
}

TEST(Cors, MalformedOriginsAreRefused) {
  for (const char* bad : {"a.example", "https://a.example/path", "https://", "://x",
                          R"(["https://a.example", 3])", "[not json", "https://a.example?q"}) {
    EXPECT_THROW(CorsPolicy({bad}), Error) << bad;
  }
}

TEST(Cors, Preflight) {
  const CorsPolicy p({"https://a.example"});
  const HttpReply ok = p.preflight("https://a.example", "POST");
  EXPECT_EQ(ok.status, 204);
  bool methods = false;
  for (const auto& [k, v] : ok.headers)
    methods |= k == "Access-Control-Allow-Methods" && v == "POST";
  EXPECT_TRUE(methods);
  EXPECT_EQ(p.preflight("https://evil.example", "POST").status, 403);
  HttpRequest req;
  req.method = "OPTIONS";
  req.origin = "https://a.example";
  EXPECT_FALSE(is_preflight(req));  // no Access-Control-Request-Method
  req.cors_request_method = "POST";
  EXPECT_TRUE(is_preflight(req));
}

}  // namespace
}  // namespace folio::server
