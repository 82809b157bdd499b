// Deterministic random mutations of a small valid GGUF file: every mutant must
// either parse (and then be fully readable) or fail with folio::Error. Any other
// exception (bad_alloc, length_error, ...) or a crash is a reader bug. Run under
// FOLIO_SANITIZE=ON to catch out-of-bounds reads too; fuzz/ goes further.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace folio::gguf {
namespace {

using VT = ValueType;

std::vector<std::uint8_t> seed_file() {
  GgufWriter w;
  w.add("general.architecture", MetaValue::string("llama"));
  w.add("general.alignment", MetaValue::integer(VT::UINT32, 16));
  w.add("llama.block_count", MetaValue::integer(VT::UINT32, 2));
  w.add("f", MetaValue::f32(1e-5f));
  w.add("b", MetaValue::boolean(true));
  w.add("tokens", MetaValue::array(VT::STRING, {MetaValue::string("a"), MetaValue::string("bc")}));
  w.add("nested",
        MetaValue::array(VT::ARRAY,
                         {MetaValue::array(VT::INT64, {MetaValue::integer(VT::INT64, -1)})}));
  w.add_tensor("tok_embd", {4, 2}, TensorType::F16, std::vector<std::uint8_t>(16, 0x3c));
  w.add_tensor("blk.0.w", {32}, TensorType::Q4_0, std::vector<std::uint8_t>(18, 0x11));
  w.add_tensor("norm", {3}, TensorType::F32, std::vector<std::uint8_t>(12, 0));
  return w.to_bytes();
}

// Reads everything a parsed file exposes; returns a checksum so nothing is optimised away.
std::uint64_t touch(const GgufFile& f) {
  std::uint64_t sum = 0;
  for (const MetadataEntry& e : f.metadata()) sum += e.key.size() + e.value.to_string(4).size();
  for (const TensorInfo& t : f.tensors()) {
    for (std::uint8_t b : t.data) sum += b;
    sum += t.n_elements;
  }
  return sum;
}

std::uint64_t interesting(std::mt19937_64& rng) {
  static constexpr std::uint64_t kValues[] = {
      0,    1,   2,          3,          4,          5,          8,
      9,    12,  13,         16,         31,         32,         33,
      255,  256, 0x7fffffff, 0xffffffff, 1ull << 32, 1ull << 62, 0x7fffffffffffffffull,
      ~0ull};
  return kValues[rng() % std::size(kValues)];
}

// Applies one of several mutation kinds at a random place.
std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> b, std::mt19937_64& rng) {
  const std::size_t pos = rng() % b.size();
  switch (rng() % 6) {
    case 0:
      b[pos] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;  // bit flip
    case 1:
      b[pos] = static_cast<std::uint8_t>(rng());
      break;   // random byte
    case 2: {  // u32 field
      const auto v = static_cast<std::uint32_t>(interesting(rng));
      for (std::size_t k = 0; k < 4 && pos + k < b.size(); ++k)
        b[pos + k] = static_cast<std::uint8_t>(v >> (8 * k));
      break;
    }
    case 3: {  // u64 field
      const std::uint64_t v = interesting(rng);
      for (std::size_t k = 0; k < 8 && pos + k < b.size(); ++k)
        b[pos + k] = static_cast<std::uint8_t>(v >> (8 * k));
      break;
    }
    case 4:
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(pos));
      break;  // delete a byte
    default:
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<std::uint8_t>(rng()));
      break;
  }
  return b;
}

TEST(GgufMutation, EveryMutantParsesOrFailsCleanly) {
  const std::vector<std::uint8_t> seed = seed_file();
  ASSERT_GT(touch(GgufFile::parse(seed)), 0u);
  std::mt19937_64 rng(20240601);  // fixed: the same mutants on every run and platform
  int parsed = 0, rejected = 0;
  constexpr int kMutants = 6000;
  for (int i = 0; i < kMutants; ++i) {
    // 1 to 3 stacked mutations, so that later fields are reached with earlier ones intact or not.
    std::vector<std::uint8_t> b = seed;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n && !b.empty(); ++k) b = mutate(std::move(b), rng);
    try {
      (void)touch(GgufFile::parse(b, "mutant"));
      ++parsed;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "mutant " << i << " threw a non-folio exception: " << e.what();
    }
  }
  // Both outcomes must be common, or the mutations are not exercising the reader.
  EXPECT_GT(parsed, kMutants / 20);
  EXPECT_GT(rejected, kMutants / 4);
  std::printf("mutants: %d parsed, %d rejected with folio::Error\n", parsed, rejected);
}

}  // namespace
}  // namespace folio::gguf
