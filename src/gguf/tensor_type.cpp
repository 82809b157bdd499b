#include "gguf/tensor_type.h"

#include <array>

namespace folio::gguf {

namespace {

struct Row {
  std::uint32_t id;
  TensorTypeLayout layout;
};

// Layouts as defined by ggml (ggml.c type_traits): block size and bytes per block.
constexpr std::array kRows = {
    Row{0, {"F32", 1, 4}},         Row{1, {"F16", 1, 2}},         Row{2, {"Q4_0", 32, 18}},
    Row{3, {"Q4_1", 32, 20}},      Row{6, {"Q5_0", 32, 22}},      Row{7, {"Q5_1", 32, 24}},
    Row{8, {"Q8_0", 32, 34}},      Row{9, {"Q8_1", 32, 36}},      Row{10, {"Q2_K", 256, 84}},
    Row{11, {"Q3_K", 256, 110}},   Row{12, {"Q4_K", 256, 144}},   Row{13, {"Q5_K", 256, 176}},
    Row{14, {"Q6_K", 256, 210}},   Row{15, {"Q8_K", 256, 292}},   Row{16, {"IQ2_XXS", 256, 66}},
    Row{17, {"IQ2_XS", 256, 74}},  Row{18, {"IQ3_XXS", 256, 98}}, Row{19, {"IQ1_S", 256, 50}},
    Row{20, {"IQ4_NL", 32, 18}},   Row{21, {"IQ3_S", 256, 110}},  Row{22, {"IQ2_S", 256, 82}},
    Row{23, {"IQ4_XS", 256, 136}}, Row{24, {"I8", 1, 1}},         Row{25, {"I16", 1, 2}},
    Row{26, {"I32", 1, 4}},        Row{27, {"I64", 1, 8}},        Row{28, {"F64", 1, 8}},
    Row{29, {"IQ1_M", 256, 56}},   Row{30, {"BF16", 1, 2}},       Row{34, {"TQ1_0", 256, 54}},
    Row{35, {"TQ2_0", 256, 66}},   Row{39, {"MXFP4", 32, 17}},
};

}  // namespace

std::optional<TensorTypeLayout> tensor_type_layout(std::uint32_t type_id) {
  for (const Row& r : kRows) {
    if (r.id == type_id) return r.layout;
  }
  return std::nullopt;
}

std::string_view tensor_type_name(TensorType type) {
  auto layout = tensor_type_layout(static_cast<std::uint32_t>(type));
  return layout ? layout->name : std::string_view("type#?");
}

}  // namespace folio::gguf
