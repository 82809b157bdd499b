// python/src/request.cpp: engine outputs into the Python API's results.
#include "request.h"

#include "base/finish_reason.h"

namespace folio::python {

Result make_result(std::int32_t n) {
  Result r;
  r.outputs.resize(static_cast<std::size_t>(n));
  for (std::int32_t k = 0; k < n; ++k) r.outputs[static_cast<std::size_t>(k)].index = k;
  return r;
}

void append(Result& r, const engine::TextDelta& d) {
  Completion& c = r.outputs.at(static_cast<std::size_t>(d.index));
  c.text += d.text;
  c.token_ids.insert(c.token_ids.end(), d.token_ids.begin(), d.token_ids.end());
  for (const engine::LogprobText& lp : d.logprobs) {
    std::vector<TokenLogprob> row;
    row.reserve(lp.top.size() + 1);
    row.push_back({lp.chosen.id, lp.chosen.logprob, lp.chosen.piece});
    for (const engine::TokenText& alt : lp.top) row.push_back({alt.id, alt.logprob, alt.piece});
    c.cumulative_logprob += lp.chosen.logprob;
    c.logprobs.push_back(std::move(row));
  }
  if (d.finish != FinishReason::kNone) {
    c.finish_reason = finish_reason_name(d.finish);
    c.stop_reason = d.stop_reason;
  }
}

std::vector<std::int32_t> apply(Result& r, engine::OutputProcessor& out,
                                const std::vector<engine::RequestOutput>& items) {
  std::vector<std::int32_t> stopped;
  for (const engine::RequestOutput& o : items) {
    r.num_prompt_tokens = o.num_prompt_tokens;
    r.num_cached_tokens = o.num_cached_tokens;
    if (!o.error.empty()) r.error = o.error;
    for (const engine::TextDelta& d : out.apply(o)) {
      if (d.stop_string_hit) stopped.push_back(d.index);
      append(r, d);
    }
  }
  if (r.error.empty()) r.error = out.error();
  r.finished = out.finished();
  return stopped;
}

}  // namespace folio::python
