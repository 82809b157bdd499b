#include "server/embedding_job.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "route/learned_head.h"
#include "server/api_error.h"
#include "server/response_builder.h"

namespace folio::server {

EmbeddingJob::EmbeddingJob(ServerContext& ctx, ServedModel& model, EmbeddingRequest req)
    : ctx_(ctx), req_(std::move(req)), run_(ctx, model, req_.prompts) {}

JobOutput EmbeddingJob::poll() {
  if (!run_.poll()) return {};
  if (!run_.error().empty()) {
    return {
        .bytes = error_body(500, "embedding failed: " + run_.error()), .done = true, .status = 500};
  }
  nlohmann::json data = nlohmann::json::array();
  for (std::size_t i = 0; i < run_.means().size(); ++i) {
    const std::vector<float> e = route::l2_normalized(run_.means()[i]);
    nlohmann::json item{{"object", "embedding"}, {"index", i}};
    if (req_.base64) {  // little-endian float32, as OpenAI's
      std::vector<unsigned char> bytes(e.size() * 4);
      for (std::size_t k = 0; k < e.size(); ++k) {
        std::uint32_t u = 0;
        std::memcpy(&u, &e[k], 4);
        for (int b = 0; b < 4; ++b)
          bytes[k * 4 + static_cast<std::size_t>(b)] = static_cast<unsigned char>(u >> (8 * b));
      }
      item["embedding"] = base64_encode(bytes);
    } else {
      item["embedding"] = e;
    }
    data.push_back(std::move(item));
  }
  const std::int64_t tokens = run_.prompt_tokens();
  const nlohmann::json body{{"id", ctx_.response_id("embd-")},
                            {"object", "list"},
                            {"created", unix_now()},
                            {"model", req_.model},
                            {"data", std::move(data)},
                            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return {.bytes = dump(body), .done = true, .status = 200};
}

}  // namespace folio::server
