// tests/server/openapi_test.cpp: GET /openapi.json documents every route of
// the router's table, and only those, with the server's limits filled in.
//
// The route table is read from src/server/router.cpp itself (it is private
// to the router), so a route added there without documenting it in
// src/server/openapi.json fails here. tests/python/test_openapi.py checks
// the document against the real server with schemathesis.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;
using Route = std::pair<std::string, std::string>;  // path, lower-case method

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The routes of router.cpp's kRoutes table, plus GET /v1/models/{model} (the
// prefix the router answers before the table).
std::set<Route> router_routes() {
  std::ifstream in(std::string(FOLIO_SOURCE_DIR) + "/src/server/router.cpp");
  std::stringstream text;
  text << in.rdbuf();
  const std::string src = text.str();
  EXPECT_FALSE(src.empty()) << "cannot read src/server/router.cpp";
  const auto begin = src.find("kRoutes[] = {");
  const auto end = src.find("};", begin);
  EXPECT_NE(begin, std::string::npos) << "router.cpp has no kRoutes table";
  const std::string table = src.substr(begin, end - begin);
  std::set<Route> routes;
  // One entry per line: {"/path", "METHOD", handle_x},  (no std::regex: GCC 12
  // warns inside libstdc++'s regex under the sanitizer build's -O1 -Werror).
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> parts;
    std::istringstream fields(line);
    for (std::string part; std::getline(fields, part, '"');) parts.push_back(part);
    if (parts.size() != 5 || parts[0].find('{') == std::string::npos ||
        parts[4].find("handle_") == std::string::npos || !parts[1].starts_with("/")) {
      continue;
    }
    routes.emplace(parts[1], lower(parts[3]));
  }
  if (src.find("path.starts_with(\"/v1/models/\")") != std::string::npos) {
    routes.emplace("/v1/models/{model}", "get");
  }
  return routes;
}

std::set<Route> documented_routes(const json& doc) {
  std::set<Route> routes;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "parameters" || method == "summary" || method == "description") continue;
      routes.emplace(path, method);
    }
  }
  return routes;
}

// The last segment of a local "$ref".
std::string ref_name(const json& ref) {
  const std::string s = ref.get<std::string>();
  return s.substr(s.rfind('/') + 1);
}

json document(const HttpResponse& r) {
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  return body_json(r);
}

TEST_F(ServerTest, OpenApiDocumentsEveryRouteAndOnlyThose) {
  const json doc = document(get("/openapi.json"));
  EXPECT_EQ(doc["openapi"].get<std::string>().rfind("3.1.", 0), 0u);
  const std::set<Route> table = router_routes();
  ASSERT_GE(table.size(), 11u) << "the kRoutes pattern no longer matches router.cpp";
  const std::set<Route> documented = documented_routes(doc);
  for (const Route& r : table) {
    EXPECT_TRUE(documented.contains(r))
        << r.second << " " << r.first << " is routed but not in src/server/openapi.json";
  }
  for (const Route& r : documented) {
    EXPECT_TRUE(table.contains(r)) << r.second << " " << r.first << " is documented but not routed";
  }
}

TEST_F(ServerTest, OpenApiOperationsDocumentTheirReplies) {
  const json doc = document(get("/openapi.json"));
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      const std::string at = method + " " + path;
      ASSERT_TRUE(op.contains("responses")) << at;
      EXPECT_TRUE(op["responses"].contains("200")) << at;
      // Every route but /health and /livez answers 401 when keys are configured (auth.h).
      EXPECT_EQ(op["responses"].contains("401"), path != "/health" && path != "/livez") << at;
      for (const auto& [status, reply] : op["responses"].items()) {
        if (status == "200") continue;
        // Errors are components whose schema pins the status in `code`.
        ASSERT_TRUE(reply.contains("$ref")) << at << " " << status;
        const json& schema = doc["components"]["responses"][ref_name(reply["$ref"])]["content"]
                                ["application/json"]["schema"];
        EXPECT_EQ(doc["components"]["schemas"][ref_name(schema["$ref"])]["allOf"][1]["properties"]
                     ["error"]["properties"]["code"]["const"],
                  std::stoi(status))
            << at << " " << status;
      }
    }
  }
}

TEST_F(ServerTest, OpenApiCarriesTheServersLimitsAndVersion) {
  ServerConfig cfg = default_config();
  cfg.max_n = 3;
  cfg.max_logprobs = 5;
  cfg.max_prompts = 7;
  restart(cfg, default_engine());
  const json doc = document(get("/openapi.json"));
  EXPECT_EQ(doc["info"]["version"], body_json(get("/version"))["version"]);
  const json& s = doc["components"]["schemas"];
  EXPECT_EQ(s["SampleCount"]["maximum"], 3);
  EXPECT_EQ(s["LogprobCount"]["maximum"], 5);
  EXPECT_EQ(s["Prompt"]["anyOf"][1]["maxItems"], 7);
  EXPECT_EQ(s["Prompt"]["anyOf"][3]["maxItems"], 7);
  EXPECT_EQ(s["TokenId"]["maximum"], test_tokenizer().vocab().size() - 1);
  EXPECT_EQ(s["MaxTokens"]["maximum"], 255);  // the fixture's max_model_len is 256
  EXPECT_EQ(s["TokenIds"]["maxItems"], 255);
  EXPECT_EQ(doc["security"], json::array());  // no key configured: none needed
  // The limits are the ones the parser applies: one past them is refused.
  const auto over = post("/v1/completions", {{"prompt", "x"}, {"n", 4}, {"max_tokens", 1}});
  EXPECT_EQ(over.status, 400);
  EXPECT_EQ(body_json(over)["error"]["param"], "n");
}

TEST_F(ServerTest, OpenApiNeedsAKeyLikeEveryRoute) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"sekret"};
  restart(cfg, default_engine());
  EXPECT_EQ(get("/openapi.json").status, 401);
  // The document says what this server asks: a key everywhere but /health and /metrics.
  const json doc = document(get("/openapi.json", {"Authorization: Bearer sekret"}));
  EXPECT_EQ(doc["security"], json::parse(R"([{"bearerAuth": []}])"));
  EXPECT_EQ(doc["paths"]["/health"]["get"]["security"], json::array());
  EXPECT_EQ(doc["paths"]["/livez"]["get"]["security"], json::array());
  EXPECT_EQ(doc["paths"]["/metrics"]["get"]["security"], json::array());
  cfg.metrics_require_key = true;
  restart(cfg, default_engine());
  EXPECT_EQ(document(get("/openapi.json",
                         {"Authorization: Bearer sekret"}))["paths"]["/metrics"]["get"]["security"],
            json::parse(R"([{"bearerAuth": []}])"));
  EXPECT_EQ(post("/openapi.json", json::object()).status, 401);  // the key first, then the method
  const auto r = post("/openapi.json", json::object(), {"Authorization: Bearer sekret"});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.at("allow"), "GET");
}

}  // namespace
}  // namespace folio::server::testing
