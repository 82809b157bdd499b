// fuzz/make_corpus.cpp: writes a few small valid GGUF files (the fuzzer's seeds)
// into the directory given as argv[1]. Each is a few hundred bytes to a few KB,
// built with GgufWriter so that they cover every value type, nested arrays,
// both versions, custom alignment, several tensor types and a model config.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "gguf/writer.h"

namespace {

using folio::gguf::GgufWriter;
using folio::gguf::MetaValue;
using folio::gguf::TensorType;
using VT = folio::gguf::ValueType;

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t v) {
  return std::vector<std::uint8_t>(n, v);
}

MetaValue strings(std::initializer_list<const char*> items) {
  MetaValue::Array a;
  for (const char* s : items) a.push_back(MetaValue::string(s));
  return MetaValue::array(VT::STRING, std::move(a));
}

// A two-layer llama-shaped model: enough for model::from_gguf to succeed.
GgufWriter tiny_llama(std::uint32_t version) {
  GgufWriter w(version);
  w.add("general.architecture", MetaValue::string("llama"));
  w.add("llama.block_count", MetaValue::integer(VT::UINT32, 2));
  w.add("llama.context_length", MetaValue::integer(VT::UINT32, 64));
  w.add("llama.embedding_length", MetaValue::integer(VT::UINT32, 8));
  w.add("llama.feed_forward_length", MetaValue::integer(VT::UINT32, 16));
  w.add("llama.attention.head_count", MetaValue::integer(VT::UINT32, 2));
  w.add("llama.attention.head_count_kv", MetaValue::integer(VT::UINT32, 1));
  w.add("llama.rope.freq_base", MetaValue::f32(10000.0f));
  w.add("llama.attention.layer_norm_rms_epsilon", MetaValue::f32(1e-5f));
  w.add("tokenizer.ggml.model", MetaValue::string("gpt2"));
  w.add("tokenizer.ggml.tokens", strings({"a", "b", "ab", "<s>"}));
  w.add("tokenizer.ggml.merges", strings({"a b"}));
  w.add("tokenizer.ggml.bos_token_id", MetaValue::integer(VT::UINT32, 3));
  w.add_tensor("token_embd.weight", {8, 4}, TensorType::F16, bytes(64, 0x3c));
  w.add_tensor("blk.0.attn_q.weight", {32, 1}, TensorType::Q4_0, bytes(18, 0x11));
  w.add_tensor("output_norm.weight", {8}, TensorType::F32, bytes(32, 0));
  return w;
}

// Every metadata type, nested arrays, gemma3-style sliding window, 64-byte alignment.
GgufWriter all_types() {
  GgufWriter w(3);
  w.set_alignment(64);
  w.add("general.architecture", MetaValue::string("gemma3"));
  w.add("gemma3.block_count", MetaValue::integer(VT::UINT32, 6));
  w.add("gemma3.context_length", MetaValue::integer(VT::UINT32, 128));
  w.add("gemma3.embedding_length", MetaValue::integer(VT::UINT32, 16));
  w.add("gemma3.feed_forward_length", MetaValue::integer(VT::UINT32, 32));
  w.add("gemma3.attention.head_count", MetaValue::integer(VT::UINT32, 4));
  w.add("gemma3.attention.key_length", MetaValue::integer(VT::UINT32, 8));
  w.add("gemma3.attention.sliding_window", MetaValue::integer(VT::UINT32, 16));
  w.add("gemma3.attention.layer_norm_rms_epsilon", MetaValue::f32(1e-6f));
  w.add("u8", MetaValue::integer(VT::UINT8, 200));
  w.add("i8", MetaValue::integer(VT::INT8, -100));
  w.add("u16", MetaValue::integer(VT::UINT16, 60000));
  w.add("i16", MetaValue::integer(VT::INT16, -30000));
  w.add("i32", MetaValue::integer(VT::INT32, -7));
  w.add("u64", MetaValue::u64(~0ull));
  w.add("i64", MetaValue::integer(VT::INT64, -1));
  w.add("f64", MetaValue::f64(0.5));
  w.add("bool", MetaValue::boolean(true));
  w.add("nested",
        MetaValue::array(VT::ARRAY, {MetaValue::array(VT::BOOL, {MetaValue::boolean(false)}),
                                     MetaValue::array(VT::FLOAT64, {MetaValue::f64(1.0)})}));
  w.add("tokenizer.ggml.tokens", strings({"<pad>", "<eos>", "\xe2\x96\x81hi"}));
  w.add("tokenizer.ggml.scores",
        MetaValue::array(VT::FLOAT32, {MetaValue::f32(0), MetaValue::f32(0), MetaValue::f32(-1)}));
  w.add_tensor("q4_k", {256}, TensorType::Q4_K, bytes(144, 0x42));
  w.add_tensor("q8_0", {32, 2}, TensorType::Q8_0, bytes(68, 0x7f));
  w.add_tensor("bf16.4d", {2, 1, 1, 2}, TensorType::BF16, bytes(8, 1));
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    tiny_llama(3).write_file(dir + "/tiny_llama_v3.gguf");
    tiny_llama(2).write_file(dir + "/tiny_llama_v2.gguf");
    all_types().write_file(dir + "/all_types.gguf");
    GgufWriter empty;
    empty.write_file(dir + "/empty.gguf");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
