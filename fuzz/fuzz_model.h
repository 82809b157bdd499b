// fuzz/fuzz_model.h: the served-model descriptions the server fuzz targets use.
//
// Two ModelContexts over one synthetic byte-level BPE tokenizer
// (fuzz/synthetic_vocab.h), built as tests/server/server_fixture.cpp builds
// its one (make_model_context):
//   - "small" (alias "fuzz-model"): a role/content template that does not
//     read `tools`, so tool requests take the generic tool prompt;
//   - "large": a Hermes-style template that reads `tools` and renders tool
//     calls (tool output is then parsed as Hermes <tool_call> blocks).
// Both have max_model_len 256 and hidden_size 8 (for /v1/embeddings).
#pragma once

#include "server/model_context.h"

namespace folio::fuzz {

inline constexpr std::int32_t kFuzzMaxModelLen = 256;
inline constexpr std::int32_t kFuzzHiddenSize = 8;

const server::ModelContext& fuzz_model_plain();
const server::ModelContext& fuzz_model_tools();

}  // namespace folio::fuzz
