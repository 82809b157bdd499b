// hf/safetensors_writer.cpp: see safetensors_writer.h.
#include "hf/safetensors_writer.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace folio::hf {

void SafetensorsWriter::add(std::string name, Dtype dtype, std::vector<std::uint64_t> shape,
                            std::vector<std::uint8_t> data) {
  std::uint64_t n = dtype_bytes(dtype);
  for (const std::uint64_t d : shape) n *= d;
  if (n != data.size()) {
    throw Error("safetensors writer: tensor '" + name + "' has " + std::to_string(data.size()) +
                " bytes, its dtype and shape need " + std::to_string(n));
  }
  if (name == "__metadata__" || tensors_.count(name) != 0) {
    throw Error("safetensors writer: tensor name '" + name + "' is taken");
  }
  tensors_.emplace(std::move(name), Tensor{dtype, std::move(shape), std::move(data)});
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  metadata_[std::move(key)] = std::move(value);
}

std::vector<std::uint8_t> SafetensorsWriter::to_bytes() const {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors_) {
    header[name] = {{"dtype", std::string(dtype_name(t.dtype))},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t n = text.size();
  std::vector<std::uint8_t> out(8 + text.size() + offset);
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::uint8_t* p = out.data() + 8 + text.size();
  for (const auto& [name, t] : tensors_) {
    if (!t.data.empty()) std::memcpy(p, t.data.data(), t.data.size());
    p += t.data.size();
  }
  return out;
}

void SafetensorsWriter::write_file(const std::string& path) const {
  const std::vector<std::uint8_t> bytes = to_bytes();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw Error("cannot write " + path);
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) throw Error("writing " + path + " failed");
}

}  // namespace folio::hf
