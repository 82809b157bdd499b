// cli/default_model.h: where the default model (set up by scripts/setup) lives.
#pragma once

#include <string>

namespace folio::cli {

inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

// Resolves the model path: `requested` if non-empty, else $FOLIO_MODEL, else
// the default model in $FOLIO_MODELS_DIR, <exe>/../../models or ./models.
// Throws folio::Error saying how to get the model when none is found.
std::string resolve_model_path(const std::string& requested);

}  // namespace folio::cli
