// kernels/cpu_features.cpp: CPUID detection and the test override.
#include "kernels/cpu_features.h"

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace folio::kernels {

namespace {

Isa detect() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's __builtin_cpu_supports also checks XGETBV, i.e. that the OS
  // saves the YMM registers, before reporting AVX-family features.
  __builtin_cpu_init();
  // F16C is read from CPUID leaf 1 (ECX bit 29) directly: clang before 18
  // (clang-tidy) rejects __builtin_cpu_supports("f16c"). "avx2" is required as
  // well and already implies the OS check, so the result is the same.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c) {
    return Isa::kAvx2;
  }
#endif
  return Isa::kScalar;
}

// -1: no override; otherwise the forced Isa's value.
std::atomic<int> g_override{-1};

}  // namespace

Isa detected_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() {
  const int forced = g_override.load(std::memory_order_relaxed);
  return forced < 0 ? detected_isa() : static_cast<Isa>(forced);
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
  }
  return "unknown";
}

IsaOverride::IsaOverride(Isa isa) {
  const int prev = g_override.load();
  if (prev >= 0) previous_ = static_cast<Isa>(prev);
  const Isa clamped =
      static_cast<int>(isa) <= static_cast<int>(detected_isa()) ? isa : detected_isa();
  g_override.store(static_cast<int>(clamped));
}

IsaOverride::~IsaOverride() {
  g_override.store(previous_ ? static_cast<int>(*previous_) : -1);
}

}  // namespace folio::kernels
