#include "gguf/gguf_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/error.h"

namespace folio::gguf {
namespace {

TEST(GgufFile, RejectsBadMagic) {
  std::vector<std::uint8_t> bytes(64, 0);
  std::memcpy(bytes.data(), "GGML", 4);
  EXPECT_THROW((void)GgufFile::parse(bytes), Error);
}

}  // namespace
}  // namespace folio::gguf
