// tests/engine/engine_spec_test.cpp: speculative decoding in the engine core,
// with no model (tests/engine/fake_model_runner.h) and test proposers.
//
// Greedy: with drafts that are right most of the time and wrong the rest,
// outputs are token-identical to decoding without drafts, batched, under
// preemption, with n > 1, stop tokens and max_tokens inside an accepted run,
// penalties and logprobs. Sampled: the tokens of thousands of seeded
// requests are distributed the same with and without drafts (a two-sample
// chi-square over position x token class), and the same test tells a
// different temperature apart, so it has the power to fail.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "engine/llm_engine.h"
#include "fake_model_runner.h"

namespace folio::engine::testing {
namespace {

EngineConfig config(std::int32_t blocks, std::int32_t k) {
  EngineConfig c;
  c.max_model_len = 128;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = 32;
  c.block_size = 4;
  c.kv_cache_memory = std::int64_t{blocks} * 4000;
  if (k > 0) {
    c.speculative.method = spec::SpecMethod::kNgram;  // any method: the proposer is the test's
    c.speculative.num_speculative_tokens = k;
    c.speculative.max_batch_rows = 0;
  }
  return c;
}

// Proposes the continuation of a known output (recorded without drafts),
// corrupting each draft token with probability `wrong`.
class ReplayProposer final : public spec::Proposer {
 public:
  // Each draft token is wrong with probability `wrong`, and always below
  // position `right_from`.
  ReplayProposer(std::vector<std::vector<TokenId>> known, double wrong, std::uint64_t seed,
                 std::size_t right_from = 0)
      : known_(std::move(known)), wrong_(wrong), right_from_(right_from), rng_(seed) {}
  const char* name() const override { return "replay"; }
  void propose(std::span<spec::DraftQuery> queries) override {
    for (spec::DraftQuery& q : queries) {
      q.draft.clear();
      for (const auto& full : known_) {
        if (full.size() <= q.tokens.size() ||
            !std::equal(q.tokens.begin(), q.tokens.end(), full.begin()))
          continue;
        for (std::size_t i = q.tokens.size();
             i < full.size() && q.draft.size() < static_cast<std::size_t>(q.max_tokens); ++i) {
          TokenId t = full[i];
          if (i < right_from_ || std::uniform_real_distribution<double>(0, 1)(rng_) < wrong_)
            t = t % 500 + 1;
          q.draft.push_back(t);
        }
        break;
      }
      ++calls;
    }
  }
  void release(std::uint64_t) override { ++released; }
  int calls = 0, released = 0;

 private:
  std::vector<std::vector<TokenId>> known_;
  double wrong_;
  std::size_t right_from_;
  std::mt19937_64 rng_;
};

// Proposes the fake model's peak token after the sequence (right when the
// sampler draws the peak) or a fixed wrong token, alternating by position.
class PeakProposer final : public spec::Proposer {
 public:
  const char* name() const override { return "peak"; }
  void propose(std::span<spec::DraftQuery> queries) override {
    for (spec::DraftQuery& q : queries) {
      std::vector<TokenId> h(q.tokens.begin(), q.tokens.end());
      q.draft.clear();
      for (std::int32_t i = 0; i < q.max_tokens; ++i) {
        const TokenId t = (h.size() % 3 == 2) ? 17 : fake_next(h);
        q.draft.push_back(t);
        h.push_back(t);
      }
    }
  }
  void release(std::uint64_t) override {}
};

struct Job {
  std::vector<TokenId> prompt;
  sampling::SamplingParams params;
  std::int32_t n = 1;
};

struct Result {
  std::vector<std::vector<TokenId>> tokens;  // per sample
  std::vector<std::vector<sampling::Logprobs>> logprobs;
  std::vector<FinishReason> finish;
};

// Job i as request id i + 1.
EngineRequest request(const std::vector<Job>& jobs, std::size_t i) {
  EngineRequest r;
  r.id = RequestId{i + 1};
  r.prompt = jobs[i].prompt;
  r.params = jobs[i].params;
  r.n = jobs[i].n;
  return r;
}

std::vector<Result> run(const std::vector<Job>& jobs, const EngineConfig& cfg,
                        std::unique_ptr<spec::Proposer> proposer = nullptr,
                        EngineStats* stats = nullptr) {
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, cfg, std::move(proposer));
  std::vector<std::shared_ptr<OutputChannel>> chans;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    chans.push_back(engine.add_request(request(jobs, i)));
    if (i % 3 == 2) engine.step();  // arrivals join running decodes
  }
  engine.run_until_idle();
  EXPECT_TRUE(runner.errors().empty()) << runner.errors().front();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  if (stats) *stats = engine.stats();
  std::vector<Result> out(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Result& res = out[i];
    const auto n = static_cast<std::size_t>(jobs[i].n);
    res.tokens.resize(n);
    res.logprobs.resize(n);
    res.finish.resize(n, FinishReason::kNone);
    for (const RequestOutput& o : chans[i]->drain()) {
      for (const SampleDelta& d : o.samples) {
        const auto k = static_cast<std::size_t>(d.index);
        res.tokens[k].insert(res.tokens[k].end(), d.token_ids.begin(), d.token_ids.end());
        res.logprobs[k].insert(res.logprobs[k].end(), d.logprobs.begin(), d.logprobs.end());
        if (d.finish != FinishReason::kNone) res.finish[k] = d.finish;
      }
    }
  }
  return out;
}

