// hf/safetensors_writer.h: writes a safetensors file (the layout in
// safetensors.h) that SafetensorsFile and Hugging Face's `safetensors` read.
// Tensors are written in name order; the header is padded with spaces to a
// multiple of 8 bytes so the data stays aligned.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hf/safetensors.h"

namespace folio::hf {

class SafetensorsWriter {
 public:
  // data.size() must equal dtype x shape (checked). A duplicate name is an error.
  void add(std::string name, Dtype dtype, std::vector<std::uint64_t> shape,
           std::vector<std::uint8_t> data);
  void set_metadata(std::string key, std::string value);
  std::vector<std::uint8_t> to_bytes() const;
  // Throws folio::Error on IO errors.
  void write_file(const std::string& path) const;

 private:
  struct Tensor {
    Dtype dtype;
    std::vector<std::uint64_t> shape;
    std::vector<std::uint8_t> data;
  };
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace folio::hf
