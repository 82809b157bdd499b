#include "gguf/writer.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

#include "base/error.h"

namespace folio::gguf {

namespace {

bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::UINT16:
    case ValueType::INT16:
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::UINT64:
    case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

// Inclusive range of an integer type, as int64 (UINT64's top half goes through MetaValue::u64).
std::pair<std::int64_t, std::int64_t> int_range(ValueType t) {
  using L = std::numeric_limits<std::int64_t>;
  switch (t) {
    case ValueType::UINT8:
      return {0, 0xff};
    case ValueType::INT8:
      return {-128, 127};
    case ValueType::UINT16:
      return {0, 0xffff};
    case ValueType::INT16:
      return {-32768, 32767};
    case ValueType::UINT32:
      return {0, 0xffffffffLL};
    case ValueType::INT32:
      return {-2147483648LL, 2147483647LL};
    case ValueType::UINT64:
      return {0, L::max()};
    default:
      return {L::min(), L::max()};
  }
}

// Appends little-endian encodings to a byte vector.
class Sink {
 public:
  explicit Sink(std::vector<std::uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(T v) {
    static_assert(std::endian::native == std::endian::little,
                  "folio writes on little-endian hosts");
    put_bytes(&v, sizeof(T));
  }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
  // resize + memcpy rather than vector::insert: GCC 12 at -O3 reports a false
  // -Wstringop-overflow inside libstdc++'s insert (GCC bug 106199).
  void put_bytes(const void* p, std::size_t n) {
    if (n == 0) return;
    const std::size_t at = out_.size();
    out_.resize(at + n);
    std::memcpy(out_.data() + at, p, n);
  }
  void pad_to(std::uint64_t alignment) {
    out_.resize((out_.size() + alignment - 1) / alignment * alignment, 0);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

std::uint64_t tensor_bytes(const std::string& name, const std::vector<std::uint64_t>& dims,
                           TensorType type) {
  const auto layout = tensor_type_layout(static_cast<std::uint32_t>(type));
  if (!layout) throw Error("GGUF writer: tensor '" + name + "' has an unknown type");
  if (dims.empty() || dims.size() > 4) {
    throw Error("GGUF writer: tensor '" + name + "' must have 1 to 4 dimensions");
  }
  if (dims[0] % layout->block_elems != 0) {
    throw Error("GGUF writer: tensor '" + name + "' row length " + std::to_string(dims[0]) +
                " is not a multiple of " + std::string(layout->name) + "'s block size " +
                std::to_string(layout->block_elems));
  }
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) {
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / 2 / d) {
      throw Error("GGUF writer: tensor '" + name + "' is too large");
    }
    n *= d;
  }
  return n / layout->block_elems * layout->block_bytes;
}

}  // namespace

MetaValue MetaValue::integer(ValueType type, std::int64_t v) {
  if (!is_integer_type(type)) {
    throw Error("GGUF writer: " + std::string(value_type_name(type)) + " is not an integer type");
  }
  const auto [lo, hi] = int_range(type);
  if (v < lo || v > hi) {
    throw Error("GGUF writer: " + std::to_string(v) + " does not fit in " +
                std::string(value_type_name(type)));
  }
  return MetaValue(type, v);
}

MetaValue MetaValue::u64(std::uint64_t v) {
  return MetaValue(ValueType::UINT64, v);
}

MetaValue MetaValue::array(ValueType elem_type, Array items) {
  for (const MetaValue& item : items) {
    if (item.type_ != elem_type) {
      throw Error("GGUF writer: array of " + std::string(value_type_name(elem_type)) + " holds a " +
                  std::string(value_type_name(item.type_)));
    }
  }
  MetaValue out(ValueType::ARRAY, std::move(items));
  out.elem_type_ = elem_type;
  return out;
}

MetaValue MetaValue::from(const Value& v) {
  const ValueType t = v.type();
  switch (t) {
    case ValueType::UINT64:
      return u64(v.as_uint("value"));
    case ValueType::FLOAT32:
    case ValueType::FLOAT64:
      return MetaValue(t, v.as_float("value"));
    case ValueType::BOOL:
      return boolean(v.as_bool("value"));
    case ValueType::STRING:
      return string(std::string(v.as_string("value")));
    case ValueType::ARRAY: {
      Array items;
      items.reserve(v.as_array("value").size());
      for (const Value& item : v.as_array("value")) items.push_back(from(item));
      return array(v.elem_type(), std::move(items));
    }
    default:
      return integer(t, v.as_int("value"));
  }
}

namespace {

void put_value(Sink& s, const MetaValue& v) {
  const MetaValue::Storage& var = v.storage();
  switch (v.type()) {
    case ValueType::UINT8:
      s.put(static_cast<std::uint8_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::INT8:
      s.put(static_cast<std::int8_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::UINT16:
      s.put(static_cast<std::uint16_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::INT16:
      s.put(static_cast<std::int16_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::UINT32:
      s.put(static_cast<std::uint32_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::INT32:
      s.put(static_cast<std::int32_t>(std::get<std::int64_t>(var)));
      return;
    case ValueType::INT64:
      s.put(std::get<std::int64_t>(var));
      return;
    case ValueType::UINT64:
      if (const auto* u = std::get_if<std::uint64_t>(&var)) {
        s.put(*u);
      } else {
        s.put(static_cast<std::uint64_t>(std::get<std::int64_t>(var)));
      }
      return;
    case ValueType::FLOAT32:
      s.put(static_cast<float>(std::get<double>(var)));
      return;
    case ValueType::FLOAT64:
      s.put(std::get<double>(var));
      return;
    case ValueType::BOOL:
      s.put(static_cast<std::uint8_t>(std::get<bool>(var) ? 1 : 0));
      return;
    case ValueType::STRING:
      s.put_string(std::get<std::string>(var));
      return;
    case ValueType::ARRAY: {
      const auto& items = std::get<MetaValue::Array>(var);
      s.put(static_cast<std::uint32_t>(v.elem_type()));
      s.put<std::uint64_t>(items.size());
      for (const MetaValue& item : items) put_value(s, item);
      return;
    }
  }
}

}  // namespace

GgufWriter::GgufWriter(std::uint32_t version) : version_(version) {
  if (version != 2 && version != 3) {
    throw Error("GGUF writer: version " + std::to_string(version) + " is not writable (2 or 3)");
  }
}

void GgufWriter::add(std::string key, MetaValue value) {
  for (const auto& [k, v] : metadata_) {
    if (k == key) throw Error("GGUF writer: duplicate metadata key '" + key + "'");
  }
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::set_alignment(std::uint32_t alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment)) {
    throw Error("GGUF writer: alignment " + std::to_string(alignment) + " is not a power of two");
  }
  for (auto& [k, v] : metadata_) {
    if (k == "general.alignment") {
      v = MetaValue::integer(ValueType::UINT32, alignment);
      return;
    }
  }
  add("general.alignment", MetaValue::integer(ValueType::UINT32, alignment));
}

void GgufWriter::push_tensor(Tensor t) {
  for (const Tensor& x : tensors_) {
    if (x.name == t.name) throw Error("GGUF writer: duplicate tensor name '" + t.name + "'");
  }
  const std::uint64_t need = tensor_bytes(t.name, t.dims, t.type);
  if (t.data.size() != need) {
    throw Error("GGUF writer: tensor '" + t.name + "' needs " + std::to_string(need) +
                " bytes of data, got " + std::to_string(t.data.size()));
  }
  tensors_.push_back(std::move(t));  // moving `owned` keeps its buffer, so `data` stays valid
}

void GgufWriter::add_tensor(std::string name, std::vector<std::uint64_t> dims, TensorType type,
                            std::vector<std::uint8_t> data) {
  Tensor t{std::move(name), std::move(dims), type, std::move(data), {}};
  t.data = t.owned;
  push_tensor(std::move(t));
}

void GgufWriter::add_tensor_view(std::string name, std::vector<std::uint64_t> dims, TensorType type,
                                 std::span<const std::uint8_t> data) {
  push_tensor({std::move(name), std::move(dims), type, {}, data});
}

std::uint64_t GgufWriter::alignment() const {
  for (const auto& [k, v] : metadata_) {
    if (k != "general.alignment") continue;
    const auto* i = std::get_if<std::int64_t>(&v.storage());
    if (i == nullptr || *i <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(*i))) {
      throw Error("GGUF writer: general.alignment must be a positive power-of-two integer");
    }
    return static_cast<std::uint64_t>(*i);
  }
  return 32;  // the GGUF default
}

std::vector<std::uint8_t> GgufWriter::to_bytes() const {
  const std::uint64_t align = alignment();
  std::vector<std::uint8_t> out;
  Sink s(out);
  s.put<std::uint32_t>(0x46554747);  // "GGUF" read as a little-endian u32
  s.put<std::uint32_t>(version_);
  s.put<std::uint64_t>(tensors_.size());
  s.put<std::uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    s.put_string(key);
    s.put(static_cast<std::uint32_t>(value.type()));
    put_value(s, value);
  }
  // Offsets are relative to the data section; each tensor starts aligned.
  std::uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    s.put_string(t.name);
    s.put<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
    for (std::uint64_t d : t.dims) s.put(d);
    s.put(static_cast<std::uint32_t>(t.type));
    s.put(offset);
    offset = (offset + t.data.size() + align - 1) / align * align;
  }
  // One allocation for the data section (a converted checkpoint is gigabytes).
  out.reserve((out.size() + align - 1) / align * align + offset);
  for (const Tensor& t : tensors_) {
    s.pad_to(align);
    s.put_bytes(t.data.data(), t.data.size());
  }
  if (tensors_.empty()) s.pad_to(align);
  return out;
}

void GgufWriter::write_file(const std::string& path) const {
  const std::vector<std::uint8_t> bytes = to_bytes();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error("GGUF writer: could not write '" + path + "': " + std::strerror(errno));
}

}  // namespace folio::gguf
