#include "spec/speculative_config.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"

namespace folio::spec {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  throw Error("--speculative-config: " + what);
}

std::int32_t int_in(const json& v, const char* key, std::int32_t lo, std::int32_t hi) {
  if (!v.is_number_integer())
    fail(std::string("\"") + key + "\" must be an integer, got " + v.dump());
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi) {
    fail(std::string("\"") + key + "\" must be in [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "], got " + std::to_string(x));
  }
  return static_cast<std::int32_t>(x);
}

// A round of j drafts at per-token `acceptance`: the tokens it yields beyond
// the step's own (acceptance + acceptance^2 + ... + acceptance^j) and what
// it costs in target steps (j rows and drafts, and the spare forwards).
double round_gain(double acceptance, std::int32_t j) {
  double gain = 0, p = 1;
  for (std::int32_t i = 0; i < j; ++i) {
    p *= acceptance;
    gain += p;
  }
  return gain;
}

double round_cost(std::int32_t j, DraftCosts costs, double spare) {
  return j * (costs.row + costs.draft) + spare * costs.draft;
}

// "0.3", "0.02", "2": a number as a user would write it.
std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

double number_in(const json& v, const char* key, double lo, double hi) {
  if (!v.is_number()) fail(std::string("\"") + key + "\" must be a number, got " + v.dump());
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) {
    fail(std::string("\"") + key + "\" must be in [" + number_text(lo) + ", " + number_text(hi) +
         "], got " + v.dump());
  }
  return x;
}

std::string string_of(const json& v, const char* key) {
  if (!v.is_string()) fail(std::string("\"") + key + "\" must be a string, got " + v.dump());
  return v.get<std::string>();
}

constexpr const char* kImplemented = "(implemented: \"ngram\", \"draft_model\", \"layer_skip\")";

SpecMethod method_of(const std::string& m) {
  if (m == "ngram" || m == "[ngram]") return SpecMethod::kNgram;
  if (m == "layer_skip") return SpecMethod::kLayerSkip;
  if (m == "draft_model") return SpecMethod::kDraftModel;
  if (m == "eagle" || m == "eagle3" || m == "medusa" || m == "mtp")
    fail("method \"" + m + "\" is not implemented in folio yet " + kImplemented);
  fail("unknown method \"" + m + "\" " + kImplemented);
}

}  // namespace

const char* spec_method_name(SpecMethod m) {
  switch (m) {
    case SpecMethod::kNone:
      return "off";
    case SpecMethod::kNgram:
      return "ngram";
    case SpecMethod::kDraftModel:
      return "draft_model";
    case SpecMethod::kLayerSkip:
      return "layer_skip";
  }
  return "?";
}

std::int32_t default_draft_layers(std::int32_t n_layer) {
  return std::max(1, n_layer * 4 / 5);
}

std::vector<std::size_t> draft_layer_list(const SpeculativeConfig& c, std::int32_t n_layer) {
  const std::int32_t n = c.num_layers > 0 ? c.num_layers : default_draft_layers(n_layer);
  if (n < 1 || n > n_layer) {
    fail("\"num_layers\" must be in [1, " + std::to_string(n_layer) + "] for this " +
         std::to_string(n_layer) + "-layer model, got " + std::to_string(n));
  }
  std::vector<std::size_t> out;
  const std::int32_t head = c.layer_selection == "first" ? n : (n + 1) / 2;
  for (std::int32_t l = 0; l < head; ++l) out.push_back(static_cast<std::size_t>(l));
  for (std::int32_t l = n_layer - (n - head); l < n_layer; ++l)
    out.push_back(static_cast<std::size_t>(l));
  return out;
}

