// calib/imatrix.cpp: collection and llama.cpp's imatrix GGUF format (see
// imatrix.h).
#include "calib/imatrix.h"

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace folio::calib {

namespace {

constexpr std::string_view kSums = ".in_sum2";
constexpr std::string_view kCounts = ".counts";

bool strip_suffix(std::string_view& s, std::string_view suffix) {
  if (s.size() <= suffix.size() || s.substr(s.size() - suffix.size()) != suffix) return false;
  s.remove_suffix(suffix.size());
  return true;
}

std::vector<float> f32_values(const gguf::TensorInfo& t, const std::string& path) {
  if (t.type != gguf::TensorType::F32) {
    throw Error(path + ": imatrix tensor " + std::string(t.name) + " is " +
                std::string(gguf::tensor_type_name(t.type)) + ", expected F32");
  }
  std::vector<float> v(t.n_elements);
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  for (float x : v) {
    if (!std::isfinite(x) || x < 0.0f) {
      throw Error(path + ": imatrix tensor " + std::string(t.name) +
                  " holds a negative or non-finite value");
    }
  }
  return v;
}

}  // namespace

void Imatrix::observe(std::string_view weight_name, const float* x, std::size_t rows,
                      std::size_t cols) {
  auto it = entries_.find(weight_name);
  if (it == entries_.end()) it = entries_.emplace(std::string(weight_name), ImatrixEntry{}).first;
  ImatrixEntry& e = it->second;
  if (e.sums.empty()) e.sums.assign(cols, 0.0);
  if (e.sums.size() != cols) {
    throw Error("imatrix: " + std::string(weight_name) + " had " + std::to_string(e.sums.size()) +
                " input columns, now " + std::to_string(cols));
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    for (std::size_t j = 0; j < cols; ++j) e.sums[j] += static_cast<double>(row[j]) * row[j];
  }
  e.count += rows;
}

std::vector<float> Imatrix::importance(std::string_view weight_name) const {
  const auto it = entries_.find(weight_name);
  if (it == entries_.end() || it->second.count == 0) return {};
  const ImatrixEntry& e = it->second;
  std::vector<float> out(e.sums.size());
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j] = static_cast<float>(e.sums[j] / static_cast<double>(e.count));
  }
  return out;
}

Imatrix Imatrix::read(const std::string& path) {
  const auto f = gguf::GgufFile::open(path);
  Imatrix m;
  if (const auto* ds = f.get_array("imatrix.datasets")) {
    for (const gguf::Value& v : *ds) {
      if (v.type() != gguf::ValueType::STRING)
        throw Error(path + ": imatrix.datasets is not strings");
      m.datasets.emplace_back(v.as_string("imatrix.datasets"));
    }
  }
  m.chunk_count = static_cast<std::uint32_t>(f.get_uint("imatrix.chunk_count").value_or(0));
  m.chunk_size = static_cast<std::uint32_t>(f.get_uint("imatrix.chunk_size").value_or(0));
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>, std::less<>>
      pairs;
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::string_view name = t.name;
    if (strip_suffix(name, kSums)) {
      pairs[std::string(name)].first = &t;
    } else if (strip_suffix(name, kCounts)) {
      pairs[std::string(name)].second = &t;
    } else {
      throw Error(path + ": tensor " + std::string(t.name) +
                  " is neither <weight>.in_sum2 nor <weight>.counts: not an imatrix file");
    }
  }
  if (pairs.empty()) throw Error(path + ": no imatrix entries (no <weight>.in_sum2 tensors)");
  for (const auto& [name, p] : pairs) {
    if (p.first == nullptr || p.second == nullptr) {
      throw Error(path + ": " + name + " has " +
                  (p.first ? "sums but no counts" : "counts but no sums"));
    }
    const std::vector<float> counts = f32_values(*p.second, path);
    if (counts.size() != 1) {
      throw Error(path + ": " + name + " has " + std::to_string(counts.size()) +
                  " count rows (per-expert data); folio reads dense models' imatrices only");
    }
    const std::vector<float> sums = f32_values(*p.first, path);
    ImatrixEntry e;
    e.sums.assign(sums.begin(), sums.end());
    e.count = static_cast<std::uint64_t>(std::llround(counts[0]));
    m.entries_.emplace(name, std::move(e));
  }
  return m;
}

void Imatrix::write(const std::string& path) const {
  gguf::GgufWriter w(3);
  w.add("general.type", gguf::MetaValue::string("imatrix"));
  gguf::MetaValue::Array ds;
  for (const std::string& d : datasets) ds.push_back(gguf::MetaValue::string(d));
  w.add("imatrix.datasets", gguf::MetaValue::array(gguf::ValueType::STRING, std::move(ds)));
  w.add("imatrix.chunk_count", gguf::MetaValue::integer(gguf::ValueType::UINT32, chunk_count));
  w.add("imatrix.chunk_size", gguf::MetaValue::integer(gguf::ValueType::UINT32, chunk_size));
  const auto f32_bytes = [](std::span<const float> v) {
    std::vector<std::uint8_t> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  for (const auto& [name, e] : entries_) {
    const std::vector<float> sums(e.sums.begin(), e.sums.end());
    const std::vector<float> count = {static_cast<float>(e.count)};
    w.add_tensor(name + std::string(kSums), {sums.size(), 1}, gguf::TensorType::F32,
                 f32_bytes(sums));
    w.add_tensor(name + std::string(kCounts), {1, 1}, gguf::TensorType::F32, f32_bytes(count));
  }
  w.write_file(path);
}

}  // namespace folio::calib
