// server/auth.h: API-key check for /v1 routes (--api-key or $FOLIO_API_KEY).
#pragma once

#include <string>
#include <string_view>

namespace folio::server {

// True when no key is configured, or `authorization` is "Bearer <key>".
// Compares in time independent of where the strings differ.
bool authorized(const std::string& api_key, std::string_view authorization);

// The key to use: `flag` when set, else $FOLIO_API_KEY, else "".
std::string resolve_api_key(const std::string& flag);

}  // namespace folio::server
