// base/mapped_file.h: a read-only memory-mapped file (RAII owner).
//
// The GGUF reader and the model use weights in place from this mapping.
// Moving transfers ownership; copying is not allowed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace folio {

class MappedFile {
 public:
  // Maps `path` read-only. Throws folio::Error naming the path and the OS error.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::string path_;
};

}  // namespace folio
