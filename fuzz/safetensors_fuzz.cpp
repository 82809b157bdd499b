// fuzz/safetensors_fuzz.cpp: libFuzzer target for the safetensors reader and
// the config.json reader of Hugging Face checkpoints (src/hf/). Any input must
// parse or fail with folio::Error; ASan and UBSan turn out-of-bounds reads,
// overflows and leaks into findings. Inputs that start with '{' are also read
// as a config.json.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

#include "base/error.h"
#include "hf/hf_config.h"
#include "hf/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  try {
    const auto f = folio::hf::SafetensorsFile::parse(bytes, "fuzz");
    std::uint64_t sum = 0;
    for (const auto& t : f.tensors()) {
      for (const std::uint8_t b : t.data) sum += b;  // every view inside the input
      sum += t.shape.size() + t.n_elements;
    }
    for (const auto& [k, v] : f.metadata()) sum += k.size() + v.size();
    if (sum == 0xdeadbeefcafef00dull) return -1;  // keep the reads
  } catch (const folio::Error&) {
  }
  if (size > 0 && data[0] == '{') {
    try {
      const auto j = nlohmann::json::parse(data, data + size);
      const auto c = folio::hf::parse_config(j, "fuzz");
      (void)folio::hf::model_metadata(c, "fuzz");
    } catch (const folio::Error&) {
    } catch (const nlohmann::json::exception&) {
    }
  }
  return 0;
}