// n greedy requests with prompts {first + i, 9, 27} and max_tokens[i % size]
// outputs each (eos ignored): the row-, draft-cost and catch-up tests.
std::vector<Job> long_jobs(int n, std::vector<std::int32_t> max_tokens, TokenId first = 3) {
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) {
    Job j;
    j.prompt = {static_cast<TokenId>(first + i), 9, 27};
    j.params.temperature = 0;
    j.params.max_tokens = max_tokens[static_cast<std::size_t>(i) % max_tokens.size()];
    j.params.ignore_eos = true;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// Every token a request's channel delivered (one sample).
std::vector<TokenId> drained_tokens(OutputChannel& ch) {
  std::vector<TokenId> got;
  for (const RequestOutput& out : ch.drain())
    for (const SampleDelta& d : out.samples)
      got.insert(got.end(), d.token_ids.begin(), d.token_ids.end());
  return got;
}

std::vector<Job> greedy_jobs() {
  std::mt19937 rng(5);
  std::vector<Job> jobs;
  for (int i = 0; i < 24; ++i) {
    Job j;
    const int len = 3 + static_cast<int>(rng() % 20);
    for (int t = 0; t < len; ++t)
      j.prompt.push_back(1 + static_cast<TokenId>(rng() % (kFakeVocab - 2)));
    j.params.temperature = 0;
    j.params.max_tokens = 5 + static_cast<std::int32_t>(rng() % 30);
    j.params.ignore_eos = true;
    if (i % 5 == 1) j.n = 2;
    if (i % 4 == 3) j.params.logprobs = 2;
    if (i % 6 == 2) {  // penalties change which token wins
      j.params.frequency_penalty = 2.0f;
      j.params.presence_penalty = 1.5f;
      j.params.repetition_penalty = 1.3f;
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<std::vector<TokenId>> known(const std::vector<Job>& jobs,
                                        const std::vector<Result>& ref) {
  std::vector<std::vector<TokenId>> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    for (const auto& t : ref[i].tokens) {
      auto full = jobs[i].prompt;
      full.insert(full.end(), t.begin(), t.end());
      out.push_back(std::move(full));
    }
  }
  return out;
}

void expect_same(const std::vector<Result>& a, const std::vector<Result>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens) << "request " << i;
    EXPECT_EQ(a[i].finish, b[i].finish) << "request " << i;
    ASSERT_EQ(a[i].logprobs.size(), b[i].logprobs.size());
    for (std::size_t k = 0; k < a[i].logprobs.size(); ++k) {
      ASSERT_EQ(a[i].logprobs[k].size(), b[i].logprobs[k].size()) << "request " << i;
      for (std::size_t t = 0; t < a[i].logprobs[k].size(); ++t) {
        EXPECT_EQ(a[i].logprobs[k][t].chosen.id, b[i].logprobs[k][t].chosen.id);
        EXPECT_EQ(a[i].logprobs[k][t].chosen.logprob, b[i].logprobs[k][t].chosen.logprob);
        EXPECT_EQ(a[i].logprobs[k][t].top.size(), b[i].logprobs[k][t].top.size());
      }
    }
  }
}

TEST(EngineSpec, GreedyOutputsAreIdenticalWithDrafts) {
  const auto jobs = greedy_jobs();
  const auto ref = run(jobs, config(256, 0));
  for (double wrong : {0.0, 0.2, 0.6, 1.0}) {
    for (std::int32_t k : {1, 3, 7}) {
      EngineStats st;
      auto p = std::make_unique<ReplayProposer>(known(jobs, ref), wrong, 11);
      EngineConfig c = config(256, k);
      c.speculative.adaptive = k != 3;  // a fixed K too
      const auto got = run(jobs, c, std::move(p), &st);
      SCOPED_TRACE("wrong " + std::to_string(wrong) + " k " + std::to_string(k));
      expect_same(ref, got);
      EXPECT_GT(st.spec_num_drafts, 0u);
      EXPECT_LE(st.spec_num_accepted_tokens, st.spec_num_draft_tokens);
      std::uint64_t per_pos = 0;
      ASSERT_EQ(st.spec_accepted_per_pos.size(), static_cast<std::size_t>(k));
      for (std::size_t i = 0; i < st.spec_accepted_per_pos.size(); ++i) {
        per_pos += st.spec_accepted_per_pos[i];
        if (i > 0) {
          EXPECT_LE(st.spec_accepted_per_pos[i], st.spec_accepted_per_pos[i - 1]);
        }
      }
      EXPECT_EQ(per_pos, st.spec_num_accepted_tokens);
      if (wrong == 0.0) {
        EXPECT_GT(st.spec_num_accepted_tokens, st.spec_num_draft_tokens / 2);
      }
      if (wrong == 1.0) {
        EXPECT_EQ(st.spec_num_accepted_tokens, 0u);
      }
      // Fewer steps than tokens when drafts are right.
      if (wrong == 0.0 && k == 7) {
        EXPECT_LT(st.num_steps, st.num_generated_tokens / 2);
      }
    }
  }
}

TEST(EngineSpec, GreedyIdenticalUnderPreemption) {
  const auto jobs = greedy_jobs();
  const auto ref = run(jobs, config(40, 0));
  EngineStats st;
  const auto got =
      run(jobs, config(40, 4), std::make_unique<ReplayProposer>(known(jobs, ref), 0.3, 2), &st);
  expect_same(ref, got);
  EXPECT_GT(st.num_preemptions, 0);
}

TEST(EngineSpec, StopTokensInsideAnAcceptedRunEndTheOutputThere) {
  auto jobs = greedy_jobs();
  const auto free_run = run(jobs, config(256, 0));
  // Each request stops at the token its free run produced fourth.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (free_run[i].tokens[0].size() > 4)
      jobs[i].params.stop_token_ids = {free_run[i].tokens[0][3]};
  }
  const auto ref = run(jobs, config(256, 0));
  const auto got =
      run(jobs, config(256, 6), std::make_unique<ReplayProposer>(known(jobs, free_run), 0.0, 3));
  expect_same(ref, got);
  int stopped = 0;
  for (const Result& r : got) stopped += r.finish[0] == FinishReason::kStop ? 1 : 0;
  EXPECT_GT(stopped, 10);
}

