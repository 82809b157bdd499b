#include "base/error.h"

#include <cstdio>
#include <cstdlib>

namespace folio {

void check_failed(const char* expr, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "folio: internal check failed: %s at %s:%d%s%s\n", expr, file, line,
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

}  // namespace folio
