// loadgen/prompts.h: the requests a serving benchmark sends.
//
// Random prompts follow vLLM's random dataset: each prompt is a list of token
// ids (so no tokenizer is needed and every server sees identical input) with
// a length drawn uniformly from [len*(1-r), len*(1+r)], and so is each
// output length. Ids come from [token_lo, token_hi): ordinary vocabulary
// pieces in every tokenizer folio supports, clear of the special tokens at
// the start of a vocabulary and the added tokens at its end. A dataset is
// JSONL, one {"prompt": "text" | [ids], "max_tokens": n} per line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace folio::loadgen {

struct Prompt {
  nlohmann::json prompt;       // a string or an array of token ids, sent as is
  std::int64_t prompt_tokens;  // ids sent (0 for text: the server's usage says)
  std::int64_t max_tokens;
};

struct RandomPromptConfig {
  std::size_t num_prompts = 1000;
  int input_len = 1024, output_len = 128;
  double range_ratio = 0.0;
  std::uint64_t seed = 0;
  std::int32_t token_lo = 1000, token_hi = 10000;
};

// Throws folio::Error naming the flag for unusable values.
void validate(const RandomPromptConfig& c);

// Deterministic in the config (seed included).
std::vector<Prompt> random_prompts(const RandomPromptConfig& c);

// Up to `max_prompts` requests from a JSONL file; lines without max_tokens
// get `default_max_tokens`. Throws folio::Error naming the file and line.
std::vector<Prompt> dataset_prompts(const std::string& path, std::size_t max_prompts,
                                    std::int64_t default_max_tokens);

}  // namespace folio::loadgen
