// server/api_error.cpp: the OpenAI error body.
#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace folio::server {

const char* error_type(int status) {
  switch (status) {
    case 400:
      return "BadRequestError";
    case 401:
      return "AuthenticationError";
    case 403:
      return "PermissionDeniedError";
    case 404:
      return "NotFoundError";
    case 405:
      return "MethodNotAllowedError";
    case 408:
      return "RequestTimeoutError";
    case 413:
      return "RequestTooLargeError";
    case 429:
      return "RateLimitError";
    case 431:
      return "RequestHeaderFieldsTooLargeError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return status >= 500 ? "InternalServerError" : "BadRequestError";
  }
}

std::string error_body(int status, const std::string& message,
                       const std::optional<std::string>& param) {
  nlohmann::json e = {{"message", message},
                      {"type", error_type(status)},
                      {"param", param ? nlohmann::json(*param) : nlohmann::json(nullptr)},
                      {"code", status}};
  // Messages may quote user input: never throw on invalid UTF-8, replace it.
  return nlohmann::json{{"error", e}}.dump(-1, ' ', false,
                                           nlohmann::json::error_handler_t::replace);
}

}  // namespace folio::server
