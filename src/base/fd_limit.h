// base/fd_limit.h: the process's open-file limit, raised for servers and load
// generators that hold one socket per connection.
#pragma once

#include <cstdint>

namespace folio {

// Raises the soft RLIMIT_NOFILE to the hard limit (many systems default to a
// soft 1024, too few for 1,000 open streams) and returns the soft limit now
// in force. Never lowers it; returns the current limit when raising fails.
std::uint64_t raise_open_file_limit();

}  // namespace folio
