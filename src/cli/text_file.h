// cli/text_file.h: reading a whole text file (the perplexity, imatrix and
// calibration texts) with an error that names the file and the reason.
#pragma once

#include <string>

namespace folio::cli {

// The file's bytes; throws folio::Error naming the file when it cannot be
// opened or read.
std::string read_text_file(const std::string& path);

}  // namespace folio::cli
