// model/batch.h: the tokens one forward pass processes.
//
// A batch is a flat list of tokens from one or more sequences (ragged: each
// sequence contributes any number of consecutive positions, e.g. a whole
// prompt chunk for one and a single decode token for another). Every token
// carries its absolute position and the sequence (KV cache slot) it belongs
// to; `logit_rows` names the tokens whose next-token logits are wanted
// (usually the last token of each sequence), in increasing order.
//
//   tokens     [t0  t1  t2  t3 | u0 ]      (two sequences, 5 tokens)
//   positions  [ 0   1   2   3 | 17 ]
//   seq_ids    [ 0   0   0   0 |  1 ]
//   logit_rows [ 3, 4 ]                    -> logits [2 x n_vocab]
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/token_id.h"

namespace folio::model {

struct Batch {
  std::vector<TokenId> tokens;
  std::vector<std::int32_t> positions;
  std::vector<std::int32_t> seq_ids;
  std::vector<std::int32_t> logit_rows;  // indices into tokens, strictly increasing

  std::size_t size() const { return tokens.size(); }
  bool empty() const { return tokens.empty(); }

  void clear() {
    tokens.clear();
    positions.clear();
    seq_ids.clear();
    logit_rows.clear();
  }

  // Appends one token; `want_logits` adds it to logit_rows.
  void add(TokenId token, std::int32_t pos, std::int32_t seq, bool want_logits) {
    if (want_logits) logit_rows.push_back(static_cast<std::int32_t>(tokens.size()));
    tokens.push_back(token);
    positions.push_back(pos);
    seq_ids.push_back(seq);
  }

  // Throws folio::Error when the arrays disagree in length, a token id is
  // outside [0, n_vocab), a position or sequence id is negative, or
  // logit_rows is out of range or not strictly increasing.
  void validate(std::size_t n_vocab) const;
};

}  // namespace folio::model
