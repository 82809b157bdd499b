#include "route/policy_config.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"

namespace folio::route {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& message) {
  throw Error("route policy: " + message);
}

// The number at `key`, in [lo, hi]; `expect` says the range in words.
double number_in(const json& v, const std::string& key, double lo, double hi, const char* expect) {
  if (!v.is_number()) fail("\"" + key + "\" must be " + expect + ", got " + v.dump());
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) fail("\"" + key + "\" must be " + expect + ", got " + v.dump());
  return x;
}

const ScoreTerm* find_term(const std::string& name) {
  for (const ScoreTerm& t : score_terms()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

std::string term_names() {
  std::string names;
  for (const ScoreTerm& t : score_terms())
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

// "weights" or "scales": an object keyed by term name.
void parse_terms(const json& v, const std::string& key, ScoreWeights& w) {
  if (!v.is_object()) fail("\"" + key + "\" must be an object keyed by term, got " + v.dump());
  const bool weights = key == "weights";
  if (weights) {
    for (const ScoreTerm& t : score_terms()) w.*t.weight = 0;  // the whole vector
  }
  for (const auto& [name, x] : v.items()) {
    const ScoreTerm* t = find_term(name);
    const std::string where = key + "." + name;
    if (t == nullptr) fail("unknown key \"" + where + "\" (known terms: " + term_names() + ")");
    if (weights) {
      w.*t->weight = number_in(x, where, 0, std::numeric_limits<double>::max(), "a number >= 0");
    } else {
      w.*t->scale = number_in(x, where, std::numeric_limits<double>::min(),
                              std::numeric_limits<double>::max(), "a number > 0");
    }
  }
  if (weights) {
    bool any = false;
    for (const ScoreTerm& t : score_terms()) any = any || w.*t.weight > 0;
    if (!any) fail("\"weights\" are all 0; at least one must be > 0");
  }
}

std::vector<std::string> parse_keywords(const json& v) {
  if (!v.is_array()) fail("\"keywords\" must be an array of strings, got " + v.dump());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string where = "keywords[" + std::to_string(i) + "]";
    if (!v[i].is_string()) fail("\"" + where + "\" must be a string, got " + v[i].dump());
    const auto& s = v[i].get_ref<const std::string&>();
    if (s.find_first_not_of(" \t\n\r\f\v") == std::string::npos)
      fail("\"" + where + "\" must be a non-blank string, got " + v[i].dump());
    out.push_back(s);
  }
  return out;
}

}  // namespace

PolicyConfig parse_policy_config(const json& j) {
  if (!j.is_object()) fail("expected a JSON object, got " + j.dump());
  PolicyConfig c;
  RoutePolicy& p = c.policy;
  for (const auto& [key, v] : j.items()) {
    if (key == "threshold") {
      p.threshold = number_in(v, key, 0, 1, "a number in [0, 1]");
    } else if (key == "large_share") {
      c.large_share = number_in(v, key, 0, 1, "a number in [0, 1]");
    } else if (key == "weights" || key == "scales") {
      parse_terms(v, key, p.weights);
    } else if (key == "keywords") {
      p.features.keywords = parse_keywords(v);
    } else if (key == "load_wait_bound_s") {
      p.load_wait_bound_s =
          number_in(v, key, 0, std::numeric_limits<double>::max(), "a number of seconds >= 0");
    } else if (key == "load_threshold_raise") {
      p.load_threshold_raise = number_in(v, key, 0, 1, "a number in [0, 1]");
    } else if (key == "head") {
      if (!v.is_string() || v.get_ref<const std::string&>().empty())
        fail("\"head\" must be the path of a head file, got " + v.dump());
      c.head_path = v.get<std::string>();
    } else if (key == "head_weight") {
      p.head_weight = number_in(v, key, 0, 1, "a number in [0, 1]");
    } else {
      fail("unknown key \"" + key +
           "\" (known: threshold, large_share, weights, scales, keywords, load_wait_bound_s, "
           "load_threshold_raise, head, head_weight)");
    }
  }
  if (j.contains("head_weight") && c.head_path.empty())
    fail("\"head_weight\" needs a \"head\" file to weigh");
  if (j.contains("threshold") && c.large_share)
    fail("\"threshold\" and \"large_share\" are mutually exclusive; give one");
  p.weights = normalize_weights(p.weights);
  return c;
}

}  // namespace folio::route
