// cli/model_file.cpp: GGUF file or HF checkpoint directory (see model_file.h).
#include "cli/model_file.h"

#include <chrono>
#include <cstdio>

#include "hf/convert.h"

namespace folio::cli {

gguf::GgufFile open_model_file(const std::string& path) {
  if (!hf::is_checkpoint_dir(path)) return gguf::GgufFile::open(path);
  const auto t0 = std::chrono::steady_clock::now();
  hf::Conversion c = hf::convert_checkpoint(path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "hf checkpoint %s: %s (converted in %.2f s)\n", path.c_str(),
               c.summary.c_str(), s);
  for (const auto& n : c.notes) std::fprintf(stderr, "  repacked %s\n", n.c_str());
  return gguf::GgufFile::from_image(std::move(c.image), path);
}

}  // namespace folio::cli
