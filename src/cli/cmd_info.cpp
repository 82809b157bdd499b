// `folio info MODEL`: what a GGUF file holds (first cut: metadata and tensors).
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/default_model.h"
#include "gguf/gguf_file.h"

namespace folio::cli {

Command register_info(CLI::App& app) {
  auto* sub = app.add_subcommand("info", "Describe a GGUF model file");
  auto model = std::make_shared<std::string>();
  sub->add_option("model", *model, "GGUF file (default: the default model)");
  sub->add_option("-m,--model", *model, "GGUF file (same as the positional argument)");
  return {sub, [model]() {
    const auto f = gguf::GgufFile::open(resolve_model_path(*model));
    std::printf("file: %s (GGUF v%u, %llu bytes)\n", f.source().c_str(), f.version(),
                static_cast<unsigned long long>(f.file_size()));
    for (const auto& e : f.metadata()) {
      std::printf("  %.*s = %s\n", static_cast<int>(e.key.size()), e.key.data(),
                  e.value.to_string().c_str());
    }
    std::printf("tensors: %zu\n", f.tensors().size());
    return 0;
  }};
}

}  // namespace folio::cli
