// fuzz/gguf_fuzz.cpp: libFuzzer target for the GGUF reader (and the model
// config built on it). Any input must parse or fail with folio::Error; ASan
// and UBSan turn out-of-bounds reads, overflows and leaks into findings.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "model/config.h"

namespace {

// Reads every value, recursively, through each typed accessor.
std::uint64_t touch(const folio::gguf::Value& v) {
  std::uint64_t sum = v.to_string(16).size();
  try {
    sum += static_cast<std::uint64_t>(v.as_int("v"));
  } catch (const folio::Error&) {
  }
  try {
    sum += v.as_uint("v");
  } catch (const folio::Error&) {
  }
  try {
    sum += static_cast<std::uint64_t>(v.as_float("v") != 0.0);
  } catch (const folio::Error&) {
  }
  try {
    sum += v.as_bool("v") ? 1 : 0;
  } catch (const folio::Error&) {
  }
  try {
    sum += v.as_string("v").size();
  } catch (const folio::Error&) {
  }
  if (v.type() == folio::gguf::ValueType::ARRAY) {
    for (const auto& item : v.as_array("v")) sum += touch(item);
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto f = folio::gguf::GgufFile::parse(std::span(data, size), "fuzz");
    volatile std::uint64_t sum = 0;
    for (const auto& e : f.metadata()) {
      sum = sum + e.key.size() + touch(e.value);
      if (f.find(e.key) != &e.value) __builtin_trap();  // the index must agree with the list
    }
    for (const auto& t : f.tensors()) {
      for (std::uint8_t b : t.data) sum = sum + b;  // every byte of every view is readable
      if (f.find_tensor(t.name) != &t) __builtin_trap();
    }
    try {
      const auto c = folio::model::from_gguf(f);
      sum = sum + c.kv_elements_per_token() + c.n_sliding_layers();
      sum = sum + c.kv_elements_for(c.n_ctx_train);  // may throw on overflow
    } catch (const folio::Error&) {
    }
  } catch (const folio::Error&) {
  }
  return 0;
}
