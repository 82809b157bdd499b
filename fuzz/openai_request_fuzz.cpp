// fuzz/openai_request_fuzz.cpp: libFuzzer target for the OpenAI request
// parsers (src/server/openai_request.h): JSON bytes -> parse_body (and
// parse_body_ordered, as the handlers call them) -> parse_chat_request,
// parse_completion_request or parse_embedding_request over a ModelContext
// built as the server tests build one (fuzz/fuzz_model.h): tokenizer, chat
// template, grammar cache.
//
// Byte 0 picks the parser (bits 0-1: 0 or 3 chat, 1 completion, 2 embedding),
// the model (bit 2: the tools-reading template) and whether the ordered body
// is passed (bit 3 clear); the rest is the body. An ApiError (the
// client's 400) or a folio::Error is an expected rejection; any other
// exception escaping, a crash, a hang or an OOM is a finding. An accepted
// request must be well-formed: prompts non-empty, ids inside the vocabulary,
// n >= 1.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "fuzz_model.h"
#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/openai_request.h"

namespace {

using folio::server::ModelContext;

void check_prompts(const std::vector<std::vector<folio::TokenId>>& prompts, const ModelContext& m) {
  if (prompts.empty()) __builtin_trap();
  for (const auto& p : prompts) {
    if (p.empty()) __builtin_trap();
    for (const folio::TokenId id : p) {
      if (id < 0 || id >= m.vocab_size) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const folio::server::ServerConfig config;
  const int parser = (data[0] & 3) % 3;
  const ModelContext& model =
      (data[0] & 4) != 0 ? folio::fuzz::fuzz_model_tools() : folio::fuzz::fuzz_model_plain();
  const bool with_order = (data[0] & 8) == 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const nlohmann::json j = folio::server::parse_body(body);
    const nlohmann::ordered_json ordered = folio::server::parse_body_ordered(body);
    const nlohmann::ordered_json* o = with_order ? &ordered : nullptr;
    if (parser == 2) {
      const auto r = folio::server::parse_embedding_request(j, model, config);
      check_prompts(r.prompts, model);
    } else {
      const auto r = parser == 0 ? folio::server::parse_chat_request(j, model, config, o)
                                 : folio::server::parse_completion_request(j, model, config, o);
      check_prompts(r.prompts, model);
      if (r.n < 1 || r.n > config.max_n) __builtin_trap();
      if (r.prompt_texts.size() != r.prompts.size()) __builtin_trap();
    }
  } catch (const folio::server::ApiError&) {
  } catch (const folio::Error&) {
  }
  return 0;
}
