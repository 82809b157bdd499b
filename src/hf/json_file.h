// hf/json_file.h: the JSON files of a checkpoint directory, read with bounded
// size and nesting, and accessed through Node, which names the file and the
// field's path (e.g. "tokenizer.json: added_tokens[3].id: expected an
// integer") in every error. Used by the tokenizer conversion.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace folio::hf {

inline constexpr int kMaxJsonDepth = 64;  // checkpoint files nest 6 deep

struct JsonFile {
  std::string path;
  nlohmann::json root;
};

// A JSON value, the file it came from and its path inside (e.g. "added_tokens[3].id").
class Node {
 public:
  Node(const nlohmann::json& v, const std::string& file, std::string path)
      : v_(&v), file_(&file), path_(std::move(path)) {}
  explicit Node(const JsonFile& f) : Node(f.root, f.path, "") {}

  const nlohmann::json& value() const { return *v_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  std::string type_name() const { return v_->type_name(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(*file_ + ": " + (path_.empty() ? "" : path_ + ": ") + what);
  }

  // The member `key`, or nullopt when it is absent or null.
  std::optional<Node> get(const std::string& key) const {
    if (!v_->is_object()) fail("expected an object, found " + type_name());
    const auto it = v_->find(key);
    if (it == v_->end() || it->is_null()) return std::nullopt;
    return Node(*it, *file_, path_.empty() ? key : path_ + "." + key);
  }
  Node at(const std::string& key) const {
    auto n = get(key);
    if (!n) Node(*v_, *file_, path_.empty() ? key : path_ + "." + key).fail("missing");
    return *n;
  }
  std::string str_or(const std::string& key, const std::string& fallback) const {
    const auto n = get(key);
    return n ? n->str() : fallback;
  }
  bool bool_or(const std::string& key, bool fallback) const {
    const auto n = get(key);
    return n ? n->boolean() : fallback;
  }

  std::size_t array_size() const {
    if (!v_->is_array()) fail("expected an array, found " + type_name());
    return v_->size();
  }
  Node operator[](std::size_t i) const {
    if (i >= array_size()) fail("has no element " + std::to_string(i));
    return Node((*v_)[i], *file_, path_ + "[" + std::to_string(i) + "]");
  }
  std::vector<Node> elements() const {
    std::vector<Node> out;
    for (std::size_t i = 0; i < array_size(); ++i) out.push_back((*this)[i]);
    return out;
  }
  // A "Sequence" (of pre-tokenizers, normalizers, processors) as its list; else just this one.
  std::vector<Node> chain(const std::string& list_key) const {
    if (at("type").str() != "Sequence") return {*this};
    std::vector<Node> out = at(list_key).elements();
    if (out.empty()) at(list_key).fail("empty Sequence");
    return out;
  }

  std::string str() const {
    if (!v_->is_string()) fail("expected a string, found " + type_name());
    return v_->get<std::string>();
  }
  bool boolean() const {
    if (!v_->is_boolean()) fail("expected true or false, found " + type_name());
    return v_->get<bool>();
  }
  std::int64_t integer() const {
    if (!v_->is_number_integer()) fail("expected an integer, found " + type_name());
    if (v_->is_number_unsigned() && v_->get<std::uint64_t>() > INT64_MAX) fail("out of range");
    return v_->get<std::int64_t>();
  }
  double number() const {
    if (!v_->is_number()) fail("expected a number, found " + type_name());
    return v_->get<double>();
  }
  std::string dump(std::size_t max_chars = 200) const {
    std::string s = v_->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return s.size() > max_chars ? s.substr(0, max_chars) + "..." : s;
  }

 private:
  const nlohmann::json* v_;
  const std::string* file_;
  std::string path_;
};

// A whole file of at most `max_bytes`; nullopt when it does not exist.
std::optional<std::string> read_text(const std::filesystem::path& p, std::uintmax_t max_bytes);
// A JSON object file (size and nesting checked before parsing); nullopt when absent.
std::optional<JsonFile> read_json(const std::filesystem::path& p, std::uintmax_t max_bytes);

}  // namespace folio::hf
