// cli/kl_divergence_report.h: how `folio perplexity` prints KL divergence
// results: llama-perplexity's per-chunk table and its three statistics blocks
// (the same labels, so the two tools' outputs read side by side), or JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "eval/kl_divergence.h"

namespace folio::cli {

// The per-chunk table: its header once, then one line per chunk (running values).
void print_kld_chunk_header();
void print_kld_chunk(std::size_t chunk, const eval::KldSummary& s);

// The final blocks: perplexity, KL divergence and token probability statistics.
void print_kld_summary(const eval::KldSummary& s);

// One chunk's running values, and the final summary, as JSON objects
// (probabilities as fractions, not percent; an undefined value is null).
nlohmann::ordered_json kld_chunk_json(std::size_t chunk, const eval::KldSummary& s);
nlohmann::ordered_json kld_summary_json(const eval::KldSummary& s);

}  // namespace folio::cli
