#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.h"

namespace folio {
namespace {

TEST(MappedFile, MapsContents) {
  const std::string path =
      ::testing::TempDir() + "/folio_mapped_file_test_" + std::to_string(::getpid()) + ".bin";
  { std::ofstream(path, std::ios::binary) << "hello"; }
  MappedFile f = MappedFile::open(path);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.bytes().data()), 5), "hello");
  MappedFile g = std::move(f);
  EXPECT_EQ(g.size(), 5u);
  EXPECT_EQ(f.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  std::remove(path.c_str());
}

TEST(MappedFile, MissingFileNamesPath) {
  try {
    (void)MappedFile::open("/nonexistent/folio.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folio.gguf"), std::string::npos);
  }
}

TEST(MappedFile, DirectoryIsRejected) {
  EXPECT_THROW((void)MappedFile::open("/tmp"), Error);
}

}  // namespace
}  // namespace folio
