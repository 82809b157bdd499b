// hf/safetensors.cpp: the safetensors reader (see safetensors.h).
#include "hf/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "hf/json_file.h"

namespace folio::hf {

namespace {

// The safetensors format caps the header at 100 MB; so do we.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
constexpr std::size_t kMaxDims = 8;

struct DtypeInfo {
  std::string_view name;
  Dtype dtype;
  std::size_t bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {"F64", Dtype::F64, 8},   {"F32", Dtype::F32, 4}, {"F16", Dtype::F16, 2},
    {"BF16", Dtype::BF16, 2}, {"I64", Dtype::I64, 8}, {"I32", Dtype::I32, 4},
    {"I16", Dtype::I16, 2},   {"I8", Dtype::I8, 1},   {"U8", Dtype::U8, 1},
    {"BOOL", Dtype::BOOL, 1},
};

const DtypeInfo* find_dtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

std::string_view dtype_name(Dtype d) {
  for (const auto& x : kDtypes)
    if (x.dtype == d) return x.name;
  return "?";
}

std::size_t dtype_bytes(Dtype d) {
  for (const auto& x : kDtypes)
    if (x.dtype == d) return x.bytes;
  return 0;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.mapping_ = MappedFile::open(path);
  f.bytes_ = f.mapping_.bytes();
  f.source_ = path;
  f.parse_all();
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::uint8_t> bytes, std::string what) {
  SafetensorsFile f;
  f.bytes_ = bytes;
  f.source_ = std::move(what);
  f.parse_all();
  return f;
}

void SafetensorsFile::parse_all() {
  const auto fail = [&](const std::string& msg) -> void {
    throw Error("safetensors file '" + source_ + "': " + msg);
  };
  if (bytes_.size() < 8)
    fail("is " + std::to_string(bytes_.size()) + " bytes, too short for a header");
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes_.data(), 8);
  if (header_size > kMaxHeaderBytes) {
    fail("header size " + std::to_string(header_size) + " exceeds the format's limit of 100 MB");
  }
  if (header_size > bytes_.size() - 8) {
    fail("header size " + std::to_string(header_size) + " runs past the end of the file (" +
         std::to_string(bytes_.size()) + " bytes)");
  }
  const auto* text = reinterpret_cast<const char*>(bytes_.data() + 8);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + header_size);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail("header is not a JSON object");
  const std::span<const std::uint8_t> data = bytes_.subspan(8 + header_size);

  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& item : header.items()) {
    const std::string& name = item.key();
    const nlohmann::json& v = item.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail("__metadata__ is not an object");
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) fail("__metadata__ value '" + k + "' is not a string");
        metadata_[k] = s.get<std::string>();
      }
      continue;
    }
    const auto bad = [&](const std::string& msg) { fail("tensor '" + name + "': " + msg); };
    if (!v.is_object()) bad("entry is not an object");
    const auto dt = v.find("dtype");
    const auto sh = v.find("shape");
    const auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) bad("'dtype' is missing or not a string");
    if (sh == v.end() || !sh->is_array()) bad("'shape' is missing or not an array");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned()) {
      bad("'data_offsets' is not a pair of unsigned integers");
    }
    const DtypeInfo* info = find_dtype(dt->get<std::string>());
    if (info == nullptr) bad("dtype '" + dt->get<std::string>() + "' is not supported");
    if (sh->size() > kMaxDims) bad("has " + std::to_string(sh->size()) + " dimensions");
    SafeTensor t;
    t.name = name;
    t.dtype = info->dtype;
    t.file = source_;
    std::uint64_t n = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) bad("shape holds a value that is not an unsigned integer");
      const auto x = d.get<std::uint64_t>();
      if (__builtin_mul_overflow(n, x, &n)) bad("shape overflows 64 bits");
      t.shape.push_back(x);
    }
    t.n_elements = n;
    const auto begin = (*off)[0].get<std::uint64_t>();
    const auto end = (*off)[1].get<std::uint64_t>();
    if (begin > end || end > data.size()) {
      bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
          ") lie outside the data section (" + std::to_string(data.size()) + " bytes)");
    }
    std::uint64_t want = 0;
    if (__builtin_mul_overflow(n, std::uint64_t{info->bytes}, &want) || want != end - begin) {
      bad("holds " + std::to_string(end - begin) + " bytes but " + std::string(info->name) + " x " +
          std::to_string(n) + " elements needs " + std::to_string(n * info->bytes));
    }
    t.data = data.subspan(begin, end - begin);
    if (end > begin) ranges.emplace_back(begin, end);
    tensors_.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      fail("two tensors' data overlap at byte " + std::to_string(ranges[i].first));
    }
  }
}