TEST(EngineSpec, ProposerStateIsReleasedWithEachSequence) {
  const auto jobs = greedy_jobs();
  const auto ref = run(jobs, config(256, 0));
  auto p = std::make_unique<ReplayProposer>(known(jobs, ref), 0.1, 4);
  ReplayProposer* raw = p.get();
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, config(256, 3), std::move(p));
  std::size_t seqs = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    engine.add_request(request(jobs, i));
    seqs += static_cast<std::size_t>(jobs[i].n);
  }
  engine.run_until_idle();
  EXPECT_GT(raw->calls, 0);
  EXPECT_EQ(static_cast<std::size_t>(raw->released), seqs);
}

// Seeded sampling at temperature 1: the fake model puts ~78% on its peak
// token. Class of an output token: 0 = the peak, else 1 + id % 5.
std::map<std::pair<int, int>, int> classes(const std::vector<Job>& jobs,
                                           const std::vector<Result>& res) {
  std::map<std::pair<int, int>, int> cells;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<TokenId> h = jobs[i].prompt;
    const auto& t = res[i].tokens[0];
    for (std::size_t j = 0; j < t.size(); ++j) {
      const int c = t[j] == fake_next(h) ? 0 : 1 + t[j] % 5;
      ++cells[{static_cast<int>(j), c}];
      h.push_back(t[j]);
    }
  }
  return cells;
}

