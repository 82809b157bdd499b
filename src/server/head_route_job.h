// server/head_route_job.h: starting a routed request's job, and routing that
// waits for a virtual model's learned head.
//
// start_routed() turns a RoutedRequest into its job: a CascadeJob when the
// virtual model cascades and the small model was picked, else a
// GenerationJob (with the route headers).
//
// HeadRouteJob is a request to a virtual model whose policy has a learned
// head (route/learned_head.h): it first pools the prompt on the small model
// (server/pooling_run.h; those blocks then serve a small answer from the
// prefix cache), scores it with the head, decides (finish_route) and starts
// the chosen job, which it then drives. Its head waits for that decision.
// If the pooling fails, the feature score alone decides (logged). An error
// after the decision (the large model refuses the request) is the reply.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "server/job.h"
#include "server/model_routing.h"
#include "server/pooling_run.h"

namespace folio::server {

// Submits the job; throws ApiError as GenerationJob::submit.
std::unique_ptr<Job> start_routed(ServerContext& ctx, ApiKind kind, const nlohmann::json& body,
                                  const nlohmann::ordered_json& ordered, RoutedRequest routed);

class HeadRouteJob final : public Job {
 public:
  HeadRouteJob(ServerContext& ctx, ApiKind kind, nlohmann::json body,
               nlohmann::ordered_json ordered, PendingRoute pending);

  void submit();  // the pooling run on the small model; throws ApiError
  void attach(const std::function<void()>& notify) override;
  JobOutput poll() override;
  void cancel() override;
  bool streaming() const override { return stream_; }
  HeaderList headers() const override { return inner_ ? inner_->headers() : HeaderList{}; }
  bool head_ready() const override { return inner_ && inner_->head_ready(); }

 private:
  std::optional<double> head_score();

  ServerContext& ctx_;
  ApiKind kind_;
  nlohmann::json body_;
  nlohmann::ordered_json ordered_;
  std::optional<PendingRoute> pending_;
  bool stream_ = false;
  std::function<void()> notify_;
  std::unique_ptr<PoolingRun> run_;
  std::unique_ptr<Job> inner_;  // set once decided
  bool failed_ = false;
};

}  // namespace folio::server
