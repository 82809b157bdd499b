// fuzz/sync_engine.cpp: the answer of the synchronous fake engine.
#include "sync_engine.h"

#include <algorithm>

#include "base/error.h"

namespace folio::fuzz {

SyncEngine::SyncEngine(const engine::RequestLimits::Values& limits, TokenId eos,
                       std::int32_t hidden_size)
    : limits_(limits), eos_(eos), hidden_size_(hidden_size) {}

std::shared_ptr<engine::OutputChannel> SyncEngine::submit(engine::AdmittedRequest admitted) {
  const engine::EngineRequest r = std::move(admitted).take();
  FOLIO_CHECK(r.params.max_tokens.has_value(), "admitted requests have max_tokens");
  const std::int32_t vocab = limits_.values().vocab_size;
  engine::RequestOutput item;
  item.request_id = r.id;
  item.num_prompt_tokens = static_cast<std::int32_t>(r.prompt.size());
  item.finished = true;
  item.timing = engine::RequestTiming{};
  // The last kTailTokens of the prompt: the end of the last message.
  const std::size_t tail = r.prompt.size() > kTailTokens ? r.prompt.size() - kTailTokens : 0;
  for (std::int32_t s = 0; s < r.n; ++s) {
    engine::SampleDelta d;
    d.index = s;
    const std::int32_t max = *r.params.max_tokens;
    const std::int32_t count = std::min(max, kMaxAnswerTokens);
    for (std::int32_t i = 0; i < count; ++i) {
      const bool cut = i + 1 == count && count < max;
      const std::size_t at = tail + static_cast<std::size_t>(s + i);
      const TokenId tok = cut ? eos_ : r.prompt[at % r.prompt.size()];
      d.token_ids.push_back(tok);
      if (r.params.logprobs) {
        sampling::Logprobs lp{{tok, -0.5F}, {}};
        for (std::int32_t k = 0; k < *r.params.logprobs; ++k)
          lp.top.push_back({(tok + k) % vocab, -0.5F - static_cast<float>(k)});
        d.logprobs.push_back(std::move(lp));
      }
    }
    d.finish = count < max ? FinishReason::kStop : FinishReason::kLength;
    d.stop_token = count < max;
    item.samples.push_back(std::move(d));
  }
  if (r.pool) {
    for (std::int32_t i = 0; i < hidden_size_; ++i) {
      const TokenId t = r.prompt[static_cast<std::size_t>(i) % r.prompt.size()];
      item.pooled.push_back(static_cast<float>(t % 17) - 8.0F + 0.25F * static_cast<float>(i));
    }
  }
  auto channel = std::make_shared<engine::OutputChannel>();
  channel->push(std::move(item));
  return channel;
}

}  // namespace folio::fuzz