// Two-sample chi-square statistic (homogeneity) and its degrees of freedom.
std::pair<double, int> two_sample(const std::map<std::pair<int, int>, int>& a,
                                  const std::map<std::pair<int, int>, int>& b) {
  std::map<std::pair<int, int>, std::pair<double, double>> cells;
  double na = 0, nb = 0;
  for (const auto& [k, v] : a) {
    cells[k].first += v;
    na += v;
  }
  for (const auto& [k, v] : b) {
    cells[k].second += v;
    nb += v;
  }
  double x2 = 0;
  int df = 0;
  for (const auto& [k, v] : cells) {
    const double tot = v.first + v.second;
    if (tot < 10) continue;  // too sparse for the approximation
    const double ea = tot * na / (na + nb), eb = tot * nb / (na + nb);
    x2 += (v.first - ea) * (v.first - ea) / ea + (v.second - eb) * (v.second - eb) / eb;
    ++df;
  }
  return {x2, df - 1};
}

// Upper 0.999 quantile of chi-square with df degrees of freedom
// (Wilson-Hilferty).
double critical(int df) {
  const double z = 3.09, d = df;
  return d * std::pow(1 - 2 / (9 * d) + z * std::sqrt(2 / (9 * d)), 3);
}

std::vector<Job> sampled_jobs(int count, float temperature) {
  std::vector<Job> jobs;
  for (int i = 0; i < count; ++i) {
    Job j;
    j.prompt = {static_cast<TokenId>(1 + i % 300), static_cast<TokenId>(2 + i % 7)};
    j.params.temperature = temperature;
    j.params.seed = static_cast<std::uint64_t>(1000 + i);
    j.params.max_tokens = 5;
    j.params.ignore_eos = true;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

TEST(EngineSpec, SampledTokensAreDistributedAsWithoutDrafts) {
  const int count = 3000;
  const auto jobs = sampled_jobs(count, 1.0f);
  const auto plain = classes(jobs, run(jobs, config(1024, 0)));
  EngineStats st;
  const auto spec =
      classes(jobs, run(jobs, config(1024, 3), std::make_unique<PeakProposer>(), &st));
  const auto [x2, df] = two_sample(plain, spec);
  EXPECT_LT(x2, critical(df)) << "df " << df;
  // Drafts were both accepted and rejected, so both paths of the rule ran.
  EXPECT_GT(st.spec_num_accepted_tokens, st.spec_num_draft_tokens / 4);
  EXPECT_LT(st.spec_num_accepted_tokens, st.spec_num_draft_tokens);
  // The control: the same test tells temperature 1.0 from 1.25.
  const auto warmer = sampled_jobs(count, 1.25f);
  const auto other = classes(warmer, run(warmer, config(1024, 0)));
  const auto [y2, dfy] = two_sample(plain, other);
  EXPECT_GT(y2, critical(dfy)) << "df " << dfy;
}

// A model drafter (layer_skip's path): the scheduler reserves lookahead
// slots, the runner drafts into them after each step, and greedy outputs
// stay those of plain decoding, batched, under preemption and with n = 2.
TEST(EngineSpec, RunnerDraftsUseLookaheadSlotsAndStayLossless) {
  const auto jobs = greedy_jobs();
  for (std::int32_t blocks : {256, 40}) {
    const auto ref = run(jobs, config(blocks, 0));
    EngineConfig c = config(blocks, 3);
    c.speculative.method = spec::SpecMethod::kLayerSkip;  // drafts with the runner
    EngineStats st;
    const auto got = run(jobs, c, nullptr, &st);
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    expect_same(ref, got);
    EXPECT_GT(st.spec_num_accepted_tokens, st.spec_num_draft_tokens / 4);
    EXPECT_LT(st.spec_num_accepted_tokens, st.spec_num_draft_tokens);
    if (blocks == 40) {
      EXPECT_GT(st.num_preemptions, 0);
    }
  }
}

// A drafter that costs most of a step per token (draft_cost 0.8: a draft
// is worth acceptance^j >= 1.1, never) is never run: not even a probe;
// with draft_cost 0.1 it drafts as a free one does. Outputs stay the same.
TEST(EngineSpec, ACostlyDrafterIsNeverRun) {
  const auto jobs = greedy_jobs();
  const auto ref = run(jobs, config(256, 0));
  EngineConfig c = config(256, 3);
  c.speculative.method = spec::SpecMethod::kLayerSkip;
  c.speculative.draft_cost = 0.1f;
  EngineStats cheap;
  expect_same(ref, run(jobs, c, nullptr, &cheap));
  EXPECT_GT(cheap.spec_num_drafts, 20u);
  c.speculative.draft_cost = 0.8f;
  EngineStats costly;
  expect_same(ref, run(jobs, c, nullptr, &costly));
  EXPECT_EQ(costly.spec_num_drafts, 0u);
}

// The adaptive rule charges a verification row what it costs on the
// machine, measured from the runner's forward times of one-sequence steps:
// drafts that are right a third of the time (first-draft acceptance about
// 0.3) pay where a row costs 0.05 of a step and do not where it costs 0.9.
// Requests run one at a time; outputs stay the same either way.
TEST(EngineSpec, TheRowCostIsMeasuredAndDecidesTheDraftLength) {
  const std::vector<Job> jobs = long_jobs(4, {100});
  const auto ref = run(jobs, config(256, 0));
  struct Outcome {
    EngineStats stats;
    std::vector<std::vector<TokenId>> tokens;
  };
  const auto one_at_a_time = [&](double per_row) {
    FakeModelRunner runner;
    runner.set_step_seconds(0.004, per_row);
    EngineConfig c = config(256, 4);
    LLMEngine engine(runner, {kFakeVocab - 1}, c,
                     std::make_unique<ReplayProposer>(known(jobs, ref), 0.7, 11));
    Outcome o;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      auto ch = engine.add_request(request(jobs, i));
      engine.run_until_idle();
      o.tokens.push_back(drained_tokens(*ch));
    }
    o.stats = engine.stats();
    return o;
  };
  const Outcome cheap = one_at_a_time(0.05), dear = one_at_a_time(0.9);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(cheap.tokens[i], ref[i].tokens[0]) << i;
    EXPECT_EQ(dear.tokens[i], ref[i].tokens[0]) << i;
  }
  EXPECT_NEAR(cheap.stats.spec_row_cost, 0.05, 0.03);
  EXPECT_NEAR(dear.stats.spec_row_cost, 0.9, 0.1);
  EXPECT_GT(cheap.stats.spec_num_draft_tokens, 3 * dear.stats.spec_num_draft_tokens);
  EXPECT_GT(cheap.stats.spec_num_accepted_tokens, 2 * dear.stats.spec_num_accepted_tokens);
  // Pinned, the measurement is not used: 0.05 drafts as the cheap machine
  // measured, on the dear one.
  FakeModelRunner runner;
  runner.set_step_seconds(0.004, 0.9);
  EngineConfig c = config(256, 4);
  c.speculative.row_cost = 0.05f;
  LLMEngine engine(runner, {kFakeVocab - 1}, c,
                   std::make_unique<ReplayProposer>(known(jobs, ref), 0.7, 11));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    engine.add_request(request(jobs, i));
    engine.run_until_idle();
  }
  EXPECT_FLOAT_EQ(static_cast<float>(engine.stats().spec_row_cost), 0.05f);
  EXPECT_GT(engine.stats().spec_num_draft_tokens, 3 * dear.stats.spec_num_draft_tokens);
}

