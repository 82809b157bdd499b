#include "route/score.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "base/error.h"

namespace folio::route {
namespace {

double at_least_zero(std::int32_t x) {
  return std::max(0.0, static_cast<double>(x));
}

const std::array<ScoreTerm, 6> kTerms = {{
    {"prompt_tokens", &ScoreWeights::prompt_tokens, &ScoreWeights::prompt_tokens_scale,
     [](const RouteFeatures& f) { return at_least_zero(f.prompt_tokens); }},
    {"turns", &ScoreWeights::turns, &ScoreWeights::turns_scale,
     [](const RouteFeatures& f) { return std::max(0.0, static_cast<double>(f.turns) - 1); }},
    {"code", &ScoreWeights::code, &ScoreWeights::code_scale,
     [](const RouteFeatures& f) { return at_least_zero(f.code_signals); }},
    {"math", &ScoreWeights::math, &ScoreWeights::math_scale,
     [](const RouteFeatures& f) { return at_least_zero(f.math_signals); }},
    {"keywords", &ScoreWeights::keywords, &ScoreWeights::keywords_scale,
     [](const RouteFeatures& f) { return at_least_zero(f.keyword_hits); }},
    {"max_tokens", &ScoreWeights::max_tokens, &ScoreWeights::max_tokens_scale,
     [](const RouteFeatures& f) { return at_least_zero(f.max_tokens); }},
}};

double weight_sum(const ScoreWeights& w) {
  double sum = 0;
  for (const ScoreTerm& t : kTerms) sum += w.*t.weight;
  return sum;
}

}  // namespace

std::span<const ScoreTerm> score_terms() {
  return kTerms;
}

void validate_weights(const ScoreWeights& w) {
  for (const ScoreTerm& t : kTerms) {
    const double weight = w.*t.weight;
    const double scale = w.*t.scale;
    if (!std::isfinite(weight) || weight < 0)
      throw Error("route score: weight \"" + std::string(t.name) +
                  "\" must be a finite number >= 0, got " + std::to_string(weight));
    if (!std::isfinite(scale) || scale <= 0)
      throw Error("route score: scale \"" + std::string(t.name) +
                  "\" must be a finite number > 0, got " + std::to_string(scale));
  }
  if (weight_sum(w) <= 0) throw Error("route score: all weights are 0; at least one must be > 0");
}

ScoreWeights normalize_weights(ScoreWeights w) {
  validate_weights(w);
  const double sum = weight_sum(w);
  for (const ScoreTerm& t : kTerms) w.*t.weight /= sum;
  return w;
}

double route_score(const RouteFeatures& f, const ScoreWeights& w) {
  validate_weights(w);
  const double sum = weight_sum(w);
  double score = 0;
  for (const ScoreTerm& t : kTerms) {
    // 1 - exp(-x / s), written with expm1 for accuracy near 0.
    score += (w.*t.weight / sum) * -std::expm1(-t.count(f) / (w.*t.scale));
  }
  return std::clamp(score, 0.0, 1.0);  // rounding could leave it an ulp outside
}

}  // namespace folio::route
