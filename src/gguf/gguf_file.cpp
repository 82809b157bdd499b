#include "gguf/gguf_file.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "base/error.h"

namespace folio::gguf {

namespace {

// Sanity limits beyond "fits in the file".
constexpr std::uint64_t kMaxNameLength = 1u << 16;          // metadata keys, tensor names
constexpr int kMaxArrayDepth = 8;                           // nested arrays
constexpr std::uint64_t kMaxArrayElementsTotal = 1u << 23;  // all metadata arrays together
constexpr std::uint64_t kMaxAlignment = 1u << 30;

std::string hex(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + out;
}

// A bounds-checked little-endian cursor over the file image.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> bytes, const std::string& source)
      : bytes_(bytes), source_(source) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("malformed GGUF file '" + source_ + "': " + what + " (at byte offset " +
                std::to_string(pos_) + ")");
  }

  template <typename T>
  T read(const char* what) {
    if (remaining() < sizeof(T)) {
      fail(std::string("truncated while reading ") + what + ": need " + std::to_string(sizeof(T)) +
           " bytes, " + std::to_string(remaining()) + " left");
    }
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_string(const std::string& what, std::uint64_t max_len) {
    const auto len = read<std::uint64_t>("string length");
    if (len > remaining()) {
      fail(what + ": string length " + std::to_string(len) + " exceeds the " +
           std::to_string(remaining()) + " bytes left in the file");
    }
    if (len > max_len) {
      fail(what + ": string length " + std::to_string(len) + " exceeds the limit of " +
           std::to_string(max_len));
    }
    std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  const std::string& source_;
  std::uint64_t pos_ = 0;
};

// Smallest number of bytes one value of `type` occupies in the file.
std::uint64_t min_encoded_size(ValueType type) {
  switch (type) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL:
      return 1;
    case ValueType::UINT16:
    case ValueType::INT16:
      return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32:
      return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64:
    case ValueType::STRING:  // its u64 length; the bytes may be empty
      return 8;
    case ValueType::ARRAY:
      return 12;
  }
  return 1;
}

bool valid_value_type(std::uint32_t t) {
  return t <= static_cast<std::uint32_t>(ValueType::FLOAT64);
}

class Parser {
 public:
  Parser(Cursor& cur) : cur_(cur) {}

  Value read_value(ValueType type, const std::string& what, int depth) {
    switch (type) {
      case ValueType::UINT8:
        return Value::of_uint(type, cur_.read<std::uint8_t>(what.c_str()));
      case ValueType::INT8:
        return Value::of_int(type, cur_.read<std::int8_t>(what.c_str()));
      case ValueType::UINT16:
        return Value::of_uint(type, cur_.read<std::uint16_t>(what.c_str()));
      case ValueType::INT16:
        return Value::of_int(type, cur_.read<std::int16_t>(what.c_str()));
      case ValueType::UINT32:
        return Value::of_uint(type, cur_.read<std::uint32_t>(what.c_str()));
      case ValueType::INT32:
        return Value::of_int(type, cur_.read<std::int32_t>(what.c_str()));
      case ValueType::UINT64:
        return Value::of_uint(type, cur_.read<std::uint64_t>(what.c_str()));
      case ValueType::INT64:
        return Value::of_int(type, cur_.read<std::int64_t>(what.c_str()));
      case ValueType::FLOAT32:
        return Value::of_float(type, cur_.read<float>(what.c_str()));
      case ValueType::FLOAT64:
        return Value::of_float(type, cur_.read<double>(what.c_str()));
      case ValueType::BOOL: {
        const auto b = cur_.read<std::uint8_t>(what.c_str());
        if (b > 1) cur_.fail(what + ": bool value " + std::to_string(b) + " is neither 0 nor 1");
        return Value::of_bool(b == 1);
      }
      case ValueType::STRING:
        return Value::of_string(cur_.read_string(what, std::numeric_limits<std::uint64_t>::max()));
      case ValueType::ARRAY:
        return read_array(what, depth + 1);
    }
    cur_.fail(what + ": unknown value type");
  }

