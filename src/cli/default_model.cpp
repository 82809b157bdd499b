#include "cli/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/error.h"

namespace folio::cli {

namespace fs = std::filesystem;

std::string resolve_model_path(const std::string& requested) {
  if (!requested.empty()) return requested;
  if (const char* env = std::getenv("FOLIO_MODEL"); env != nullptr && *env != '\0') return env;
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("FOLIO_MODELS_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path() / ".." / ".." / "models");
  dirs.emplace_back("models");
  for (const fs::path& d : dirs) {
    const fs::path p = d / kDefaultModelFile;
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  throw Error(std::string("no model given and the default model ") + kDefaultModelFile +
              " was not found (looked in $FOLIO_MODELS_DIR, <folio>/../../models and ./models); "
              "run scripts/setup to download it, or pass -m MODEL.gguf");
}

}  // namespace folio::cli
