// server/auth.cpp: API keys hashed with SHA-256, compared in constant time.
#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>

#include "base/error.h"
#include "server/web_assets.h"

namespace folio::server {
namespace {

std::array<unsigned char, 32> sha256(std::string_view s) {
  std::array<unsigned char, 32> md{};
  unsigned int len = 0;
  if (EVP_Digest(s.data(), s.size(), md.data(), &len, EVP_sha256(), nullptr) != 1 ||
      len != md.size()) {
    throw Error("SHA-256 failed (OpenSSL)");
  }
  return md;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace

ApiKeys::ApiKeys(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    if (k.empty()) throw Error("an API key is empty");
    digests_.push_back(sha256(k));
  }
}

bool ApiKeys::authorized(std::string_view authorization) const {
  if (digests_.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return false;
  const auto given = sha256(authorization.substr(kBearer.size()));
  int match = 0;
  for (const auto& d : digests_) match |= CRYPTO_memcmp(given.data(), d.data(), d.size()) == 0;
  return match != 0;
}

std::vector<std::string> read_api_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--api-key-file " + path + ": cannot be read");
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view k = trim(line);
    if (!k.empty() && k.front() != '#') keys.emplace_back(k);
  }
  if (keys.empty()) throw Error("--api-key-file " + path + " holds no key");
  return keys;
}

ApiKeys resolve_api_keys(const std::vector<std::string>& flags, const std::string& key_file) {
  std::vector<std::string> keys = flags;
  for (const std::string& k : keys) {
    if (k.empty()) throw Error("--api-key is empty");
  }
  if (!key_file.empty()) {
    const std::vector<std::string> more = read_api_key_file(key_file);
    keys.insert(keys.end(), more.begin(), more.end());
  }
  if (keys.empty()) {
    const char* env = std::getenv("FOLIO_API_KEY");
    if (env && *env) keys.emplace_back(env);
  }
  return ApiKeys(keys);
}

bool route_needs_key(std::string_view path, bool metrics_require_key) {
  if (path == "/health" || path == "/livez" || is_web_ui_path(path)) return false;
  if (path == "/metrics") return metrics_require_key;
  return true;
}

}  // namespace folio::server
