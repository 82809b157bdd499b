// quant/tensor_plan.h: which type each tensor of a model gets when it is
// quantized to a recipe ("Q4_K_M", "Q8_0", ...): llama-quantize's rules for
// the types folio writes, so a folio file and a llama.cpp file of the same
// recipe hold the same types tensor by tensor.
//
//   - Only tensors of 2+ dims whose name ends in "weight" are quantized, never
//     norms ("_norm.weight"); the rest keep their type.
//   - output.weight (token_embd.weight when the model ties them) gets Q6_K,
//     or Q8_0 when its rows are not whole 256-blocks (unless the recipe is
//     Q8_0 already, or --output-tensor-type says otherwise).
//   - Q4_K_M / Q5_K_M give attn_v and ffn_down Q6_K in the "more bits"
//     layers (the first and last eighth, and every third in between); Q4_K_S
//     gives attn_v Q5_K in the first 4 layers and ffn_down Q5_K in the first
//     eighth; Q4_K_M / Q5_K_M give a fused attn_qkv Q5_K / Q6_K. Q4_0 / Q5_0
//     with importances give ffn_down Q4_1 / Q5_1 in the first eighth.
//   - --tensor-type PATTERN=TYPE (first matching regex wins) replaces these
//     rules for a tensor; --pure turns them off.
//   - A tensor whose rows are not whole blocks of its type falls back:
//     Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, and to F16 when even 32 does
//     not divide them.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/tensor_type.h"

namespace folio::quant {

// A --type value: a base tensor type plus the mix rule around it.
struct Recipe {
  std::string_view name;    // "Q4_K_M"
  gguf::TensorType base;    // Q4_K
  std::uint32_t file_type;  // llama.cpp's llama_ftype, written as general.file_type
  enum class Mix { kPlain, kSmall, kMedium } mix;
};

// The recipes folio writes; "Q4_K" and "Q5_K" are llama-quantize's aliases of
// Q4_K_M and Q5_K_M. Names are case-insensitive.
std::span<const Recipe> all_recipes();
// Throws folio::Error listing the known names when `name` is none of them.
const Recipe& find_recipe(std::string_view name);
// A single tensor type by name ("Q6_K", "f16"); throws folio::Error listing
// the types folio writes.
gguf::TensorType writable_type(std::string_view name);

struct PlanOptions {
  const Recipe* recipe = nullptr;
  std::vector<std::pair<std::string, gguf::TensorType>> tensor_types;  // PATTERN=TYPE, in order
  std::optional<gguf::TensorType> output_type;                         // --output-tensor-type
  std::optional<gguf::TensorType> token_embedding_type;                // --token-embedding-type
  bool pure = false;            // no mix rules: every quantized tensor gets the base type
  bool has_importance = false;  // importances (imatrix / calibration) are available
};

struct TensorShape {
  std::string name;
  std::vector<std::uint64_t> dims;  // ggml order: dims[0] is the row length
  gguf::TensorType type;            // the input's type
};

struct TensorChoice {
  gguf::TensorType type;
  bool quantized;    // false: the tensor keeps its input type (norms, 1-D, ...)
  std::string note;  // why, when not the base type ("output", "more bits", "fallback: ...")
};

class TensorPlan {
 public:
  // Validates the options (every pattern compiles) against the model's tensors.
  TensorPlan(PlanOptions options, std::span<const TensorShape> tensors);

  TensorChoice choose(const TensorShape& t) const;

 private:
  PlanOptions opt_;
  std::vector<std::pair<std::regex, gguf::TensorType>> patterns_;
  bool tied_embeddings_ = true;  // no output.weight: token_embd is also the output
  int n_layer_ = 0;              // 1 + the largest blk.N seen
};

// llama-quantize's tensor order: non-layer tensors first, then by layer
// number, then by name.
bool tensor_order_less(std::string_view a, std::string_view b);

}  // namespace folio::quant
