// cli/model_file.h: opening what a user names as a model: a GGUF file, or a
// Hugging Face checkpoint directory converted to a GGUF image in memory
// (hf/convert.h), so every command takes either.
#pragma once

#include <string>

#include "gguf/gguf_file.h"
#include "hf/convert.h"

namespace folio::cli {

// A directory is converted (a one-line summary and every inexact repacking go
// to stderr); anything else opens as a GGUF file. Throws folio::Error.
gguf::GgufFile open_model_file(const std::string& path);

// The conversion's summary line (with `suffix`) and each inexact repacking, on stderr.
void print_conversion(const hf::Conversion& c, const std::string& suffix);

}  // namespace folio::cli