// A model drafter whose drafts all fail for a while stops drafting, then
// probes every kProbeEvery steps and drafts again once they hold, when it
// is cheap (a third of a step per token, rows at 0.15: a round of four
// accepted would pay for the probe's catch-up); one that costs 0.67 of a
// step never probes. Drafts are wrong for the first 30 outputs of each
// request, then right 9 times in 10 (recovering takes two probes: the
// estimate the misses left needs two rounds of four accepted). Outputs stay
// the same.
TEST(EngineSpec, ACheapModelDrafterProbesAndRecovers) {
  const std::vector<Job> jobs = long_jobs(3, {160}, 5);
  const auto with = [](std::int32_t k) {
    EngineConfig c = config(256, k);
    c.max_model_len = 192;
    return c;
  };
  const auto ref = run(jobs, with(0));
  const auto accepted = [&](float draft_cost) {
    FakeModelRunner runner;
    runner.set_step_seconds(0.004, 0.15);
    EngineConfig c = with(4);
    c.speculative.draft_cost = draft_cost;  // the replay stands in for a model drafter
    LLMEngine engine(runner, {kFakeVocab - 1}, c,
                     std::make_unique<ReplayProposer>(known(jobs, ref), 0.1, 5, 3 + 30));
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      auto ch = engine.add_request(request(jobs, i));
      engine.run_until_idle();
      EXPECT_EQ(drained_tokens(*ch), ref[i].tokens[0]) << i;
    }
    return engine.stats().spec_num_accepted_tokens;
  };
  EXPECT_GT(accepted(0.33f), 3u * 40);  // of the last 130 outputs of each
  EXPECT_EQ(accepted(0.67f), 0u);
}