Checkpoint Checkpoint::open(const std::string& dir) {
  namespace fs = std::filesystem;
  Checkpoint c;
  const fs::path root(dir);
  const fs::path index_path = root / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(index_path, ec)) {
    const auto file = read_json(index_path, std::uintmax_t{256} << 20);
    if (!file) throw Error("cannot read '" + index_path.string() + "'");
    const nlohmann::json& index = file->root;
    const auto wm = index.find("weight_map");
    if (!index.is_object() || wm == index.end() || !wm->is_object()) {
      throw Error("'" + index_path.string() + "' has no 'weight_map' object");
    }
    std::map<std::string, std::set<std::string>> by_shard;
    for (const auto& [tensor, shard] : wm->items()) {
      if (!shard.is_string()) {
        throw Error("'" + index_path.string() + "': weight_map['" + tensor + "'] is not a string");
      }
      const auto s = shard.get<std::string>();
      if (s.empty() || s.find('/') != std::string::npos || s == "." || s == "..") {
        throw Error("'" + index_path.string() + "': shard name '" + s + "' is not a file name");
      }
      by_shard[s].insert(tensor);
    }
    for (const auto& [shard, names] : by_shard) {
      const fs::path p = root / shard;
      if (!fs::exists(p, ec)) {
        throw Error("'" + index_path.string() + "' names shard '" + shard +
                    "', which does not exist in " + dir);
      }
      c.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(p.string())));
      std::set<std::string> held;
      for (const auto& t : c.files_.back()->tensors()) held.insert(t.name);
      for (const auto& n : names) {
        if (held.count(n) == 0) {
          throw Error("'" + index_path.string() + "' puts tensor '" + n + "' in '" + shard +
                      "', which does not hold it");
        }
      }
    }
  } else {
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (e.path().extension() == ".safetensors") paths.push_back(e.path());
    }
    if (ec) throw Error("cannot list '" + dir + "': " + ec.message());
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) throw Error("'" + dir + "' holds no *.safetensors file");
    for (const auto& p : paths) {
      c.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(p.string())));
    }
  }
  c.index();
  return c;
}

Checkpoint Checkpoint::from_files(std::vector<SafetensorsFile> files) {
  Checkpoint c;
  for (auto& f : files) c.files_.push_back(std::make_unique<SafetensorsFile>(std::move(f)));
  c.index();
  return c;
}

void Checkpoint::index() {
  for (const auto& f : files_) {
    for (const auto& t : f->tensors()) {
      const auto [it, inserted] = by_name_.emplace(t.name, &t);
      if (!inserted) {
        throw Error("tensor '" + t.name + "' is in both '" + it->second->file + "' and '" + t.file +
                    "'");
      }
    }
  }
}

const SafeTensor* Checkpoint::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const SafeTensor& Checkpoint::require(std::string_view name) const {
  const SafeTensor* t = find(name);
  if (t == nullptr) throw Error("the checkpoint has no tensor '" + std::string(name) + "'");
  return *t;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  out.reserve(by_name_.size());
  for (const auto& [n, t] : by_name_) out.push_back(n);
  return out;
}

}  // namespace folio::hf
