// gguf/writer.h: builds GGUF files (versions 2 and 3) in memory or on disk.
//
// The inverse of GgufFile: metadata of every value type (nested arrays too),
// tensor infos, and tensor data placed at offsets aligned to general.alignment.
// Used by tests to make files and by the quantizer to write models.
//
// The writer only produces files its reader accepts: it rejects duplicate keys
// and tensor names, arrays whose elements disagree with the element type,
// data whose size does not match the tensor's type and shape, and alignments
// that are not powers of two. Versions 2 and 3 share one layout (v3 only
// allowed big-endian files, which folio neither reads nor writes).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gguf/tensor_type.h"
#include "gguf/value.h"

namespace folio::gguf {

// An owned metadata value to write (the reader's Value views the file instead).
class MetaValue {
 public:
  using Array = std::vector<MetaValue>;

  // Integers of any width: the value must fit in `type` (checked when written).
  static MetaValue integer(ValueType type, std::int64_t v);
  static MetaValue u64(std::uint64_t v);  // the one value int64 cannot hold
  static MetaValue f32(float v) { return MetaValue(ValueType::FLOAT32, static_cast<double>(v)); }
  static MetaValue f64(double v) { return MetaValue(ValueType::FLOAT64, v); }
  static MetaValue boolean(bool v) { return MetaValue(ValueType::BOOL, v); }
  static MetaValue string(std::string v) { return MetaValue(ValueType::STRING, std::move(v)); }
  // Every item must have type `elem_type` (arrays of arrays may differ inside).
  static MetaValue array(ValueType elem_type, Array items);
  // A deep copy of a value read from a file (e.g. to carry metadata over).
  static MetaValue from(const Value& v);

  using Storage = std::variant<std::int64_t, std::uint64_t, double, bool, std::string, Array>;

  ValueType type() const { return type_; }
  ValueType elem_type() const { return elem_type_; }  // arrays only
  // Integers are held as int64 (UINT64 above INT64_MAX as uint64), floats as double.
  const Storage& storage() const { return v_; }

 private:
  template <typename T>
  MetaValue(ValueType t, T v) : type_(t), v_(std::move(v)) {}

  ValueType type_;
  ValueType elem_type_ = ValueType::UINT8;
  Storage v_;
};

class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t version = 3);

  // Appends a metadata entry; throws folio::Error on a duplicate key.
  void add(std::string key, MetaValue value);
  // Sets general.alignment (uint32; a power of two) for the tensor data.
  void set_alignment(std::uint32_t alignment);

  // Appends a tensor. dims are in ggml order (dims[0] is the row length);
  // data.size() must equal the bytes that type and shape require.
  void add_tensor(std::string name, std::vector<std::uint64_t> dims, TensorType type,
                  std::vector<std::uint8_t> data);
  // The same without a copy: `data` must stay valid until the last to_bytes /
  // write_file (a converted checkpoint's tensors view its mapped files).
  void add_tensor_view(std::string name, std::vector<std::uint64_t> dims, TensorType type,
                       std::span<const std::uint8_t> data);

  // The complete file image.
  std::vector<std::uint8_t> to_bytes() const;
  // Writes the image to `path` (replacing it); throws folio::Error on IO errors.
  void write_file(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    TensorType type;
    std::vector<std::uint8_t> owned;     // empty for views
    std::span<const std::uint8_t> data;  // `owned`, or the caller's bytes
  };
  void push_tensor(Tensor t);
  std::uint64_t alignment() const;

  std::uint32_t version_;
  std::vector<std::pair<std::string, MetaValue>> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace folio::gguf
