// spec/ngram_proposer.h: vLLM's "ngram" method (prompt lookup decoding).
//
// No model: the draft is what followed the longest earlier occurrence of the
// sequence's last n tokens (n in [prompt_lookup_min, prompt_lookup_max]) in
// its prompt or output, so it pays off when the output copies its context
// (code edits, quoting, summaries that reuse phrases). One NgramIndex per
// sequence, extended by the tokens added since the last step.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "spec/ngram_index.h"
#include "spec/proposer.h"

namespace folio::spec {

class NgramProposer final : public Proposer {
 public:
  NgramProposer(std::int32_t min_n, std::int32_t max_n) : min_n_(min_n), max_n_(max_n) {}

  const char* name() const override { return "ngram"; }
  void propose(std::span<DraftQuery> queries) override;
  void release(std::uint64_t key) override { index_.erase(key); }

  std::size_t num_sequences() const { return index_.size(); }

 private:
  std::int32_t min_n_, max_n_;
  std::unordered_map<std::uint64_t, NgramIndex> index_;
};

}  // namespace folio::spec
