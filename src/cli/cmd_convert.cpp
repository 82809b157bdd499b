// `folio convert HF_DIR OUT.gguf`: writes the GGUF that every command builds in
// memory from a Hugging Face checkpoint directory (hf/convert.h), so the
// conversion can be kept, inspected with gguf-py or run by llama.cpp.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "hf/convert.h"

namespace folio::cli {

Command register_convert(CLI::App& app) {
  struct Args {
    std::string input;
    std::string output;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "write a Hugging Face checkpoint directory (safetensors; fp16/bf16, GPTQ, AWQ) "
      "as a GGUF file");
  sub->add_option("input", a->input,
                  "checkpoint directory (config.json, *.safetensors, tokenizer.json)")
      ->required();
  sub->add_option("output", a->output, "GGUF file to write")->required();
  return {sub, [a]() {
            if (!hf::is_checkpoint_dir(a->input)) {
              throw Error(a->input +
                          " is not a directory; convert reads a Hugging Face "
                          "checkpoint directory");
            }
            std::error_code ec;
            if (std::filesystem::exists(a->output, ec) &&
                std::filesystem::is_directory(a->output, ec)) {
              throw Error("the output " + a->output + " is a directory; name a .gguf file");
            }
            const hf::Conversion c = hf::convert_checkpoint(a->input);
            print_conversion(c, "");
            const std::string tmp = a->output + ".tmp";
            std::FILE* f = std::fopen(tmp.c_str(), "wb");
            if (f == nullptr) throw Error("cannot write " + tmp);
            const bool ok = std::fwrite(c.image.data(), 1, c.image.size(), f) == c.image.size();
            if (std::fclose(f) != 0 || !ok) {
              std::filesystem::remove(tmp, ec);
              throw Error("writing " + tmp + " failed");
            }
            std::filesystem::rename(tmp, a->output, ec);
            if (ec) throw Error("cannot rename " + tmp + " to " + a->output + ": " + ec.message());
            std::fprintf(stderr, "wrote %s (%.2f MiB)\n", a->output.c_str(),
                         static_cast<double>(c.image.size()) / (1024.0 * 1024.0));
            return 0;
          }};
}

}  // namespace folio::cli
