// tests/server/web_ui_test.cpp: the chat page at / and its files under /ui/
// (server/web_assets.h, handlers_web_ui.cpp) over HTTP. The page itself, in
// a browser, is tests/python/test_chat_page.py.
#include <string>

#include "server/web_assets.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

TEST_F(ServerTest, PageIsServedAtRootWithItsPolicy) {
  for (const std::string path : {"/", "/?session=1"}) {
    const auto r = get(path);
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.headers.at("content-type"), "text/html; charset=utf-8");
    EXPECT_TRUE(r.body.starts_with("<!doctype html>")) << r.body.substr(0, 80);
    EXPECT_NE(r.body.find("/ui/app.js"), std::string::npos);
    EXPECT_EQ(r.headers.at("cache-control"), "no-cache");
    EXPECT_EQ(r.headers.at("x-content-type-options"), "nosniff");
    const std::string csp = r.headers.at("content-security-policy");
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  }
}

// Every embedded file, Debian's marked and highlight.js included, is served
// whole with its type and a quoted ETag.
TEST_F(ServerTest, EveryAssetIsServedWithItsType) {
  ASSERT_NE(find_web_asset("/ui/marked.min.js"), nullptr);
  ASSERT_NE(find_web_asset("/ui/highlight.min.js"), nullptr);
  ASSERT_NE(find_web_asset("/ui/highlight.css"), nullptr);
  for (const WebAsset& a : web_assets()) {
    const auto r = get(std::string(a.path));
    ASSERT_EQ(r.status, 200) << a.path;
    EXPECT_EQ(r.headers.at("content-type"), a.content_type) << a.path;
    EXPECT_EQ(r.body, a.body) << a.path;
    EXPECT_EQ(r.headers.at("etag"), a.etag) << a.path;
    EXPECT_TRUE(a.etag.starts_with('"') && a.etag.ends_with('"')) << a.etag;
    EXPECT_EQ(r.headers.at("cache-control"), "no-cache") << a.path;
  }
  const auto js = get("/ui/highlight.min.js");
  EXPECT_EQ(js.headers.at("content-type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("hljs"), std::string::npos);
  EXPECT_GT(js.body.size(), 100'000u);  // the full build, every language
}

TEST_F(ServerTest, MatchingETagIsNotModified) {
  const WebAsset* a = find_web_asset("/ui/app.js");
  ASSERT_NE(a, nullptr);
  const std::string etag(a->etag);
  for (const std::string& given : {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
    const auto r = get("/ui/app.js", {"If-None-Match: " + given});
    EXPECT_EQ(r.status, 304) << given;
    EXPECT_EQ(r.body, "") << given;
    EXPECT_EQ(r.headers.at("etag"), etag);
  }
  const std::string prefix = etag.substr(0, etag.size() - 2) + "\"";  // a shorter tag
  for (const std::string& given : {std::string("\"other\""), prefix}) {
    const auto r = get("/ui/app.js", {"If-None-Match: " + given});
    EXPECT_EQ(r.status, 200) << given;
    EXPECT_EQ(r.body, a->body);
  }
}

TEST_F(ServerTest, UnknownAssetAndWrongMethodAreJsonErrors) {
  const auto r = get("/ui/missing.js");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  const json j = body_json(r);
  EXPECT_EQ(j["error"]["code"], 404);
  const std::string message = j["error"]["message"];
  EXPECT_NE(message.find("/ui/missing.js"), std::string::npos) << message;
  EXPECT_NE(message.find("/ui/app.js"), std::string::npos) << message;  // what exists
  EXPECT_EQ(get("/ui/../v1/models").status, 404);  // names, not files: nothing to escape to
  const auto post_root = post("/", json::object());
  EXPECT_EQ(post_root.status, 405);
  EXPECT_EQ(post_root.headers.at("allow"), "GET");
  EXPECT_EQ(post("/ui/app.js", json::object()).status, 405);
}

// The page holds no secret: it loads without a key and asks for one when the
// API answers 401. The API stays closed.
TEST_F(ServerTest, PageNeedsNoKeyButTheApiDoes) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"sekret"};
  restart(cfg, default_engine());
  EXPECT_EQ(get("/").status, 200);
  EXPECT_EQ(get("/ui/marked.min.js").status, 200);
  EXPECT_EQ(get("/ui/missing.js").status, 404);
  EXPECT_EQ(get("/v1/models").status, 401);
  EXPECT_EQ(get("/ui").status, 401);  // not under /ui/: an API path like any other
}

// --no-webui: the page's paths are unknown routes, which need a key when
// keys are set, like any other path; the API is unchanged.
TEST_F(ServerTest, NoWebuiMakesThePageAnUnknownRoute) {
  ServerConfig cfg = default_config();
  cfg.no_webui = true;
  restart(cfg, default_engine());
  for (const std::string path : {"/", "/ui/app.js", "/ui/missing.js"}) {
    const auto r = get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_NE(r.body.find("--no-webui"), std::string::npos) << r.body;
  }
  EXPECT_EQ(get("/v1/models").status, 200);
  cfg.api_keys = {"sekret"};
  restart(cfg, default_engine());
  EXPECT_EQ(get("/").status, 401);
  EXPECT_EQ(get("/ui/app.js").status, 401);
  EXPECT_EQ(get("/health").status, 200);
}

}  // namespace
}  // namespace folio::server::testing
