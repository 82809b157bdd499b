// hf/safetensors.h: a parsed, validated view of safetensors files and of a
// checkpoint's set of them (one model.safetensors, or shards named by
// model.safetensors.index.json).
//
// Layout of a safetensors file (little-endian):
//
//   u64 header_size | header: JSON object, header_size bytes | data
//   header: { "NAME": {"dtype": "F16", "shape": [rows, cols], "data_offsets": [begin, end]},
//             ..., "__metadata__": {string: string} }
//
// Offsets are relative to the data section. Everything is checked against the
// file's size before use (header size, offsets inside the data, size equal to
// dtype x shape, no overlaps); a bad file yields folio::Error naming the file
// and the tensor, never a crash or a huge allocation. Tensor data is not
// copied: SafeTensor::data views the mapping.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"

namespace folio::hf {

enum class Dtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

std::string_view dtype_name(Dtype d);
std::size_t dtype_bytes(Dtype d);

struct SafeTensor {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::uint64_t> shape;  // row-major, as PyTorch: shape.back() is contiguous
  std::uint64_t n_elements = 0;
  std::span<const std::uint8_t> data;  // view into the mapping
  std::string file;                    // the file it came from (for messages)
};

class SafetensorsFile {
 public:
  // Maps and parses `path`. Throws folio::Error on any malformed content.
  static SafetensorsFile open(const std::string& path);
  // Parses an in-memory image (not owned; must outlive the result).
  static SafetensorsFile parse(std::span<const std::uint8_t> bytes, std::string what);

  SafetensorsFile(SafetensorsFile&&) noexcept = default;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept = default;

  const std::string& source() const { return source_; }
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  void parse_all();

  MappedFile mapping_;
  std::span<const std::uint8_t> bytes_;
  std::string source_;
  std::vector<SafeTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of a checkpoint directory, by name, over its files.
class Checkpoint {
 public:
  // Reads DIR/model.safetensors.index.json when present (every shard it names
  // must exist and hold exactly the tensors the index assigns it), otherwise
  // every DIR/*.safetensors. Throws folio::Error naming the file on problems,
  // and when a tensor name occurs twice.
  static Checkpoint open(const std::string& dir);
  // From already-parsed files (tests).
  static Checkpoint from_files(std::vector<SafetensorsFile> files);

  const SafeTensor* find(std::string_view name) const;
  // Throws folio::Error naming the tensor when absent.
  const SafeTensor& require(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  std::size_t n_files() const { return files_.size(); }

 private:
  void index();

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafeTensor*, std::less<>> by_name_;
};

}  // namespace folio::hf
