// tests/gguf/raw_gguf.h: spells out GGUF bytes field by field, for hand-made
// (usually broken) files that GgufWriter would refuse to produce.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "gguf/value.h"

namespace folio::gguf::testing {

class RawGguf {
 public:
  template <typename T>
  RawGguf& put(T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  RawGguf& u8(std::uint8_t v) { return put(v); }
  RawGguf& u32(std::uint32_t v) { return put(v); }
  RawGguf& u64(std::uint64_t v) { return put(v); }
  RawGguf& str(std::string_view s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  RawGguf& type(ValueType t) { return u32(static_cast<std::uint32_t>(t)); }
  RawGguf& fill(std::size_t n, std::uint8_t v = 0) {
    bytes_.insert(bytes_.end(), n, v);
    return *this;
  }
  RawGguf& pad_to(std::size_t alignment) {
    bytes_.resize((bytes_.size() + alignment - 1) / alignment * alignment, 0);
    return *this;
  }

  // "GGUF" | version | n_tensors | n_kv
  RawGguf& header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
    bytes_.insert(bytes_.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  // A complete uint32 metadata entry.
  RawGguf& kv_u32(std::string_view key, std::uint32_t v) {
    return str(key).type(ValueType::UINT32).u32(v);
  }
  // A complete tensor info.
  RawGguf& tensor(std::string_view name, std::initializer_list<std::uint64_t> dims,
                  std::uint32_t type, std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(dims.size()));
    for (std::uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }

  std::size_t size() const { return bytes_.size(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

}  // namespace folio::gguf::testing
