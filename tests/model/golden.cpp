#include "golden.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gguf/gguf_file.h"

namespace folio::test {

namespace {

std::string source_dir() {
  const char* env = std::getenv("FOLIO_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : FOLIO_SOURCE_DIR;
}

std::vector<std::uint32_t> read_words(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + " (run tools/gen_reference_logits.py)");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % 4 != 0) throw std::runtime_error(path + ": size is not a multiple of 4");
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

template <class T>
std::vector<T> slice(const std::vector<std::uint32_t>& words, std::size_t off, std::size_t n) {
  if (off + n > words.size()) throw std::runtime_error("golden .bin: slice out of range");
  std::vector<T> out(n);
  std::memcpy(out.data(), words.data() + off, n * 4);
  return out;
}

}  // namespace

std::vector<std::int32_t> GoldenCase::sequence() const {
  std::vector<std::int32_t> s = prompt;
  s.insert(s.end(), greedy.begin(), greedy.end());
  return s;
}

std::string model_path(const std::string& file) {
  std::string p = source_dir() + "/models/" + file;
  if (!std::filesystem::exists(p)) {
    throw std::runtime_error("model " + p + " is missing: run scripts/setup to download it");
  }
  return p;
}

const model::Model& shared_model(model::Precision precision, const std::string& file) {
  static std::map<std::string, std::unique_ptr<gguf::GgufFile>> files;
  static std::map<std::pair<std::string, model::Precision>, std::unique_ptr<model::Model>> models;
  auto& f = files[file];
  if (!f) f = std::make_unique<gguf::GgufFile>(gguf::GgufFile::open(model_path(file)));
  auto& m = models[{file, precision}];
  if (!m) m = std::make_unique<model::Model>(model::Model::load(*f, {precision}));
  return *m;
}

Golden load_golden(const std::string& stem) {
  const std::string base = source_dir() + "/tests/data/model/" + stem;
  std::ifstream in(base + ".json");
  if (!in) throw std::runtime_error("cannot open " + base + ".json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const std::vector<std::uint32_t> words = read_words(base + ".bin");
  Golden g;
  g.model = j.at("model");
  g.vocab = j.at("vocab_size");
  g.top_k = j.at("top_k");
  for (const auto& jc : j.at("cases")) {
    GoldenCase c;
    c.name = jc.at("name");
    c.prompt = jc.at("prompt_ids").get<std::vector<std::int32_t>>();
    c.greedy = jc.at("greedy_ids").get<std::vector<std::int32_t>>();
    c.min_margin = jc.at("greedy_min_margin");
    const std::size_t n = jc.at("n_positions");
    if (n != c.n_positions()) throw std::runtime_error(c.name + ": n_positions mismatch");
    c.topk_ids = slice<std::int32_t>(words, jc.at("topk_ids"), n * g.top_k);
    c.topk_logits = slice<float>(words, jc.at("topk_logits"), n * g.top_k);
    c.lse = slice<float>(words, jc.at("lse"), n);
    for (const auto& r : jc.at("full_rows")) {
      c.full_rows.push_back({r.at("pos"), slice<float>(words, r.at("offset"), g.vocab)});
    }
    g.cases.push_back(std::move(c));
  }
  return g;
}

PositionStats compare_position(const Golden& g, const GoldenCase& c, std::size_t pos,
                               const float* f) {
  const std::size_t k = g.top_k, v = g.vocab;
  const std::int32_t* ids = &c.topk_ids[pos * k];
  const float* ref = &c.topk_logits[pos * k];
  const double ref_lse = c.lse[pos];

  const std::size_t argmax = static_cast<std::size_t>(std::max_element(f, f + v) - f);
  double mx = f[argmax], sum = 0;
  for (std::size_t i = 0; i < v; ++i) sum += std::exp(static_cast<double>(f[i]) - mx);
  const double f_lse = mx + std::log(sum);

  PositionStats s{0, 0, static_cast<std::int32_t>(argmax) == ids[0],
                  static_cast<std::int32_t>(argmax)};
  const auto full = std::find_if(c.full_rows.begin(), c.full_rows.end(),
                                 [&](const GoldenCase::FullRow& r) { return r.pos == pos; });
  if (full != c.full_rows.end()) {
    for (std::size_t i = 0; i < v; ++i) {
      const double lp = full->logits[i] - ref_lse, lq = f[i] - f_lse;
      s.max_abs_diff = std::max(s.max_abs_diff, std::abs(double{full->logits[i]} - f[i]));
      s.kl += std::exp(lp) * (lp - lq);
    }
    return s;
  }
  double p_top = 0, q_top = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double fi = f[static_cast<std::size_t>(ids[i])];
    const double lp = ref[i] - ref_lse, lq = fi - f_lse;
    s.max_abs_diff = std::max(s.max_abs_diff, std::abs(ref[i] - fi));
    s.kl += std::exp(lp) * (lp - lq);
    p_top += std::exp(lp);
    q_top += std::exp(lq);
  }
  // Everything outside the top K as one outcome: a lower bound of the full KL
  // that is tight when the top K hold almost all of the mass.
  const double p_rest = std::max(0.0, 1 - p_top), q_rest = std::max(1e-30, 1 - q_top);
  if (p_rest > 1e-12) s.kl += p_rest * std::log(p_rest / q_rest);
  return s;
}

}  // namespace folio::test
