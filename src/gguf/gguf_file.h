// gguf/gguf_file.h: a parsed, validated view of a GGUF file (versions 2 and 3).
//
// Layout of a GGUF file (little-endian):
//
//   "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv      x { string key | u32 value_type | value }
//   n_tensors x { string name | u32 n_dims | u64 dims[n_dims] | u32 type | u64 offset }
//   padding to general.alignment (default 32)
//   data section: tensor i's bytes at data_offset + offset_i
//
// Everything read from the file is checked against the file's size and sane
// limits before it is used: a bad file yields folio::Error naming what is
// wrong (key, tensor, byte offset), never a crash or a huge allocation.
// Tensor data is not copied: TensorInfo::data views the mapping.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "gguf/tensor_type.h"
#include "gguf/value.h"

namespace folio::gguf {

inline constexpr std::size_t kMaxDims = 4;

struct TensorInfo {
  std::string_view name;
  std::vector<std::uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  TensorType type;
  std::uint64_t offset = 0;  // relative to the data section
  std::uint64_t n_elements = 0;
  std::uint64_t n_bytes = 0;
  std::span<const std::uint8_t> data;  // view into the mapping
};

struct MetadataEntry {
  std::string_view key;
  Value value;
};

class GgufFile {
 public:
  // Maps and parses `path`. Throws folio::Error on any malformed content.
  static GgufFile open(const std::string& path);
  // Parses an in-memory image (not owned; must outlive the result). `what`
  // names the source in error messages.
  static GgufFile parse(std::span<const std::uint8_t> bytes, std::string what = "<memory>");
  // Parses an image it takes ownership of (a converted checkpoint, hf/convert.h).
  static GgufFile from_image(std::vector<std::uint8_t> image, std::string what);

  GgufFile(GgufFile&&) noexcept = default;
  GgufFile& operator=(GgufFile&&) noexcept = default;

  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }
  std::uint64_t file_size() const { return bytes_.size(); }
  const std::string& source() const { return source_; }

  // Metadata in file order.
  const std::vector<MetadataEntry>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;

  // Typed lookups: nullopt when absent; folio::Error when present with the wrong type.
  std::optional<std::int64_t> get_int(std::string_view key) const;
  std::optional<std::uint64_t> get_uint(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  const Value::Array* get_array(std::string_view key) const;

  // Required lookups: folio::Error naming the key when absent.
  std::uint64_t require_uint(std::string_view key) const;
  std::string_view require_string(std::string_view key) const;

  // Tensors in file order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

 private:
  GgufFile() = default;
  void parse_all();

  MappedFile mapping_;               // empty for parse() and from_image()
  std::vector<std::uint8_t> owned_;  // from_image(): moving keeps its buffer in place
  std::span<const std::uint8_t> bytes_;
  std::string source_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::vector<MetadataEntry> metadata_;
  std::map<std::string_view, std::size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string_view, std::size_t, std::less<>> tensor_index_;
};

}  // namespace folio::gguf
