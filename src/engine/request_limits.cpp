#include "engine/request_limits.h"

#include <string>

#include "base/error.h"

namespace folio::engine {

namespace {

std::string str(std::int64_t v) {
  return std::to_string(v);
}

}  // namespace

RequestLimits::RequestLimits(const Values& v) : v_(v) {
  if (v.max_model_len < 1 || v.max_num_seqs < 1 || v.num_kv_blocks < 1 || v.block_size < 1 ||
      v.vocab_size < 1 || v.max_step_tokens < 1) {
    throw Error(
        "request limits need a positive max-model-len, max-num-seqs, KV pool and vocabulary");
  }
}

AdmittedRequest RequestLimits::admit(EngineRequest r, double now) const {
  const auto prompt = static_cast<std::int64_t>(r.prompt.size());
  if (prompt == 0) throw Error("The decoder prompt cannot be empty");
  for (TokenId t : r.prompt) {
    if (t < 0 || t >= v_.vocab_size) {
      throw Error("Token id " + str(t) + " is out of vocabulary (the model has " +
                  str(v_.vocab_size) + " tokens)");
    }
  }
  if (r.n < 1 || r.n > v_.max_num_seqs) {
    throw Error("n = " + str(r.n) + " must be between 1 and --max-num-seqs (" +
                str(v_.max_num_seqs) + ")");
  }
  if (r.pool) {
    if (r.n != 1) throw Error("a pooling request has one sample (n = 1), got n = " + str(r.n));
    if (!r.params.max_tokens) r.params.max_tokens = 1;
    if (*r.params.max_tokens != 1) {
      throw Error("a pooling request computes its prompt and one token (max_tokens = 1), got " +
                  str(*r.params.max_tokens));
    }
  }
  const std::int64_t len = v_.max_model_len;
  if (prompt >= len) {  // room is needed for one output token
    throw Error("This model's maximum context length is " + str(len) +
                " tokens. However, your request has " + str(prompt) +
                " input tokens. Please reduce the length of the input messages.");
  }
  if (r.params.max_tokens && prompt + *r.params.max_tokens > len) {
    const std::int64_t m = *r.params.max_tokens;
    throw Error("'max_tokens' or 'max_completion_tokens' is too large: " + str(m) +
                ". This model's maximum context length is " + str(len) +
                " tokens and your request has " + str(prompt) + " input tokens (" + str(m) + " > " +
                str(len) + " - " + str(prompt) + ").");
  }
  if (!r.params.max_tokens) r.params.max_tokens = static_cast<std::int32_t>(len - prompt);
  if (!r.attention_window) r.attention_window = v_.default_window;
  const AttentionWindow w = *r.attention_window;
  if (w.window < 0) throw Error("attention_window must be >= 0 (0: off), got " + str(w.window));
  if (w.sinks < 0 || (w.on() && w.sinks > w.window)) {
    throw Error("attention_sinks must be between 0 and attention_window (" + str(w.window) +
                "), got " + str(w.sinks));
  }
  if (!w.on()) r.attention_window = AttentionWindow{};  // sinks mean nothing without a window
  r.params.validate(v_.vocab_size);  // with max_tokens known (min_tokens <= max_tokens)
  // The last sampled token is never fed back, so a sequence holds at most
  // prompt + max_tokens - 1 positions; they must fit in the pool alone.
  const std::int64_t positions = prompt + *r.params.max_tokens - 1;
  const std::int64_t blocks =
      kv::max_blocks_per_seq(v_.kv_groups, v_.block_size, positions, v_.max_step_tokens, w);
  if (blocks > v_.num_kv_blocks) {
    throw Error("request needs " + str(blocks) + " KV blocks (" + str(positions) +
                " positions) but the KV cache holds only " + str(v_.num_kv_blocks) +
                " blocks; raise --kv-cache-memory or lower max_tokens");
  }
  if (r.arrival_time == 0) r.arrival_time = now;
  return AdmittedRequest(std::move(r));
}

}  // namespace folio::engine
