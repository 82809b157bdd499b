// kernels/cpu/dispatch.cpp: the level-to-kernel table (see dispatch.h).
#include "kernels/cpu/dispatch.h"

#include <string>

#include "kernels/cpu/gemm_avx2.h"
#include "quant/traits.h"

namespace folio::kernels::cpu {

const GemmKernel* gemm_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  if (isa >= Isa::kAvx2) {
    if (const GemmKernel* k = avx2_gemm_kernel(type, bits)) return k;
  }
  return scalar_gemm_kernel(type, bits);
}

const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  if (isa >= Isa::kAvx512) {
    if (const PanelKernel* k = avx512_panel_kernel(type, bits)) return k;
  }
  if (isa >= Isa::kAvx2) return avx2_panel_kernel(type, bits);
  return nullptr;
}

const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits,
                                std::size_t n) {
  // Up to kMaxTileCols activation rows (decode of a few sequences), where the CPU prefers it
  // (decode_panels(), cpu_features.h), read each panel as one stream (gemm_avx2_panel.cpp says
  // why): the 256-bit VNNI kernels for 16-bit activations, the AVX2 ones for 8-bit. From there
  // on, and on the other CPUs, the two-panel kernels.
  if (isa >= Isa::kAvx512 && n <= kMaxTileCols && decode_panels() == DecodePanels::kOne) {
    if (bits == ActivationBits::k8) return avx2_panel_kernel(type, bits);
    if (const PanelKernel* k = avx512_panel_kernel_narrow(type)) return k;
  }
  return panel_kernel(isa, type, bits);
}

const AmxKernel* amx_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  return isa >= Isa::kAmx ? amx_kernel(type, bits) : nullptr;
}

const AttentionPrims& attention_prims(Isa isa, KvDtype dtype) {
  if (isa >= Isa::kAvx512) return avx512_attention_prims(dtype);
  return isa >= Isa::kAvx2 ? avx2_attention_prims(dtype) : scalar_attention_prims(dtype);
}

namespace {

// "Q4_0/Q4_1/..." of the repackable types `has` accepts.
template <class Has>
std::string type_list(Has has) {
  using gguf::TensorType;
  std::string out;
  for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                       TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
    if (!has(t)) continue;
    if (!out.empty()) out += '/';
    out += quant::traits(t).name;
  }
  return out;
}

// Read off the tables above, so it cannot drift from them.
std::string summarize(Isa isa, DecodePanels panels) {
  const auto panels_at = [](const PanelKernel* (*table)(gguf::TensorType, ActivationBits)) {
    return type_list([table](gguf::TensorType t) { return table(t, ActivationBits::k16); });
  };
  const std::string decode =
      isa < Isa::kAvx512 ? std::string()
      : panels == DecodePanels::kOne
          ? "vnni-256 one-panel decode (" + type_list(avx512_panel_kernel_narrow) + ")"
          : std::string("two-panel decode");
  switch (isa) {
    case Isa::kScalar:
      return "scalar tiles";
    case Isa::kAvx2:
      return "avx2 panels (" + panels_at(avx2_panel_kernel) + ") and tiles";
    case Isa::kAvx512:
      return "avx512-vnni 16-row panels (" + panels_at(avx512_panel_kernel) + "), " + decode +
             ", avx2 tiles";
    case Isa::kAmx:
      return "amx-int8 tiles for prefill (" +
             type_list([](gguf::TensorType t) { return amx_kernel(t, ActivationBits::k16); }) +
             "), avx512-vnni 16-row panels (" + panels_at(avx512_panel_kernel) + "), " + decode +
             ", avx2 tiles";
  }
  return "unknown";
}

}  // namespace

namespace {

// Level L's summary for each decode choice, built on first use only: the
// AVX-512 and AMX tables are compiled for their targets and must not be
// touched on a CPU without them.
template <Isa L>
const std::string& summary_of(DecodePanels panels) {
  static const std::string one = summarize(L, DecodePanels::kOne);
  static const std::string two = summarize(L, DecodePanels::kTwo);
  return panels == DecodePanels::kOne ? one : two;
}

}  // namespace

const std::string& gemm_kernel_summary(Isa isa) {
  const DecodePanels panels = decode_panels();
  switch (isa) {
    case Isa::kScalar:
      return summary_of<Isa::kScalar>(panels);
    case Isa::kAvx2:
      return summary_of<Isa::kAvx2>(panels);
    case Isa::kAvx512:
      return summary_of<Isa::kAvx512>(panels);
    case Isa::kAmx:
      break;
  }
  return summary_of<Isa::kAmx>(panels);
}

}  // namespace folio::kernels::cpu