// The adaptive rule charges a model drafter's forward what it costs on the
// machine, measured from the runner's draft times against its one-row
// steps, not the start-up estimate (here 0.5): a forward at 0.2 of a step
// keeps drafting, one at 0.9 stops; the draft cost is reported. Pinned
// (the "draft_cost" key), the measurement is not used. Outputs stay the
// same.
TEST(EngineSpec, TheDraftCostIsMeasuredAndDecidesWhetherToDraft) {
  const std::vector<Job> jobs = long_jobs(4, {100});
  const auto ref = run(jobs, config(256, 0));
  const auto one_at_a_time = [&](double draft_seconds, bool pinned) {
    FakeModelRunner runner;
    runner.set_step_seconds(0.004, 0.1);
    runner.set_draft_seconds(draft_seconds);
    EngineConfig c = config(256, 3);
    c.speculative.method = spec::SpecMethod::kLayerSkip;  // drafts with the runner
    c.speculative.draft_cost = pinned ? 0.2f : 0.5f;      // as resolved from weight bytes
    c.speculative.draft_cost_pinned = pinned;
    LLMEngine engine(runner, {kFakeVocab - 1}, c);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      auto ch = engine.add_request(request(jobs, i));
      engine.run_until_idle();
      EXPECT_EQ(drained_tokens(*ch), ref[i].tokens[0]) << i;
    }
    return engine.stats();
  };
  const EngineStats cheap = one_at_a_time(0.0008, false), dear = one_at_a_time(0.0036, false);
  EXPECT_NEAR(cheap.spec_draft_cost, 0.2, 0.01);
  EXPECT_NEAR(dear.spec_draft_cost, 0.9, 0.01);
  EXPECT_GT(cheap.spec_num_draft_tokens, 5 * dear.spec_num_draft_tokens);
  EXPECT_GT(cheap.spec_num_accepted_tokens, 100u);
  const EngineStats pinned = one_at_a_time(0.0036, true);
  EXPECT_FLOAT_EQ(static_cast<float>(pinned.spec_draft_cost), 0.2f);
  EXPECT_GT(pinned.spec_num_draft_tokens, 5 * dear.spec_num_draft_tokens);
}

