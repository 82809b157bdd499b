#include "base/huge_page_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace folio {
namespace {

// The "THPeligible" line of the mapping holding `p` in /proc/self/smaps
// (-1 when not found: no such line on this kernel).
int thp_eligible(const void* p) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s;
}

TEST(HugePageArena, BuffersAreAlignedDistinctAndKeepTheirBytes) {
  const std::vector<std::size_t> sizes = {1, 63, 64, 65, 4096, 187'000, 1 << 20, 3, 500'000};
  std::vector<std::shared_ptr<std::uint8_t[]>> bufs;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    bufs.push_back(alloc_huge_paged(sizes[i]));
    ASSERT_NE(bufs.back(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bufs.back().get()) % 64, 0u) << sizes[i];
    std::uint8_t* p = bufs.back().get();
    for (std::size_t j = 0; j < sizes[i]; ++j) p[j] = static_cast<std::uint8_t>(i * 37 + j);
  }
  // Every buffer still holds its own pattern: none overlaps another.
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::uint8_t* p = bufs[i].get();
    for (std::size_t j = 0; j < sizes[i]; ++j) {
      ASSERT_EQ(p[j], static_cast<std::uint8_t>(i * 37 + j)) << "buffer " << i << " byte " << j;
    }
  }
}

TEST(HugePageArena, ABufferOutlivesTheOthersFromItsChunk) {
  auto a = alloc_huge_paged(1000);
  auto b = alloc_huge_paged(1000);
  a[999] = 7;
  b.reset();
  constexpr std::size_t kBig = std::size_t{80} << 20;  // over half a chunk: its own
  auto big = alloc_huge_paged(kBig);
  big.get()[kBig - 1] = 9;
  EXPECT_EQ(a[999], 7);
  EXPECT_EQ(big.get()[kBig - 1], 9);
}

TEST(HugePageArena, TheCurrentChunkIsReusedOnceItHoldsNoBuffer) {
  if (!huge_paged_chunks()) GTEST_SKIP() << "AddressSanitizer build: plain heap buffers";
  auto a = alloc_huge_paged(1000);
  const std::uint8_t* first = a.get();
  auto b = alloc_huge_paged(1000);
  EXPECT_NE(b.get(), first);
  a.reset();
  b.reset();  // the chunk now holds nothing: the next buffer starts it over
  auto c = alloc_huge_paged(1000);
  EXPECT_EQ(c.get(), first);
  auto d = alloc_huge_paged(1000);  // while c lives, d follows it
  EXPECT_EQ(d.get(), first + 1024);
}

TEST(HugePageArena, ChunksAreAdvisedForHugePages) {
  if (!huge_paged_chunks()) GTEST_SKIP() << "AddressSanitizer build: plain heap buffers";
  const std::string mode = thp_mode();
  if (mode.empty() || mode.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages off on this host ('" << mode << "')";
  auto small = alloc_huge_paged(100'000);
  auto big = alloc_huge_paged(std::size_t{70} << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.get()) % kHugePageBytes, 0u);
  const int s = thp_eligible(small.get()), b = thp_eligible(big.get());
  if (s < 0) GTEST_SKIP() << "no THPeligible lines in /proc/self/smaps on this kernel";
  EXPECT_EQ(s, 1) << "THP mode " << mode;
  EXPECT_EQ(b, 1) << "THP mode " << mode;
}

}  // namespace
}  // namespace folio