 private:
  Value read_array(const std::string& what, int depth) {
    if (depth > kMaxArrayDepth) {
      cur_.fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    }
    const auto elem_raw = cur_.read<std::uint32_t>("array element type");
    if (!valid_value_type(elem_raw)) {
      cur_.fail(what + ": unknown array element type " + std::to_string(elem_raw));
    }
    const auto elem = static_cast<ValueType>(elem_raw);
    const auto count = cur_.read<std::uint64_t>("array length");
    const std::uint64_t min_size = min_encoded_size(elem);
    if (count > cur_.remaining() / min_size) {
      cur_.fail(what + ": array of " + std::to_string(count) + " " +
                std::string(value_type_name(elem)) + " elements cannot fit in the " +
                std::to_string(cur_.remaining()) + " bytes left in the file");
    }
    if (count > kMaxArrayElementsTotal - array_elements_) {
      cur_.fail(what + ": metadata arrays hold more than " +
                std::to_string(kMaxArrayElementsTotal) + " elements in total");
    }
    array_elements_ += count;
    Value::Array items;
    items.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      items.push_back(read_value(elem, what, depth));
    }
    return Value::of_array(elem, std::move(items));
  }

  Cursor& cur_;
  std::uint64_t array_elements_ = 0;
};

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.mapping_ = MappedFile::open(path);
  f.bytes_ = f.mapping_.bytes();
  f.source_ = path;
  f.parse_all();
  return f;
}

GgufFile GgufFile::parse(std::span<const std::uint8_t> bytes, std::string what) {
  GgufFile f;
  f.bytes_ = bytes;
  f.source_ = std::move(what);
  f.parse_all();
  return f;
}

GgufFile GgufFile::from_image(std::vector<std::uint8_t> image, std::string what) {
  GgufFile f;
  f.owned_ = std::move(image);
  f.bytes_ = f.owned_;
  f.source_ = std::move(what);
  f.parse_all();
  return f;
}

