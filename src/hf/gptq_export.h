// hf/gptq_export.h: a quantized model written back as a Hugging Face GPTQ
// checkpoint (`folio quantize --format gptq`), the inverse of the GPTQ path
// of convert.h for the block types that are GPTQ groups exactly:
//   Q4_0 -> 4-bit, Q8_0 -> 8-bit; sym, group_size 32, desc_act false,
//   checkpoint_format "gptq" (v1: zeros stored minus one), g_idx = i / 32.
// The source must be an unquantized HF checkpoint directory: its config.json
// (plus quantization_config), tokenizer and generation files and every tensor
// that is not a decoder-block linear weight (embeddings, norms, biases,
// lm_head) are carried over unchanged; each block linear comes from
// `quantized` (GGUF names; the Llama q/k RoPE permutation undone).
// Loading the result gives back the same Q4_0 / Q8_0 bytes.
#pragma once

#include <string>

#include "gguf/gguf_file.h"

namespace folio::hf {

// Writes the checkpoint into `out_dir` (created; it must not exist yet) via
// a temporary sibling directory renamed at the end. Throws folio::Error.
void write_gptq_checkpoint(const std::string& source_dir, const gguf::GgufFile& quantized,
                           const std::string& out_dir);

}  // namespace folio::hf
