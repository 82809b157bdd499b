// base/fd_limit.cpp: setrlimit(RLIMIT_NOFILE) soft -> hard.
#include "base/fd_limit.h"

#include <sys/resource.h>

namespace folio {

std::uint64_t raise_open_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit want = lim;
    want.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) lim = want;
  }
  return static_cast<std::uint64_t>(lim.rlim_cur);
}

}  // namespace folio
