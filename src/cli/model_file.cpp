// cli/model_file.cpp: GGUF file or HF checkpoint directory (see model_file.h).
#include "cli/model_file.h"

#include <chrono>
#include <cstdio>

namespace folio::cli {

gguf::GgufFile open_model_file(const std::string& path) {
  if (!hf::is_checkpoint_dir(path)) return gguf::GgufFile::open(path);
  const auto t0 = std::chrono::steady_clock::now();
  hf::Conversion c = hf::convert_checkpoint(path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char took[48];
  std::snprintf(took, sizeof took, " (converted in %.2f s)", s);
  std::fprintf(stderr, "hf checkpoint %s: ", path.c_str());
  print_conversion(c, took);
  return gguf::GgufFile::from_image(std::move(c.image), path);
}

void print_conversion(const hf::Conversion& c, const std::string& suffix) {
  std::fprintf(stderr, "%s%s\n", c.summary.c_str(), suffix.c_str());
  for (const auto& n : c.notes) std::fprintf(stderr, "  repacked %s\n", n.c_str());
}

}  // namespace folio::cli
