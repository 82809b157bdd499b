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
//
// `windows` (empty, or one per token) puts a token under a sink + window
// attention policy (base/attention_window.h); every token of one sequence
// in a batch carries the same one.
//
// `pools` asks for hidden states: for each range of consecutive tokens, the
// sum of their final hidden states after the output norm (what the output
// head reads), in Workspace::pooled [pools.size() x n_embd]. The engine's
// mean pooling (routing heads, /v1/embeddings) adds these up over chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/attention_window.h"
#include "base/token_id.h"

namespace folio::model {

// Tokens [first, first + count) of a batch.
struct TokenRange {
  std::int32_t first = 0;
  std::int32_t count = 0;
};

struct Batch {
  std::vector<TokenId> tokens;
  std::vector<std::int32_t> positions;
  std::vector<std::int32_t> seq_ids;
  std::vector<std::int32_t> logit_rows;  // indices into tokens, strictly increasing
  std::vector<AttentionWindow> windows;  // empty: full attention for all
  std::vector<TokenRange> pools;         // hidden-state sums wanted (see above)

  std::size_t size() const { return tokens.size(); }
  bool empty() const { return tokens.empty(); }

  void clear() {
    tokens.clear();
    positions.clear();
    seq_ids.clear();
    logit_rows.clear();
    windows.clear();
    pools.clear();
  }

  // Appends one token; `want_logits` adds it to logit_rows. A window that
  // is on starts `windows` (earlier tokens get "off").
  void add(TokenId token, std::int32_t pos, std::int32_t seq, bool want_logits,
           const AttentionWindow& window = {}) {
    if (want_logits) logit_rows.push_back(static_cast<std::int32_t>(tokens.size()));
    if (window.on() || !windows.empty()) {
      windows.resize(tokens.size());  // tokens before the first window: off
      windows.push_back(window);
    }
    tokens.push_back(token);
    positions.push_back(pos);
    seq_ids.push_back(seq);
  }
  // The policy of token t.
  AttentionWindow window(std::size_t t) const {
    return windows.empty() ? AttentionWindow{} : windows[t];
  }

  // Throws folio::Error when the arrays disagree in length, a token id is
  // outside [0, n_vocab), a position or sequence id is negative, or
  // logit_rows is out of range or not strictly increasing, or a pool range
  // is empty or outside the tokens.
  void validate(std::size_t n_vocab) const;
};

}  // namespace folio::model