// A draft model's K/V is computed lazily, so a request that ran undrafted
// while the batch was full lacks it for its whole context once the batch is
// small enough to draft. Eight requests at once (no drafts while five or
// more run, max_batch_rows 8): when the four of 90 outputs finish, the four
// of 100 have 10 outputs left, which cannot repay catching up on 93
// positions that all four wait for; they finish undrafted. Forced
// ("adaptive": false) they draft. Outputs stay the same.
TEST(EngineSpec, ADraftModelDoesNotCatchUpLateInABatch) {
  const std::vector<Job> jobs = long_jobs(8, {100, 100, 100, 100, 90, 90, 90, 90});
  const auto ref = run(jobs, config(1024, 0));
  const auto at_once = [&](bool adaptive) {
    FakeModelRunner runner;
    EngineConfig c = config(1024, 4);
    c.speculative.method = spec::SpecMethod::kDraftModel;  // drafts with the runner, own K/V
    c.speculative.draft_cost = 0.1f;
    c.speculative.max_batch_rows = 8;
    c.speculative.adaptive = adaptive;
    LLMEngine engine(runner, {kFakeVocab - 1}, c);
    std::vector<std::shared_ptr<OutputChannel>> chans;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      chans.push_back(engine.add_request(request(jobs, i)));
    engine.run_until_idle();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      EXPECT_EQ(drained_tokens(*chans[i]), ref[i].tokens[0]) << i;
    }
    return engine.stats();
  };
  EXPECT_EQ(at_once(true).spec_num_drafts, 0u);
  EXPECT_GT(at_once(false).spec_num_drafts, 4u);
  // The same requests one at a time catch up on their prompts and draft.
  FakeModelRunner runner;
  EngineConfig c = config(1024, 4);
  c.speculative.method = spec::SpecMethod::kDraftModel;
  c.speculative.draft_cost = 0.1f;
  LLMEngine engine(runner, {kFakeVocab - 1}, c);
  engine.add_request(request(jobs, 0));
  engine.run_until_idle();
  EXPECT_GT(engine.stats().spec_num_drafts, 10u);
}

// catch_up_pays: the prompt's catch-up right after prefill pays, a whole
// context's late in a batch does not.
TEST(EngineSpec, CatchUpPaysOnlyWhereTheRestRepaysIt) {
  const spec::DraftCosts c{.row = 0.15, .draft = 0.3};
  EXPECT_TRUE(spec::catch_up_pays(0.9, 4, c, 0.5, 150, 200, 1));    // a prompt of 150
  EXPECT_FALSE(spec::catch_up_pays(0.9, 4, c, 0.5, 2000, 200, 1));  // a long document, short answer
  EXPECT_FALSE(spec::catch_up_pays(0.9, 1, c, 0.5, 300, 50, 4));    // late, in a batch of 4
  EXPECT_TRUE(spec::catch_up_pays(0.9, 4, c, 0.5, 1, 0, 8));        // nothing to catch up
  EXPECT_TRUE(spec::catch_up_pays(0.0, 4, {.row = 0.9}, 5, 900, 0, 8));  // free drafts
}

TEST(EngineSpec, SeededSamplingWithDraftsIsReproducible) {
  const auto jobs = sampled_jobs(200, 0.8f);
  const auto a = run(jobs, config(1024, 4), std::make_unique<PeakProposer>());
  const auto b = run(jobs, config(1024, 4), std::make_unique<PeakProposer>());
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(a[i].tokens, b[i].tokens);
}

}  // namespace
}  // namespace folio::engine::testing
