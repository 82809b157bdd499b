// tests/tokenizer/test_util.h: helpers shared by the tokenizer tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace folio::tokenizer::testing {

inline std::string shared_dir() {
  return FOLIO_SHARED_DIR;
}
inline std::string source_dir() {
  return FOLIO_SOURCE_DIR;
}
inline std::string vectors_dir() {
  return shared_dir() + "/tokenizer-vectors";
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline bool file_exists(const std::string& path) {
  return std::ifstream(path).good();
}

inline Tokenizer load_tokenizer(const std::string& path) {
  return Tokenizer::from_gguf(gguf::GgufFile::open(path));
}

inline std::vector<TokenId> parse_ids(const std::string& line) {
  std::vector<TokenId> ids;
  std::istringstream ss(line);
  long long v;
  while (ss >> v) ids.push_back(static_cast<TokenId>(v));
  return ids;
}

inline std::string join_ids(const std::vector<TokenId>& ids) {
  std::string s;
  for (auto id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace folio::tokenizer::testing
