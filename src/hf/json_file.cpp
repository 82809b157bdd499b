// hf/json_file.cpp: bounded reading of a checkpoint's JSON files (see json_file.h).
#include "hf/json_file.h"

#include <fstream>

namespace folio::hf {

namespace {

// Nesting depth outside strings, checked before parsing, so hostile input stays shallow.
void check_depth(std::string_view text, const std::string& path) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      i += c == '\\' ? 1 : 0;
      in_string = c != '"';
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > kMaxJsonDepth) {
      throw Error(path + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                  " levels at byte " + std::to_string(i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

std::optional<std::string> read_text(const std::filesystem::path& p, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  const std::string path = p.string();
  if (!std::filesystem::is_regular_file(p, ec)) throw Error(path + ": not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec) throw Error(path + ": cannot read its size: " + ec.message());
  if (size > max_bytes) {
    throw Error(path + ": " + std::to_string(size) + " bytes is more than the " +
                std::to_string(max_bytes) + " accepted");
  }
  std::ifstream in(p, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    throw Error(path + ": cannot read the file");
  }
  return text;
}

std::optional<JsonFile> read_json(const std::filesystem::path& p, std::uintmax_t max_bytes) {
  const auto text = read_text(p, max_bytes);
  if (!text) return std::nullopt;
  JsonFile f{p.string(), {}};
  check_depth(*text, f.path);
  try {
    f.root = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(f.path + ": invalid JSON: " + e.what());
  }
  if (!f.root.is_object()) throw Error(f.path + ": expected a JSON object at the top level");
  return f;
}

}  // namespace folio::hf
