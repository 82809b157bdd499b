#include "base/log.h"

namespace folio {

void Logger::log(LogLevel level, std::string_view message) const {
  if (!enabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  std::fprintf(out_, "[%s] %.*s\n", kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace folio
