// server/auth.cpp: bearer-token comparison.
#include "server/auth.h"

#include <cstdlib>

namespace folio::server {

bool authorized(const std::string& api_key, std::string_view authorization) {
  if (api_key.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size() || authorization.substr(0, kBearer.size()) != kBearer) {
    return false;
  }
  const std::string_view given = authorization.substr(kBearer.size());
  // Constant-time over the key length: no early exit reveals a matching prefix.
  unsigned diff = given.size() == api_key.size() ? 0u : 1u;
  for (std::size_t i = 0; i < api_key.size(); ++i) {
    const char g = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned>(static_cast<unsigned char>(g ^ api_key[i]));
  }
  return diff == 0;
}

std::string resolve_api_key(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("FOLIO_API_KEY");
  return env ? env : "";
}

}  // namespace folio::server
