// server/handlers_openapi.cpp: GET /openapi.json, the OpenAPI 3.1 description
// of every route (openapi_document.h) with this server's version and limits
// filled in, so a client or a test generator (schemathesis) sees the bounds it
// will actually meet.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "server/handlers.h"
#include "server/openapi_document.h"

#ifndef FOLIO_VERSION
#define FOLIO_VERSION "0.0.0"
#endif

namespace folio::server {
namespace {

using nlohmann::ordered_json;

// Replaces the value at `pointer`, which openapi.json must already hold: a
// schema renamed there fails the tests instead of leaving a stale bound.
void set_at(ordered_json& doc, const char* pointer, ordered_json value) {
  const ordered_json::json_pointer p(pointer);
  FOLIO_CHECK(doc.contains(p), std::string("openapi.json has no ") + pointer);
  doc[p] = std::move(value);
}

}  // namespace

HttpReply handle_openapi(ServerContext& ctx, const HttpRequest&) {
  ordered_json doc = ordered_json::parse(openapi_document());  // key order as written
  doc["info"]["version"] = FOLIO_VERSION;
  const ServerConfig& c = ctx.config;
  set_at(doc, "/components/schemas/SampleCount/maximum", c.max_n);
  set_at(doc, "/components/schemas/LogprobCount/maximum", c.max_logprobs);
  set_at(doc, "/components/schemas/Prompt/anyOf/1/maxItems", c.max_prompts);
  set_at(doc, "/components/schemas/Prompt/anyOf/3/maxItems", c.max_prompts);
  // Bounds that depend on the model hold for the largest served one (a
  // request to a smaller one may still be refused: a 400 naming it). A prompt
  // leaves room for at least one generated (or pooled) token.
  std::int32_t vocab = 0;
  std::int32_t context = 0;
  for (const ServedModel& m : ctx.models) {
    vocab = std::max(vocab, m.model.vocab_size);
    context = std::max(context, m.model.max_model_len);
  }
  if (vocab > 0) set_at(doc, "/components/schemas/TokenId/maximum", vocab - 1);
  if (context > 1) {
    set_at(doc, "/components/schemas/MaxTokens/maximum", context - 1);
    set_at(doc, "/components/schemas/TokenIds/maxItems",
           std::min<std::int64_t>(context - 1, std::int64_t{1} << 20));
  }
  // Whether a key is needed is this server's choice (auth.h): the file says
  // "optional" ([{}, bearer]); the server that serves it knows.
  ordered_json bearer = ordered_json::object();
  bearer["bearerAuth"] = ordered_json::array();
  const ordered_json needed = ordered_json::array({bearer});
  const ordered_json none = ordered_json::array();
  set_at(doc, "/security", ctx.api_keys.enabled() ? needed : none);
  set_at(doc, "/paths/~1metrics/get/security",
         ctx.api_keys.enabled() && c.metrics_require_key ? needed : none);
  return json_reply(200, doc.dump());  // ASCII: openapi.json and our numbers
}

}  // namespace folio::server
