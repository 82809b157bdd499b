// server/auth.h: API keys and which routes need one.
//
// Keys come from --api-key (repeatable), --api-key-file (one per line) or,
// when neither is given, $FOLIO_API_KEY. Only their SHA-256 digests are kept;
// a request's bearer token is hashed and compared with every digest in
// constant time (CRYPTO_memcmp, no early exit over the keys), so neither the
// position of a difference nor which key matched shows in the timing, and
// the length of a key is not compared at all. Keys are never logged.
//
// Every route needs a key when keys are configured, except /health (load
// balancers probe it) and /metrics unless --metrics-require-key.
// The chat page (/ and /ui/*, web_assets.h) needs none either: it holds no
// secret, and it asks the user for a key when the API answers 401.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace folio::server {

class ApiKeys {
 public:
  ApiKeys() = default;  // no keys: every request is authorized
  // Throws folio::Error for an empty key.
  explicit ApiKeys(const std::vector<std::string>& keys);

  bool enabled() const { return !digests_.empty(); }
  std::size_t size() const { return digests_.size(); }
  // True when no key is configured, or `authorization` is "Bearer <one of the keys>".
  bool authorized(std::string_view authorization) const;

 private:
  std::vector<std::array<unsigned char, 32>> digests_;
};

// The keys of a key file: one per line; blank lines and lines starting with
// '#' are skipped, surrounding whitespace is trimmed. Throws folio::Error when
// the file cannot be read or holds no key.
std::vector<std::string> read_api_key_file(const std::string& path);

// --api-key values, then the key file's; when both are empty, $FOLIO_API_KEY
// (if set and not empty). Throws folio::Error as above.
ApiKeys resolve_api_keys(const std::vector<std::string>& flags, const std::string& key_file);

// Whether `path` (no query) needs a key when keys are configured.
bool route_needs_key(std::string_view path, bool metrics_require_key);

}  // namespace folio::server
