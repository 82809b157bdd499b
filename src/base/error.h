// base/error.h: folio's error type and invariant checks.
//
// User-facing failures (bad file, bad flag, bad request) throw folio::Error
// with a message a user can act on. FOLIO_CHECK guards internal invariants:
// a failed check is a bug in folio, reported with file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace folio {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] void check_failed(const char* expr, const char* file, int line,
                               const std::string& detail);

}  // namespace folio

#define FOLIO_CHECK(cond, ...)                                                               \
  do {                                                                                       \
    if (!(cond)) ::folio::check_failed(#cond, __FILE__, __LINE__, std::string{__VA_ARGS__}); \
  } while (0)
