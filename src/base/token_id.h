// base/token_id.h: the one token id type, shared by every layer.
//
// A token id indexes a model's vocabulary, [0, n_vocab). Signed 32-bit as in
// GGUF's tokenizer arrays and llama.cpp's llama_token, so -1 can mark "none"
// in tables without a second type. Every module uses folio::TokenId; none
// defines its own.
#pragma once

#include <cstdint>

namespace folio {

using TokenId = std::int32_t;

}  // namespace folio
