// cli/count_list.h: a comma list of counts given to a flag ("1,8,32"), as
// `bench throughput --decode-concurrency` and `bench spec --concurrency`
// take it.
#pragma once

#include <string>
#include <vector>

namespace folio::cli {

// "1,8,32" -> {1, 8, 32}. Each item must be a whole number in [1, 4096];
// anything else (or an empty list) throws folio::Error naming `flag` and
// calling an item a `what` ("sequence count", "request count").
std::vector<int> parse_count_list(const std::string& flag, const std::string& text,
                                  const char* what);

}  // namespace folio::cli
