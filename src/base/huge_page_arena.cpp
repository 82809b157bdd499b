#include "base/huge_page_arena.h"

#include <sys/mman.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <new>

// AddressSanitizer: GCC defines __SANITIZE_ADDRESS__, clang has the feature.
#if defined(__SANITIZE_ADDRESS__)
#define FOLIO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOLIO_ASAN 1
#endif
#endif

namespace folio {

namespace {

constexpr std::size_t kAlign = 64;
// Address space per shared chunk; only the 2 MiB pages written are backed.
constexpr std::size_t kChunkBytes = 32 * kHugePageBytes;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

struct Chunk {
  std::uint8_t* base = nullptr;
  std::size_t size = 0;
  explicit Chunk(std::size_t bytes) : size(round_up(bytes, kHugePageBytes)) {
    base = static_cast<std::uint8_t*>(std::aligned_alloc(kHugePageBytes, size));
    if (base == nullptr) throw std::bad_alloc();
    // A hint: refused (THP off, an old kernel) it leaves 4 KiB pages.
    ::madvise(base, size, MADV_HUGEPAGE);
  }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
  ~Chunk() { std::free(base); }
};

struct Arena {
  std::mutex mu;
  std::shared_ptr<Chunk> current;  // the chunk small buffers are carved from
  std::size_t used = 0;            // bytes of it handed out
};

Arena& arena() {
  static Arena a;
  return a;
}

}  // namespace

bool huge_paged_chunks() {
#ifdef FOLIO_ASAN
  return false;
#else
  return true;
#endif
}

std::string transparent_huge_pages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(f, line)) return "unavailable";
  const std::size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

std::shared_ptr<std::uint8_t[]> alloc_huge_paged(std::size_t bytes) {
  bytes = round_up(bytes == 0 ? 1 : bytes, kAlign);
  if (!huge_paged_chunks()) {  // its own heap block (bytes is a multiple of kAlign)
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, bytes));
    if (p == nullptr) throw std::bad_alloc();
    return {p, [](std::uint8_t* q) { std::free(q); }};
  }
  if (bytes > kChunkBytes / 2) {  // its own chunk; the shared one stays current
    auto own = std::make_shared<Chunk>(bytes);
    return {own, own->base};  // aliasing: the buffer keeps its chunk alive
  }
  Arena& a = arena();
  const std::lock_guard<std::mutex> lock(a.mu);
  // No buffer left in the current chunk (its models were freed): start it
  // over. Only this function makes new owners, under the lock, so a count of
  // one cannot grow behind our back.
  if (a.current != nullptr && a.current.use_count() == 1) a.used = 0;
  if (a.current == nullptr || a.current->size - a.used < bytes) {
    a.current = std::make_shared<Chunk>(kChunkBytes);
    a.used = 0;
  }
  std::uint8_t* p = a.current->base + a.used;
  a.used += bytes;
  return {a.current, p};
}

}  // namespace folio
