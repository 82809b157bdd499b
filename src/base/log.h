// base/log.h: a small leveled logger writing to an injected sink.
//
// No global state beyond the process-wide default sink (stderr), which
// callers may replace; libraries take a Logger& where they log.
#pragma once

#include <cstdio>
#include <string_view>

namespace folio {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

class Logger {
 public:
  explicit Logger(std::FILE* out = stderr, LogLevel min = LogLevel::kInfo) : out_(out), min_(min) {}
  void set_level(LogLevel level) { min_ = level; }
  bool enabled(LogLevel level) const { return level >= min_; }
  void log(LogLevel level, std::string_view message) const;
  void info(std::string_view m) const { log(LogLevel::kInfo, m); }
  void warn(std::string_view m) const { log(LogLevel::kWarn, m); }
  void error(std::string_view m) const { log(LogLevel::kError, m); }
  void debug(std::string_view m) const { log(LogLevel::kDebug, m); }

 private:
  std::FILE* out_;
  LogLevel min_;
};

}  // namespace folio
