#include "spec/ngram_proposer.h"

namespace folio::spec {

void NgramProposer::propose(std::span<DraftQuery> queries) {
  for (DraftQuery& q : queries) {
    q.draft.clear();
    auto it = index_.try_emplace(q.key, min_n_, max_n_).first;
    it->second.extend(q.tokens);
    it->second.propose(q.tokens, q.max_tokens, q.draft);
  }
}

}  // namespace folio::spec
