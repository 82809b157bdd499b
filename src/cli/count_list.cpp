#include "cli/count_list.h"

#include <charconv>
#include <sstream>

#include "base/error.h"

namespace folio::cli {

std::vector<int> parse_count_list(const std::string& flag, const std::string& text,
                                  const char* what) {
  std::vector<int> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    int n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (ec != std::errc{} || end != item.data() + item.size() || n < 1 || n > 4096) {
      throw Error(flag + " '" + text + "': '" + item + "' is not a " + what +
                  " from 1 to 4096 (expected a comma list such as 1,8,32)");
    }
    out.push_back(n);
  }
  if (out.empty()) throw Error(flag + " '" + text + "': no " + what + "s");
  return out;
}

}  // namespace folio::cli
