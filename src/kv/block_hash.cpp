#include "kv/block_hash.h"

#include <xxhash.h>

#include <cstring>
#include <vector>

namespace folio::kv {

BlockHash hash_block(const BlockHash* parent, std::span<const TokenId> tokens,
                     std::uint64_t extra_key) {
  // Layout hashed: [has_parent u8][parent lo,hi u64 x2][extra u64][tokens i32...].
  // The has_parent byte keeps a root block distinct from a child of a
  // parent whose hash happens to be all zeros.
  std::vector<unsigned char> buf(1 + 16 + 8 + tokens.size_bytes());
  unsigned char* p = buf.data();
  *p++ = parent != nullptr ? 1 : 0;
  const BlockHash root{};
  const BlockHash& par = parent != nullptr ? *parent : root;
  std::memcpy(p, &par.lo, 8);
  std::memcpy(p + 8, &par.hi, 8);
  std::memcpy(p + 16, &extra_key, 8);
  p += 24;
  if (!tokens.empty()) std::memcpy(p, tokens.data(), tokens.size_bytes());
  const XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  return BlockHash{h.low64, h.high64};
}

}  // namespace folio::kv