std::string SpeculativeConfig::describe() const {
  if (!enabled()) return "off";
  std::string s =
      std::string(spec_method_name(method)) + " k=" + std::to_string(num_speculative_tokens);
  if (method == SpecMethod::kNgram) {
    s += " lookup=[" + std::to_string(prompt_lookup_min) + "," + std::to_string(prompt_lookup_max) +
         "]";
  }
  char p_min[16];
  std::snprintf(p_min, sizeof p_min, "%.2f", static_cast<double>(draft_p_min));
  if (method == SpecMethod::kLayerSkip) {
    s += " layers=" + (num_layers > 0 ? std::to_string(num_layers) : std::string("default")) +
         " (" + layer_selection + ") p_min=" + p_min;
  }
  if (method == SpecMethod::kDraftModel) s += " model=" + draft_model + " p_min=" + p_min;
  if (drafts_with_model() && draft_cost >= 0) {
    char cost[16];
    std::snprintf(cost, sizeof cost, "%.2f", static_cast<double>(draft_cost));
    s += std::string(" cost=") + cost;
    if (!draft_cost_pinned && adaptive) s += " until measured";
  }
  s += " max_batch_rows=" + std::to_string(max_batch_rows);
  s += adaptive ? " adaptive" : " fixed-k";
  if (adaptive && row_cost >= 0) s += " row_cost=" + number_text(row_cost);
  if (disable_by_batch_size > 0)
    s += " disable_by_batch_size=" + std::to_string(disable_by_batch_size);
  return s;
}

std::int32_t draft_tokens_per_request(const SpeculativeConfig& c, std::int32_t num_running) {
  if (!c.enabled() || num_running < 1) return 0;
  if (c.disable_by_batch_size > 0 && num_running >= c.disable_by_batch_size) return 0;
  if (c.max_batch_rows <= 0) return c.num_speculative_tokens;
  const std::int32_t k = c.max_batch_rows / num_running - 1;
  return std::clamp(k, 0, c.num_speculative_tokens);
}

std::int32_t adaptive_draft_length(double acceptance, std::int32_t k, DraftCosts costs) {
  std::int32_t j = 0;
  double worth = 1;
  while (j < k) {
    worth *= acceptance;
    if (worth < costs.row + costs.draft) break;
    ++j;
  }
  return j;
}

void AcceptanceEstimate::observe(std::int32_t drafts, std::int32_t num_accepted) {
  if (drafts < 1) return;
  const std::int32_t num_judged = num_accepted < drafts ? num_accepted + 1 : drafts;
  accepted = (1 - kWeight) * accepted + num_accepted;
  judged = (1 - kWeight) * judged + num_judged;
}

bool round_pays(double acceptance, std::int32_t j, DraftCosts costs, double spare) {
  return round_gain(acceptance, j) > round_cost(j, costs, spare);
}

bool probe_pays(std::int32_t k, DraftCosts costs, double spare, std::int32_t idle) {
  const double catch_up = 1 + std::max(0, idle - 1) * costs.row;
  return costs.draft <= 0 || round_pays(1.0, k, costs, spare + catch_up);
}

bool catch_up_pays(double acceptance, std::int32_t j, DraftCosts costs, double spare,
                   std::int32_t lag, std::int32_t remaining, std::int32_t running) {
  if (lag <= 1 || costs.draft <= 0) return true;
  const double saved = std::max(0, remaining) *
                       (1 - (1 + round_cost(j, costs, spare)) / (1 + round_gain(acceptance, j)));
  const double catch_up = (1 + (lag - 1) * costs.row) * costs.draft * std::max(1, running);
  return saved > catch_up;
}

void AcceptanceEstimate::observe_forwards(std::int32_t forwards, std::int32_t drafts) {
  if (forwards < 1) return;
  spare = (1 - kWeight) * spare + kWeight * std::max(0, forwards - drafts);
}

std::int32_t AcceptanceEstimate::draft_length(std::int32_t k, DraftCosts costs) {
  std::int32_t j = adaptive_draft_length(value(), k, costs);
  if (j > 0 && costs.draft > 0 && !round_pays(value(), j, costs, spare)) j = 0;
  if (j > 0 || k < 1) {
    idle_steps = 0;
    return j;
  }
  if (++idle_steps < kProbeEvery || !probe_pays(k, costs, spare, kProbeEvery)) return 0;
  idle_steps = 0;
  // A probe: one token when drafts are free; a model drafter's, the round
  // probe_pays judged (its catch-up is paid either way, and k judged tokens
  // tell more than one).
  return costs.draft > 0 ? k : 1;
}

