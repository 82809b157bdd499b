// python/src/offline_engine.cpp: batch generation for `LLM.generate`.
#include "offline_engine.h"

#include <memory>

#include "base/error.h"

namespace folio::python {

std::vector<Result> OfflineEngine::generate(const std::vector<Request>& requests,
                                            const Poll& poll) {
  const std::lock_guard lock(mu_);
  engine::LLMEngine& core = session_.core();
  struct Live {
    engine::RequestId id;
    std::shared_ptr<engine::OutputChannel> channel;
    std::unique_ptr<engine::OutputProcessor> out;
  };
  std::vector<engine::AdmittedRequest> admitted;
  admitted.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      admitted.push_back(session_.admit(requests[i], engine::RequestId{next_id_ + i}));
    } catch (const Error& e) {
      throw Error("prompt " + std::to_string(i) + ": " + e.what());
    }
  }
  std::vector<Live> live(requests.size());
  std::vector<Result> results(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Live& l = live[i];
    l.id = engine::RequestId{next_id_ + i};
    l.out = session_.output_processor(requests[i]);
    results[i] = make_result(l.out->n());
  }
  next_id_ += requests.size();
  for (std::size_t i = 0; i < requests.size(); ++i)
    live[i].channel = core.add_request(std::move(admitted[i]));

  std::size_t done = 0;
  const auto drain = [&] {
    for (std::size_t i = 0; i < live.size(); ++i) {
      Live& l = live[i];
      if (results[i].finished) continue;
      for (const std::int32_t index : apply(results[i], *l.out, l.channel->drain()))
        core.finish_sample(l.id, index);
      if (results[i].finished) {
        ++done;
      } else if (!results[i].error.empty()) {
        core.abort(l.id);  // a token that could not be rendered: stop the rest
      }
    }
  };
  while (core.has_unfinished()) {
    if (!poll(done, requests.size())) {
      core.abort_all();
      drain();
      return {};
    }
    core.step();
    drain();
  }
  drain();  // finishes pushed by the last step
  poll(done, requests.size());
  return results;
}

}  // namespace folio::python
