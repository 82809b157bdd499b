// tests/kernels/isa_levels.h: the instruction-set levels this host can run,
// so kernel tests cover every one of them (and say which they could not).
#pragma once

#include <vector>

#include "kernels/cpu_features.h"

namespace folio::kernels::testing {

// Every level up to detected_isa(), lowest first.
inline std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas) {
    if (isa <= detected_isa()) out.push_back(isa);
  }
  return out;
}

}  // namespace folio::kernels::testing