SpeculativeConfig parse_speculative_config(const std::string& text) {
  SpeculativeConfig c;
  if (text.empty()) return c;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // syntax, or a number too large for a double
    fail(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail("expected a JSON object, got " + j.dump());

  std::optional<std::string> method, model;
  std::optional<std::int32_t> k, lookup_min, lookup_max;
  for (const auto& [key, v] : j.items()) {
    if (key == "method") {
      method = string_of(v, "method");
    } else if (key == "model") {
      model = v.is_null() ? std::string() : string_of(v, "model");
    } else if (key == "num_speculative_tokens") {
      k = int_in(v, "num_speculative_tokens", 1, kMaxSpeculativeTokens);
    } else if (key == "prompt_lookup_min") {
      lookup_min = int_in(v, "prompt_lookup_min", 1, kMaxPromptLookup);
    } else if (key == "prompt_lookup_max") {
      lookup_max = int_in(v, "prompt_lookup_max", 1, kMaxPromptLookup);
    } else if (key == "num_layers") {
      c.num_layers = int_in(v, "num_layers", 1, 1 << 16);
    } else if (key == "draft_p_min") {
      c.draft_p_min = static_cast<float>(number_in(v, "draft_p_min", 0, 1));
    } else if (key == "draft_cost") {
      c.draft_cost = static_cast<float>(number_in(v, "draft_cost", 0, 4));
      c.draft_cost_pinned = true;
    } else if (key == "layer_selection") {
      c.layer_selection = string_of(v, "layer_selection");
      if (c.layer_selection != "first" && c.layer_selection != "ends")
        fail("\"layer_selection\" must be \"first\" or \"ends\", got \"" + c.layer_selection +
             "\"");
    } else if (key == "disable_by_batch_size") {
      c.disable_by_batch_size = int_in(v, "disable_by_batch_size", 0, 1 << 20);
    } else if (key == "adaptive") {
      if (!v.is_boolean()) fail("\"adaptive\" must be true or false, got " + v.dump());
      c.adaptive = v.get<bool>();
    } else if (key == "row_cost") {
      c.row_cost = static_cast<float>(
          number_in(v, "row_cost", RowCostEstimate::kMinCost, RowCostEstimate::kMaxCost));
    } else if (key == "max_batch_rows") {
      c.max_batch_rows = int_in(v, "max_batch_rows", 0, 1 << 20);
    } else {
      fail("unknown key \"" + key +
           "\" (known: method, model, num_speculative_tokens, prompt_lookup_min, "
           "prompt_lookup_max, num_layers, layer_selection, draft_p_min, draft_cost, "
           "adaptive, row_cost, disable_by_batch_size, max_batch_rows)");
    }
  }
  // vLLM's older spelling: {"model": "ngram"} without a method.
  if (!method && model && (*model == "ngram" || *model == "[ngram]")) method = *model;
  if (!method) fail(std::string("\"method\" is required ") + kImplemented);
  c.method = method_of(*method);
  const bool ngram = c.method == SpecMethod::kNgram;
  if (!ngram && (lookup_min || lookup_max))
    fail("\"prompt_lookup_min\" / \"prompt_lookup_max\" are for method \"ngram\"");
  if (c.method != SpecMethod::kLayerSkip && (c.num_layers != 0 || j.contains("layer_selection")))
    fail("\"num_layers\" / \"layer_selection\" are for method \"layer_skip\"");
  if (!c.drafts_with_model() && (j.contains("draft_p_min") || j.contains("draft_cost")))
    fail("\"draft_p_min\" / \"draft_cost\" are for methods \"layer_skip\" and \"draft_model\"");
  if (!c.adaptive && j.contains("row_cost"))
    fail("\"row_cost\" is what the adaptive rule charges; \"adaptive\": false has no use for it");
  if (c.method == SpecMethod::kDraftModel) {
    if (!model || model->empty())
      fail("method \"draft_model\" needs \"model\": the draft GGUF's path");
    c.draft_model = *model;
  } else if (model && !model->empty() && *model != "ngram" && *model != "[ngram]") {
    fail("\"model\" is not used by method \"" + *method + "\"");
  }
  if (!k) fail("\"num_speculative_tokens\" is required");
  c.num_speculative_tokens = *k;
  if (!ngram) return c;
  if (!lookup_min && !lookup_max) {
    lookup_min = lookup_max = 5;  // vLLM's defaults
  } else if (!lookup_min) {
    lookup_min = lookup_max;
  } else if (!lookup_max) {
    lookup_max = lookup_min;
  }
  if (*lookup_min > *lookup_max) {
    fail("\"prompt_lookup_min\" (" + std::to_string(*lookup_min) +
         ") must be <= \"prompt_lookup_max\" (" + std::to_string(*lookup_max) + ")");
  }
  c.prompt_lookup_min = *lookup_min;
  c.prompt_lookup_max = *lookup_max;
  return c;
}

}  // namespace folio::spec
