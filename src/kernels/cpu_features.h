// kernels/cpu_features.h: which instruction-set level the fast kernels use.
//
// Detected once from CPUID (AVX2 needs AVX2 + FMA + F16C and OS support for
// the YMM state); every dispatcher asks active_isa(). Tests may force a lower
// level with IsaOverride to exercise the scalar fallback on an AVX2 machine.
#pragma once

#include <optional>
#include <string_view>

namespace folio::kernels {

enum class Isa { kScalar, kAvx2 };

// What this CPU supports (computed once, thread-safe).
Isa detected_isa();

// What the kernels use now: detected_isa(), unless an override is active.
Isa active_isa();

std::string_view isa_name(Isa isa);

// Test hook: forces `isa` (clamped to what the CPU supports) while alive.
// Not thread-safe against concurrent kernel calls; tests only.
class IsaOverride {
 public:
  explicit IsaOverride(Isa isa);
  ~IsaOverride();
  IsaOverride(const IsaOverride&) = delete;
  IsaOverride& operator=(const IsaOverride&) = delete;

 private:
  std::optional<Isa> previous_;
};

}  // namespace folio::kernels
