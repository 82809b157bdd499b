// loadgen/prompts.cpp: random and JSONL request sets (see prompts.h).
#include "loadgen/prompts.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "base/error.h"

namespace folio::loadgen {

void validate(const RandomPromptConfig& c) {
  if (c.num_prompts == 0) throw Error("--num-prompts must be at least 1");
  if (c.input_len < 1) throw Error("--random-input-len must be at least 1");
  if (c.output_len < 1) throw Error("--random-output-len must be at least 1");
  if (!(c.range_ratio >= 0 && c.range_ratio < 1))
    throw Error("--random-range-ratio must be in [0, 1)");
  if (c.token_lo < 0 || c.token_hi <= c.token_lo)
    throw Error("--random-token-range: need 0 <= LO < HI");
  // Every prompt is built up front (ids, JSON, request body): bound the total.
  constexpr double kMaxPromptTokens = 1 << 26;
  if (c.num_prompts > (1u << 20) || c.input_len > (1 << 22) || c.output_len > (1 << 22) ||
      static_cast<double>(c.num_prompts) * c.input_len * (1 + c.range_ratio) > kMaxPromptTokens)
    throw Error(
        "--num-prompts x --random-input-len is too large to prepare (at most ~67M prompt "
        "tokens, 1M prompts, 4M tokens per prompt)");
}

namespace {

// Uniform in [floor(len*(1-r)), ceil(len*(1+r))], at least 1 (vLLM's bounds).
int draw_len(std::mt19937_64& rng, int len, double r) {
  const int lo = std::max(1, static_cast<int>(std::floor(len * (1 - r))));
  const int hi = std::max(lo, static_cast<int>(std::ceil(len * (1 + r))));
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

}  // namespace

std::vector<Prompt> random_prompts(const RandomPromptConfig& c) {
  validate(c);
  std::mt19937_64 rng(c.seed);
  std::uniform_int_distribution<std::int32_t> id(c.token_lo, c.token_hi - 1);
  std::vector<Prompt> out;
  out.reserve(c.num_prompts);
  for (std::size_t i = 0; i < c.num_prompts; ++i) {
    const int in = draw_len(rng, c.input_len, c.range_ratio);
    const int gen = draw_len(rng, c.output_len, c.range_ratio);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(in));
    for (auto& t : ids) t = id(rng);
    out.push_back({nlohmann::json(ids), in, gen});
  }
  return out;
}

namespace {

Prompt parse_line(const std::string& line, std::int64_t default_max_tokens) {
  const auto j = nlohmann::json::parse(line);
  if (!j.is_object()) throw Error("expected a JSON object");
  const auto p = j.find("prompt");
  if (p == j.end()) throw Error("no \"prompt\"");
  Prompt out{*p, 0, default_max_tokens};
  if (p->is_array()) {
    for (const auto& t : *p)
      if (!t.is_number_integer() || t.get<std::int64_t>() < 0)
        throw Error("\"prompt\" must be a string or a list of token ids >= 0");
    out.prompt_tokens = static_cast<std::int64_t>(p->size());
  } else if (!p->is_string()) {
    throw Error("\"prompt\" must be a string or a list of token ids");
  }
  if (const auto m = j.find("max_tokens"); m != j.end()) {
    if (!m->is_number_integer() || m->get<std::int64_t>() < 1)
      throw Error("\"max_tokens\" must be an integer >= 1");
    out.max_tokens = m->get<std::int64_t>();
  }
  return out;
}

}  // namespace

std::vector<Prompt> dataset_prompts(const std::string& path, std::size_t max_prompts,
                                    std::int64_t default_max_tokens) {
  std::ifstream in(path);
  if (!in) throw Error("--dataset-path: cannot open " + path);
  std::vector<Prompt> out;
  std::string line;
  for (int no = 1; out.size() < max_prompts && std::getline(in, line); ++no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(parse_line(line, default_max_tokens));
    } catch (const std::exception& e) {
      throw Error("--dataset-path " + path + " line " + std::to_string(no) + ": " + e.what());
    }
  }
  if (out.empty()) throw Error("--dataset-path " + path + ": no requests in the file");
  return out;
}

}  // namespace folio::loadgen
