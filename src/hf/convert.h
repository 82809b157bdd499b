// hf/convert.h: a Hugging Face checkpoint directory as a GGUF image.
//
//   if (hf::is_checkpoint_dir(path)) {
//     hf::Conversion c = hf::convert_checkpoint(path);   // config, tokenizer, weights
//     auto file = gguf::GgufFile::from_image(std::move(c.image), path);
//   }
//
// The image carries llama.cpp's metadata and tensor names, so everything that
// reads a GGUF (model, tokenizer, chat template, `folio info`) reads a
// checkpoint unchanged; `folio convert` writes it to disk. What was repacked
// inexactly is listed in c.notes and in the metadata key folio.hf.notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace folio::hf {

struct Conversion {
  std::vector<std::uint8_t> image;
  std::vector<std::string> notes;
  std::string summary;  // one line: architecture, files, quantization, exact/repacked counts
};

// True when `path` is a directory (it need not be a valid checkpoint: the
// conversion says what is wrong with it).
bool is_checkpoint_dir(const std::string& path);

// Throws folio::Error naming the file and field on any problem.
Conversion convert_checkpoint(const std::string& dir);

}  // namespace folio::hf
