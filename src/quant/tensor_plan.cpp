// quant/tensor_plan.cpp: llama-quantize's per-tensor type rules (see
// tensor_plan.h) for the recipes folio writes.
#include "quant/tensor_plan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "base/error.h"
#include "quant/quantize.h"
#include "quant/traits.h"

namespace folio::quant {

namespace {

using gguf::TensorType;
using Mix = Recipe::Mix;

constexpr std::array<Recipe, 15> kRecipes = {{
    {"F32", TensorType::F32, 0, Mix::kPlain},
    {"F16", TensorType::F16, 1, Mix::kPlain},
    {"BF16", TensorType::BF16, 32, Mix::kPlain},
    {"Q4_0", TensorType::Q4_0, 2, Mix::kPlain},
    {"Q4_1", TensorType::Q4_1, 3, Mix::kPlain},
    {"Q5_0", TensorType::Q5_0, 8, Mix::kPlain},
    {"Q5_1", TensorType::Q5_1, 9, Mix::kPlain},
    {"Q8_0", TensorType::Q8_0, 7, Mix::kPlain},
    {"Q4_K_S", TensorType::Q4_K, 14, Mix::kSmall},
    {"Q4_K_M", TensorType::Q4_K, 15, Mix::kMedium},
    {"Q4_K", TensorType::Q4_K, 15, Mix::kMedium},
    {"Q5_K_S", TensorType::Q5_K, 16, Mix::kSmall},
    {"Q5_K_M", TensorType::Q5_K, 17, Mix::kMedium},
    {"Q5_K", TensorType::Q5_K, 17, Mix::kMedium},
    {"Q6_K", TensorType::Q6_K, 18, Mix::kPlain},
}};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// N of "blk.N.", or -1.
int layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  int layer = -1;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(begin, end, layer);
  if (ec != std::errc() || ptr == end || *ptr != '.') return -1;
  return layer;
}

std::size_t block_elems(TensorType t) {
  return traits(t).block_elems;
}

// The first and last eighth of the layers, and every third one between.
bool more_bits(int layer, int n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

bool is_quantizable(const TensorShape& t) {
  if (t.dims.size() < 2) return false;
  if (!ends_with(t.name, "weight")) return false;
  return !contains(t.name, "_norm.weight") && !contains(t.name, "position_embd") &&
         !contains(t.name, "token_types");
}

std::string type_name(TensorType t) {
  return std::string(gguf::tensor_type_name(t));
}

}  // namespace

std::span<const Recipe> all_recipes() {
  return kRecipes;
}

const Recipe& find_recipe(std::string_view name) {
  for (const Recipe& r : kRecipes) {
    if (iequals(r.name, name)) return r;
  }
  std::string known;
  for (const Recipe& r : kRecipes) known += (known.empty() ? "" : ", ") + std::string(r.name);
  throw Error("unknown quantization type '" + std::string(name) + "' (folio writes: " + known +
              ")");
}

gguf::TensorType writable_type(std::string_view name) {
  std::string known;
  for (const TypeTraits& t : all_traits()) {
    if (t.quantize_row == nullptr) continue;
    if (iequals(t.name, name)) return t.type;
    known += (known.empty() ? "" : ", ") + std::string(t.name);
  }
  throw Error("unknown tensor type '" + std::string(name) + "' (folio writes: " + known + ")");
}

bool tensor_order_less(std::string_view a, std::string_view b) {
  const int la = layer_of(a);
  const int lb = layer_of(b);
  if (la != lb) return la < lb;
  return a < b;
}

TensorPlan::TensorPlan(PlanOptions options, std::span<const TensorShape> tensors)
    : opt_(std::move(options)) {
  FOLIO_CHECK(opt_.recipe != nullptr, "TensorPlan needs a recipe");
  for (const auto& [pattern, type] : opt_.tensor_types) {
    try {
      patterns_.emplace_back(std::regex(pattern), type);
    } catch (const std::regex_error& e) {
      throw Error("--tensor-type: '" + pattern + "' is not a valid regular expression (" +
                  e.what() + ")");
    }
  }
  for (const TensorShape& t : tensors) {
    if (t.name == "output.weight") tied_embeddings_ = false;
    n_layer_ = std::max(n_layer_, layer_of(t.name) + 1);
  }
}

TensorChoice TensorPlan::choose(const TensorShape& t) const {
  if (!is_quantizable(t)) return {t.type, false, "kept"};
  const Recipe& r = *opt_.recipe;
  const bool is_output = t.name == "output.weight";
  const bool is_token_embd = t.name == "token_embd.weight";
  if (is_token_embd && opt_.token_embedding_type) {
    return {*opt_.token_embedding_type, true, "--token-embedding-type"};
  }
  if (is_output && opt_.output_type) return {*opt_.output_type, true, "--output-tensor-type"};
  // A plain-float recipe converts every quantizable tensor, with no mix.
  const bool quantized_recipe = block_elems(r.base) > 1;
  if (!quantized_recipe) return {r.base, true, ""};

  TensorType type = r.base;
  std::string note;
  bool manual = false;
  for (const auto& [re, pattern_type] : patterns_) {
    if (std::regex_search(t.name, re)) {
      type = pattern_type;
      note = "--tensor-type";
      manual = true;
      break;
    }
  }
  if (!manual && !opt_.pure) {
    const std::uint64_t row = t.dims[0];
    const int layer = layer_of(t.name);
    if (is_output || (tied_embeddings_ && is_token_embd)) {
      if (opt_.output_type) {
        type = *opt_.output_type;
        note = "--output-tensor-type";
      } else if (row % block_elems(type) != 0) {
        type = TensorType::Q8_0;
        note = "output";
      } else if (type != TensorType::Q8_0) {
        type = TensorType::Q6_K;
        note = "output";
      }
    } else if (contains(t.name, "attn_v.weight") || contains(t.name, "attn_qkv.weight")) {
      const bool fused = contains(t.name, "attn_qkv.weight");
      if (fused && r.mix == Mix::kMedium) {
        type = r.base == TensorType::Q4_K ? TensorType::Q5_K : TensorType::Q6_K;
        note = "attn_qkv";
      } else if (r.mix == Mix::kMedium && more_bits(layer, n_layer_)) {
        type = TensorType::Q6_K;
        note = "more bits";
      } else if (r.mix == Mix::kSmall && r.base == TensorType::Q4_K && layer >= 0 && layer < 4) {
        type = TensorType::Q5_K;
        note = "first layers";
      }
    } else if (contains(t.name, "ffn_down")) {
      if (r.mix == Mix::kMedium && more_bits(layer, n_layer_)) {
        type = TensorType::Q6_K;
        note = "more bits";
      } else if (r.mix == Mix::kSmall && r.base == TensorType::Q4_K && layer < n_layer_ / 8) {
        type = TensorType::Q5_K;
        note = "first eighth";
      } else if (opt_.has_importance && layer < n_layer_ / 8 &&
                 (r.base == TensorType::Q4_0 || r.base == TensorType::Q5_0)) {
        type = r.base == TensorType::Q4_0 ? TensorType::Q4_1 : TensorType::Q5_1;
        note = "first eighth";
      }
    }
  }
  // Rows that are not whole blocks of the chosen type fall back.
  const std::uint64_t row = t.dims[0];
  if (block_elems(type) > 1 && row % block_elems(type) != 0) {
    const TensorType wanted = type;
    switch (type) {
      case TensorType::Q4_K:
        type = TensorType::Q5_0;
        break;
      case TensorType::Q5_K:
        type = TensorType::Q5_1;
        break;
      case TensorType::Q6_K:
        type = TensorType::Q8_0;
        break;
      default:
        break;
    }
    if (row % block_elems(type) != 0) type = TensorType::F16;
    note = "fallback: rows of " + std::to_string(row) + " are not whole " + type_name(wanted) +
           " blocks";
  }
  return {type, true, note};
}

}  // namespace folio::quant
