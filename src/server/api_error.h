// server/api_error.h: OpenAI-shaped errors with their HTTP status.
//
// Handlers throw ApiError for anything the client did wrong; the router turns
// it into {"error": {"message", "type", "param", "code"}} with `status`.
// Anything else escaping a handler is a folio bug: 500, logged with a request id.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace folio::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::optional<std::string> param = std::nullopt)
      : std::runtime_error(message), status_(status), param_(std::move(param)) {}
  int status() const { return status_; }
  const std::optional<std::string>& param() const { return param_; }
  // Seconds a client should wait before retrying (a Retry-After header);
  // set on load shedding (429 at capacity, 503 while draining).
  std::optional<int> retry_after_s() const { return retry_after_s_; }
  ApiError& retry_after(int seconds) {
    retry_after_s_ = seconds;
    return *this;
  }

 private:
  int status_;
  std::optional<std::string> param_;
  std::optional<int> retry_after_s_;
};

// OpenAI's error `type` for a status (e.g. 400 -> "BadRequestError" as vLLM,
// 401 -> "AuthenticationError", 404 -> "NotFoundError").
const char* error_type(int status);

// The JSON body for an error.
std::string error_body(int status, const std::string& message,
                       const std::optional<std::string>& param = std::nullopt);

}  // namespace folio::server