void GgufFile::parse_all() {
  Cursor cur(bytes_, source_);
  const auto magic = cur.read<std::uint32_t>("magic");
  if (std::memcmp(&magic, "GGUF", 4) != 0) {
    cur.fail("not a GGUF file: the first 4 bytes are " + hex(__builtin_bswap32(magic)) +
             ", expected \"GGUF\"");
  }
  version_ = cur.read<std::uint32_t>("version");
  if (version_ == 1)
    cur.fail("GGUF version 1 (from before August 2023) is not supported; re-convert the model");
  if (__builtin_bswap32(version_) == 2 || __builtin_bswap32(version_) == 3) {
    cur.fail("big-endian GGUF files are not supported");
  }
  if (version_ != 2 && version_ != 3) {
    cur.fail("unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  }
  const auto n_tensors = cur.read<std::uint64_t>("tensor count");
  const auto n_kv = cur.read<std::uint64_t>("metadata count");
  // Each metadata entry needs >= 13 bytes and each tensor info >= 32 bytes.
  if (n_kv > cur.remaining() / 13) {
    cur.fail("metadata count " + std::to_string(n_kv) + " cannot fit in a file of " +
             std::to_string(bytes_.size()) + " bytes");
  }
  if (n_tensors > cur.remaining() / 32) {
    cur.fail("tensor count " + std::to_string(n_tensors) + " cannot fit in a file of " +
             std::to_string(bytes_.size()) + " bytes");
  }

  Parser parser(cur);
  metadata_.reserve(n_kv);
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::string where = "metadata entry " + std::to_string(i);
    const std::string_view key = cur.read_string(where + " key", kMaxNameLength);
    const std::string key_s(key);
    const auto type_raw = cur.read<std::uint32_t>("value type");
    if (!valid_value_type(type_raw)) {
      cur.fail("metadata '" + key_s + "': unknown value type " + std::to_string(type_raw));
    }
    Value v = parser.read_value(static_cast<ValueType>(type_raw), "metadata '" + key_s + "'", 0);
    if (!metadata_index_.emplace(key, metadata_.size()).second) {
      cur.fail("duplicate metadata key '" + key_s + "'");
    }
    metadata_.push_back({key, std::move(v)});
  }

  if (const Value* a = find("general.alignment")) {
    if (!a->is_integer()) cur.fail("metadata 'general.alignment' must be an integer");
    const std::int64_t al = a->as_int("general.alignment");
    if (al <= 0 || static_cast<std::uint64_t>(al) > kMaxAlignment ||
        !std::has_single_bit(static_cast<std::uint64_t>(al))) {
      cur.fail("metadata 'general.alignment' = " + std::to_string(al) +
               " is not a power of two between 1 and 2^30");
    }
    alignment_ = static_cast<std::uint64_t>(al);
  }

  tensors_.reserve(n_tensors);
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    const std::string where = "tensor " + std::to_string(i);
    TensorInfo t;
    t.name = cur.read_string(where + " name", kMaxNameLength);
    const std::string tn = "tensor '" + std::string(t.name) + "'";
    if (t.name.empty()) cur.fail(where + " has an empty name");
    const auto n_dims = cur.read<std::uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) {
      cur.fail(tn + ": " + std::to_string(n_dims) + " dimensions (supported: 1 to 4)");
    }
    t.dims.resize(n_dims);
    std::uint64_t n_el = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      t.dims[d] = cur.read<std::uint64_t>("tensor dimension");
      if (t.dims[d] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
          (t.dims[d] != 0 &&
           n_el >
               static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / t.dims[d])) {
        cur.fail(tn + ": element count overflows (dimension " + std::to_string(d) + " = " +
                 std::to_string(t.dims[d]) + ")");
      }
      n_el *= t.dims[d];
    }
    t.n_elements = n_el;
    const auto type_raw = cur.read<std::uint32_t>("tensor type");
    const auto layout = tensor_type_layout(type_raw);
    if (!layout) cur.fail(tn + ": unknown tensor type " + std::to_string(type_raw));
    t.type = static_cast<TensorType>(type_raw);
    if (t.dims[0] % layout->block_elems != 0) {
      cur.fail(tn + ": row length " + std::to_string(t.dims[0]) + " is not a multiple of " +
               std::string(layout->name) + "'s block size " + std::to_string(layout->block_elems));
    }
    // n_el <= 2^63 and block_bytes <= 292 * elements / block_elems: compute in blocks.
    const std::uint64_t n_blocks = n_el / layout->block_elems;
    if (n_blocks > std::numeric_limits<std::uint64_t>::max() / layout->block_bytes) {
      cur.fail(tn + ": byte size overflows");
    }
    t.n_bytes = n_blocks * layout->block_bytes;
    t.offset = cur.read<std::uint64_t>("tensor data offset");
    if (t.offset % alignment_ != 0) {
      cur.fail(tn + ": data offset " + std::to_string(t.offset) +
               " is not a multiple of the alignment " + std::to_string(alignment_));
    }
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) {
      cur.fail("duplicate tensor name '" + std::string(t.name) + "'");
    }
    tensors_.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment.
  const std::uint64_t end_of_infos = cur.pos();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
  if (!tensors_.empty() && data_offset_ > bytes_.size()) {
    // Without this, even a zero-byte tensor would view memory past the end.
    throw Error("malformed GGUF file '" + source_ + "': the data section starts at byte " +
                std::to_string(data_offset_) + ", beyond the end of the file (" +
                std::to_string(bytes_.size()) + " bytes); the file may be truncated");
  }
  const std::uint64_t data_size = data_offset_ <= bytes_.size() ? bytes_.size() - data_offset_ : 0;

  for (TensorInfo& t : tensors_) {
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      throw Error("malformed GGUF file '" + source_ + "': tensor '" + std::string(t.name) +
                  "' data [" + std::to_string(data_offset_ + t.offset) + ", " +
                  std::to_string(data_offset_ + t.offset + t.n_bytes) +
                  ") lies beyond the end of the file (" + std::to_string(bytes_.size()) +
                  " bytes); the file may be truncated");
    }
    t.data = bytes_.subspan(data_offset_ + t.offset, t.n_bytes);
  }

  // Tensors must not overlap.
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(tensors_.size());
  for (const TensorInfo& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = *by_offset[i - 1];
    const TensorInfo& cur_t = *by_offset[i];
    if (cur_t.offset < prev.offset + prev.n_bytes) {
      throw Error("malformed GGUF file '" + source_ + "': tensors '" + std::string(prev.name) +
                  "' and '" + std::string(cur_t.name) + "' overlap in the data section");
    }
  }
}

const Value* GgufFile::find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

std::optional<std::int64_t> GgufFile::get_int(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional(v->as_int(key)) : std::nullopt;
}

std::optional<std::uint64_t> GgufFile::get_uint(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional(v->as_uint(key)) : std::nullopt;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional(v->as_float(key)) : std::nullopt;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional(v->as_bool(key)) : std::nullopt;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional(v->as_string(key)) : std::nullopt;
}

const Value::Array* GgufFile::get_array(std::string_view key) const {
  const Value* v = find(key);
  return v ? &v->as_array(key) : nullptr;
}

std::uint64_t GgufFile::require_uint(std::string_view key) const {
  auto v = get_uint(key);
  if (!v)
    throw Error("GGUF file '" + source_ + "' lacks required metadata '" + std::string(key) + "'");
  return *v;
}

std::string_view GgufFile::require_string(std::string_view key) const {
  auto v = get_string(key);
  if (!v)
    throw Error("GGUF file '" + source_ + "' lacks required metadata '" + std::string(key) + "'");
  return *v;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace folio::gguf
